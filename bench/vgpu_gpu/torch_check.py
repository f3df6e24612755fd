#!/usr/bin/env python3
"""PyTorch under the interposer: does torch see the limit, and does it get a
clean out-of-memory error there?

Prints one RESULT line (parsed by run.sh) and exits 0; exits 77 when torch or
a CUDA device is missing. The allocator backend comes from the environment
(PYTORCH_CUDA_ALLOC_CONF), so run.sh starts one process per backend.

  torch_check.py --step-mib 256 --cap-mib 5120
"""
import argparse
import os
import sys

MIB = 1 << 20


def result(**kv):
    parts = []
    for k, v in kv.items():
        text = str(v).replace(" ", "_").replace("\n", "_")
        parts.append(f"{k}={text}")
    print("RESULT " + " ".join(parts), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--step-mib", type=int, default=256)
    ap.add_argument("--cap-mib", type=int, default=5120)
    args = ap.parse_args()

    try:
        import torch
    except Exception as e:  # any import failure means "not installed here"
        print(f"torch not importable: {type(e).__name__}: {e}",
              file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("torch sees no CUDA device", file=sys.stderr)
        return 77

    # torch.OutOfMemoryError since 2.5; torch.cuda.OutOfMemoryError before.
    oom_type = getattr(torch, "OutOfMemoryError", None) or getattr(
        torch.cuda, "OutOfMemoryError")
    backend = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "") or "default"

    free_b, total_b = torch.cuda.mem_get_info()
    step = args.step_mib * MIB
    held = []
    stop = "cap"
    detail = "-"
    while len(held) * step + step <= args.cap_mib * MIB:
        try:
            held.append(torch.empty(step, dtype=torch.uint8, device="cuda"))
            # Touch it so that a lazily failing backend fails here, not later.
            held[-1][-1] = 1
            torch.cuda.synchronize()
        except oom_type as e:
            stop = "OutOfMemoryError"
            detail = str(e).splitlines()[0][:160] if str(e) else "-"
            break
        except Exception as e:  # anything else is not a clean OOM
            stop = type(e).__name__
            detail = str(e).splitlines()[0][:160] if str(e) else "-"
            break
    reached = len(held) * step

    # Clean means torch keeps working: the memory comes back (one step is
    # allocatable again) and kernels still run (a sum small enough to be
    # exact in float32).
    recovered = 0
    try:
        held.clear()
        torch.cuda.empty_cache()
        big = torch.empty(step, dtype=torch.uint8, device="cuda")
        big.fill_(1)
        small = torch.ones(1 << 20, dtype=torch.float32, device="cuda")
        recovered = int(small.sum().item() == float(1 << 20))
        del big, small
        torch.cuda.synchronize()
    except Exception as e:
        print(f"recovery failed: {type(e).__name__}: {e}", file=sys.stderr)

    result(backend=backend,
           torch=torch.__version__,
           total_bytes=total_b,
           total_mib=f"{total_b / MIB:.1f}",
           free_mib=f"{free_b / MIB:.1f}",
           step_mib=args.step_mib,
           cap_mib=args.cap_mib,
           reached_mib=reached // MIB,
           stop=stop,
           recovered=recovered,
           detail=detail)
    return 0


if __name__ == "__main__":
    sys.exit(main())
