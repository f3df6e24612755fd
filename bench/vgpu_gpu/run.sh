#!/usr/bin/env bash
# GPU acceptance run for libvgpu.so (issue 7): builds the CUDA programs here
# with nvcc, runs every scenario natively and under LD_PRELOAD in this one
# command, and writes a markdown table of PASS/FAIL per acceptance item with
# the raw numbers. See README.md.
#
#   run.sh <path-to-libvgpu.so> [out-dir] [--full] [--limit-mib N]
#          [--only alloc,info,sm,two,overhead,torch]
#
# Exit: 0 every row PASS (or SKIP), 1 some row FAIL, 2 no FAIL but some row
# INCONCLUSIVE, 77 no nvcc or no GPU, 64 bad usage.
# The section_* functions are called as "section_$s":
# shellcheck disable=SC2317
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() {
  sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 64
}

FULL=0
LIMIT_MIB=4096
ONLY=alloc,info,sm,two,overhead,torch
positional=()
while (($#)); do
  case $1 in
    --full) FULL=1 ;;
    --limit-mib)
      [[ $# -ge 2 ]] || usage
      LIMIT_MIB=$2
      shift
      ;;
    --only)
      [[ $# -ge 2 ]] || usage
      ONLY=$2
      shift
      ;;
    -h | --help) usage ;;
    -*) usage ;;
    *) positional+=("$1") ;;
  esac
  shift
done
[[ ${#positional[@]} -ge 1 && ${#positional[@]} -le 2 ]] || usage
[[ $LIMIT_MIB =~ ^[0-9]+$ && $LIMIT_MIB -ge 1024 ]] || {
  echo "--limit-mib must be an integer >= 1024" >&2
  exit 64
}
[[ -f ${positional[0]} ]] || {
  echo "no such library: ${positional[0]}" >&2
  exit 64
}
LIB=$(realpath "${positional[0]}")
OUT=${positional[1]:-${TMPDIR:-/tmp}/vgpu_gpu_results_$(date +%Y%m%d_%H%M%S)}
mkdir -p "$OUT/raw" "$OUT/bin"
OUT=$(realpath "$OUT")
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT
wants() { [[ ,$ONLY, == *,$1,* ]]; }

skip_all() {
  echo "SKIP: $*" >&2
  exit 77
}

# --- toolchain and GPU ----------------------------------------------------
NVCC=$(command -v nvcc || true)
if [[ -z $NVCC && -x /usr/local/cuda/bin/nvcc ]]; then
  NVCC=/usr/local/cuda/bin/nvcc
fi
[[ -n $NVCC ]] || skip_all "no nvcc on PATH or in /usr/local/cuda/bin"
command -v nvidia-smi >/dev/null || skip_all "no nvidia-smi on PATH"
GPUS=$(nvidia-smi -L 2>&1 || true)
grep -q '^GPU ' <<<"$GPUS" || skip_all "nvidia-smi -L finds no GPU: $GPUS"

# Limits are per visible index; measure on one GPU, index 0 by default.
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
SMI_ID=${CUDA_VISIBLE_DEVICES%%,*}
GPU_INFO=$(nvidia-smi --query-gpu=name,memory.total,driver_version \
  --format=csv,noheader,nounits -i "$SMI_ID")
PHYS_MIB=$(awk -F', *' '{ print int($2); exit }' <<<"$GPU_INFO")

# shellcheck source-path=SCRIPTDIR source=kit.sh
. "$HERE/kit.sh"

echo "== building with $NVCC" >&2
BIN=$OUT/bin
build_one() {
  local p=$1
  if ! "$NVCC" -O2 -std=c++17 -arch=native -o "$BIN/$p" "$HERE/$p.cu" \
    >"$OUT/raw/build_$p.log" 2>&1; then
    # Older nvcc has no -arch=native; the default arch's PTX is JIT-compiled.
    "$NVCC" -O2 -std=c++17 -o "$BIN/$p" "$HERE/$p.cu" \
      >>"$OUT/raw/build_$p.log" 2>&1
  fi
}
pids=()
for p in alloc_paths sm_util overhead; do
  build_one "$p" &
  pids+=($!)
done
for pid in "${pids[@]}"; do
  wait "$pid" || {
    echo "build failed; see $OUT/raw/build_*.log" >&2
    exit 1
  }
done

L=$LIMIT_MIB
CAP=$((L + 1024))
{
  echo "# libvgpu.so on a GPU: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo
  echo "- GPU: $GPU_INFO (name, MiB, driver); CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
  echo "- nvcc: $("$NVCC" --version | tail -n 1)"
  echo "- library: \`$LIB\` sha256 $(sha256sum "$LIB" | cut -c1-16)"
  echo "- memory limit L = $L MiB; native runs are capped at $CAP MiB"
  if [[ -s /etc/ld.so.preload ]]; then
    echo "- WARNING: /etc/ld.so.preload is not empty, so native runs are not native:"
    echo "  \`$(tr '\n' ' ' </etc/ld.so.preload)\`"
  fi
  echo
  echo "| Item | Scenario | Native | Preloaded | Criterion | Verdict |"
  echo "|---|---|---|---|---|---|"
} >"$OUT/header.md"
: >"$TABLE"

# --- memory: allocate until OOM on every path -----------------------------
section_alloc() {
  echo "== allocation paths (L=$L MiB, 64 MiB steps)" >&2
  local p nat pre n_cell p_cell verdict lo=$((L - 600))
  for p in cudaMalloc cudaMallocManaged cudaMallocPitch cudaMalloc3DArray \
    cuMemCreate cudaMallocAsync cudaMallocFromPoolAsync graphMemNode; do
    local args=(--path "$p" --step-mib 64 --cap-mib "$CAP")
    nat=$(capture "alloc_native_$p" 120 run_nat "$BIN/alloc_paths" "${args[@]}")
    pre=$(capture "alloc_pre_$p" 120 run_pre "alloc_$p" "$L" "" \
      "$BIN/alloc_paths" "${args[@]}")
    n_cell="$(kv "$nat" obtained_mib) MiB, stop $(kv "$nat" err)"
    if [[ $(kv "$nat" hit_cap) == 1 ]]; then n_cell+=" (cap)"; fi
    p_cell="$(kv "$pre" obtained_mib) MiB, $(kv "$pre" err) at $(kv "$pre" where) (coarse stop code $(kv "$pre" coarse_code)); free $(kv "$pre" free_at_stop_mib)/$(kv "$pre" total_mib); refill $(kv "$pre" refill_mib); recovered $(kv "$pre" recovered)"
    if broken "$pre"; then
      verdict=$(why_broken "$pre" "alloc_pre_$p")
    elif [[ $(kv "$nat" hit_cap) != 1 ]]; then
      verdict="INCONCLUSIVE (natively stopped below the cap)"
    elif [[ $(kv "$pre" code) == 2 && $(kv "$pre" coarse_code) == 2 ]] && num_ge "$(kv "$pre" obtained_mib)" "$lo" &&
      num_le "$(kv "$pre" obtained_mib)" "$L" && [[ $(kv "$pre" hit_cap) == 0 ]] &&
      [[ $(kv "$pre" recovered) == 1 ]] && num_ge "$(kv "$pre" refill_mib)" "$lo" &&
      num_le "$(kv "$pre" refill_mib)" "$L"; then
      verdict=PASS
    else
      verdict=FAIL
    fi
    row "bytes under L" "$p" "$n_cell" "$p_cell" \
      "L-600 <= got <= L (to 2 MiB); every stop is error 2 (OOM); after freeing, cudaMalloc refills L-600..L" "$verdict"
  done
}

# --- what the process and nvidia-smi report -------------------------------
section_info() {
  echo "== reported memory" >&2
  local nat pre verdict
  nat=$(capture info_native 120 run_nat "$BIN/alloc_paths" --path info --hold-mib 1024)
  pre=$(capture info_pre 120 run_pre info "$L" "" "$BIN/alloc_paths" --path info --hold-mib 1024)
  if broken "$pre"; then
    verdict=$(why_broken "$pre" info_pre)
  elif [[ $(kv "$pre" smi_ok) == 1 ]] && num_eq "$(kv "$pre" smi_total_mib)" "$L"; then
    verdict=PASS
  else
    verdict=FAIL
  fi
  row "nvidia-smi in the process shows L" "1 GiB held, nvidia-smi from popen()" \
    "total $(kv "$nat" smi_total_mib), used $(kv "$nat" smi_used_mib) MiB" \
    "total $(kv "$pre" smi_total_mib), used $(kv "$pre" smi_used_mib) MiB" \
    "memory.total == $L" "$verdict"
  if broken "$pre"; then
    verdict=$(why_broken "$pre" info_pre)
  elif num_eq "$(kv "$pre" total_bytes)" "$((L * 1048576))" &&
    num_le "$(kv "$pre" free1_mib)" "$(calc "$(kv "$pre" total_mib) - $(kv "$pre" held_mib)")"; then
    verdict=PASS
  else
    verdict=FAIL
  fi
  row "cudaMemGetInfo (§9.2)" "before / after holding 1 GiB" \
    "total $(kv "$nat" total_mib), free $(kv "$nat" free0_mib) / $(kv "$nat" free1_mib)" \
    "total $(kv "$pre" total_mib), free $(kv "$pre" free0_mib) / $(kv "$pre" free1_mib)" \
    "total == L; free after <= L - held" "$verdict"
}

# --- SM limiter -----------------------------------------------------------
# One spec: LIMIT KERNEL_US GRID GRAPH_K (GRAPH_K 0: stream launches).
sm_specs() {
  if ((FULL)); then
    local l k g p
    for l in 10 25 50 75; do
      for k in 50 1000 20000; do
        for g in 1 1xSM 8xSM; do
          for p in 0 4; do echo "$l $k $g $p"; done
        done
      done
    done
  else
    # Each limit at least twice, each kernel length with each grid size,
    # and the graph path at a low limit (where HAMi-core leaked 96 %).
    cat <<'EOF'
10 1000 8xSM 0
10 50 1 0
10 20000 1xSM 4
25 50 1xSM 0
25 1000 8xSM 4
50 20000 1 0
50 50 8xSM 0
75 1000 1xSM 0
75 20000 8xSM 0
EOF
  fi
}

section_sm() {
  echo "== SM limiter (busy time in 1 s windows after 2 s)" >&2
  local specs limit k g gk nat pre key verdict n_cell p_cell
  specs=$(sm_specs)
  declare -A native_seen=()
  while read -r limit k g gk; do
    key="$k-$g-$gk"
    local name="k${k}us_g${g}_graph${gk}"
    if [[ -z ${native_seen[$key]:-} ]]; then
      native_seen[$key]=$(capture "sm_native_$name" 90 run_nat "$BIN/sm_util" \
        --kernel-us "$k" --grid "$g" --graph "$gk" --seconds 4 --skip-s 1 --label native)
    fi
    nat=${native_seen[$key]}
    pre=$(capture "sm_pre_${limit}_$name" 120 run_pre "sm_${limit}_$name" "$L" "$limit" \
      "$BIN/sm_util" --kernel-us "$k" --grid "$g" --graph "$gk" --seconds 7 --label "sm$limit")
    n_cell="busy $(kv "$nat" busy_mean)%"
    p_cell="busy $(kv "$pre" busy_mean)% ($(kv "$pre" busy_min)..$(kv "$pre" busy_max)); windows $(kv "$pre" busy_windows); kernel $(kv "$pre" p50_kernel_ns) ns"
    if broken "$pre"; then
      verdict=$(why_broken "$pre" "sm_pre_${limit}_$name")
    elif broken "$nat" || ! num_ge "$(kv "$nat" busy_mean)" "$((limit + 10))"; then
      verdict="INCONCLUSIVE (native workload does not exceed the limit)"
    elif num_ge "$(kv "$pre" eval_windows)" 2 &&
      num_ge "$(kv "$pre" busy_min)" "$((limit - 5))" &&
      num_le "$(kv "$pre" busy_max)" "$((limit + 5))"; then
      verdict=PASS
    else
      verdict=FAIL
    fi
    local path=stream
    if ((gk > 0)); then path="graph of $gk"; fi
    row "SM limit $limit%" "${k} us x grid $g, $path" "$n_cell" "$p_cell" \
      "every window in $((limit - 5))..$((limit + 5))" "$verdict"
  done <<<"$specs"
}

# --- two containers at 20 / 80 --------------------------------------------
# Two processes with separate region files (as two containers have) time-slice
# the GPU; each one's share is its completed work (sm_util's work_*).
section_two() {
  echo "== two processes at 20 / 80" >&2
  local cal iters ref at a b na nb verdict
  cal=$(capture two_calibrate 60 run_nat "$BIN/sm_util" --kernel-us 1000 --grid 8xSM --calibrate-only)
  iters=$(kv "$cal" iters)
  ref=$(kv "$cal" kernel_ns)
  if ! is_num "$iters" || ! is_num "$ref"; then
    row "two processes 20/80" "1 ms x 8xSM" "-" "-" "-" "$(why_broken "$cal" two_calibrate)"
    return
  fi
  local common=(--kernel-us 1000 --grid 8xSM --iters "$iters" --ref-ns "$ref" --seconds 7)
  at=$(($(date +%s%3N) + 4000))
  capture two_native_A 90 run_nat "$BIN/sm_util" "${common[@]}" --start-at-ms "$at" --label A >"$TMPD/na" &
  capture two_native_B 90 run_nat "$BIN/sm_util" "${common[@]}" --start-at-ms "$at" --label B >"$TMPD/nb" &
  wait
  at=$(($(date +%s%3N) + 4000))
  capture two_pre_A20 90 run_pre two_A "$L" 20 "$BIN/sm_util" "${common[@]}" --start-at-ms "$at" --label A20 >"$TMPD/pa" &
  capture two_pre_B80 90 run_pre two_B "$L" 80 "$BIN/sm_util" "${common[@]}" --start-at-ms "$at" --label B80 >"$TMPD/pb" &
  wait
  na=$(<"$TMPD/na")
  nb=$(<"$TMPD/nb")
  a=$(<"$TMPD/pa")
  b=$(<"$TMPD/pb")
  if broken "$a" || broken "$b"; then
    verdict="FAIL (no result; see raw/two_pre_*.log)"
  elif num_ge "$(kv "$a" work_mean)" 15 && num_le "$(kv "$a" work_mean)" 25 &&
    num_ge "$(kv "$b" work_mean)" 75 && num_le "$(kv "$b" work_mean)" 85; then
    verdict=PASS
  else
    verdict=FAIL
  fi
  row "two processes 20/80" "1 ms x 8xSM each, separate region files" \
    "A $(kv "$na" work_mean)% / B $(kv "$nb" work_mean)%" \
    "A $(kv "$a" work_mean)% ($(kv "$a" work_windows)) / B $(kv "$b" work_mean)% ($(kv "$b" work_windows))" \
    "A 15..25, B 75..85 (mean share after 2 s)" "$verdict"
}

# --- overhead -------------------------------------------------------------
section_overhead() {
  echo "== overhead (5 interleaved rounds, medians of per-process p50)" >&2
  local limit=40960 live=10000 r
  if ((PHYS_MIB < 49152)); then
    limit=$((PHYS_MIB * 3 / 4))
    live=$(((limit - 2048) / 2))
    if ((live > 10000)); then live=10000; fi
  fi
  # Filled through push's nameref:
  # shellcheck disable=SC2034
  local a0n=() a0p=() a1n=() a1p=() ln=() lp=()
  # p50_of LOGNAME PREFIX: p50_ns of the RESULT line starting with PREFIX.
  p50_of() { kv "$(grep "^RESULT $2" "$OUT/raw/$1.log" | tail -n 1 || true)" p50_ns; }
  # push ARRAY VALUE: appends numeric values only (a crashed run adds none).
  push() {
    local -n arr=$1
    if is_num "$2"; then arr+=("$2"); fi
  }
  for r in 1 2 3 4 5; do
    capture "overhead_native_$r" 180 run_nat "$BIN/overhead" --live "$live" >/dev/null
    capture "overhead_pre_$r" 180 run_pre "overhead_$r" "$limit" "" "$BIN/overhead" --live "$live" >/dev/null
    push a0n "$(p50_of "overhead_native_$r" 'what=alloc live=0 ')"
    push a1n "$(p50_of "overhead_native_$r" "what=alloc live=$live ")"
    push ln "$(p50_of "overhead_native_$r" 'what=launch ')"
    push a0p "$(p50_of "overhead_pre_$r" 'what=alloc live=0 ')"
    push a1p "$(p50_of "overhead_pre_$r" "what=alloc live=$live ")"
    push lp "$(p50_of "overhead_pre_$r" 'what=launch ')"
  done
  overhead_row() {
    local label=$1 thr=$2 unit=$3
    shift 3
    local -n nv=$1 pv=$2
    local mn mp added spread verdict
    if ((${#nv[@]} < 3 || ${#pv[@]} < 3)); then
      row "$label" "added cost" "${#nv[@]} runs" "${#pv[@]} runs" "<= $thr $unit added" \
        "FAIL (fewer than 3 results; see raw/overhead_*.log)"
      return
    fi
    mn=$(median "${nv[@]}")
    mp=$(median "${pv[@]}")
    added=$(calc "$mp - $mn")
    # Native runs that alone differ by more than the bound cannot show the
    # bound either way (a negative "added" is as much noise as a large one),
    # so only an added cost beyond that spread is a FAIL.
    spread=$(calc "$(printf '%s\n' "${nv[@]}" | sort -g | tail -n 1) - $(printf '%s\n' "${nv[@]}" | sort -g | head -n 1)")
    if ! num_le "$added" "$spread" && ! num_le "$added" "$thr"; then
      verdict=FAIL
    elif ! num_le "$spread" "$thr"; then
      verdict="INCONCLUSIVE (native runs alone spread $spread ns)"
    else
      verdict=PASS
    fi
    row "$label" "added $added ns" "p50 $mn ns (runs $(range "${nv[@]}"))" \
      "p50 $mp ns (runs $(range "${pv[@]}"))" "<= $thr ns added (median of runs)" "$verdict"
  }
  overhead_row "alloc+free 1 MiB, 0 live" 1000 ns a0n a0p
  overhead_row "alloc+free 1 MiB, $live live" 1000 ns a1n a1p
  overhead_row "launch, limiter off" 20 ns ln lp
}

# --- PyTorch --------------------------------------------------------------
section_torch() {
  echo "== PyTorch" >&2
  local py
  py=$(command -v python3 || true)
  if [[ -z $py ]] || ! "$py" -c 'import torch' >/dev/null 2>&1; then
    row "PyTorch" "all allocators" "-" "-" "-" "SKIP (torch not importable)"
    return
  fi
  local conf nat pre verdict lo=$((L - 600 - 256)) label
  for conf in "" "backend:cudaMallocAsync" "expandable_segments:True"; do
    label=${conf:-default caching allocator}
    [[ $conf == expandable* ]] && label="$conf (extra, §9.2)"
    local tag=${conf%%:*} conf_env=(env -u PYTORCH_CUDA_ALLOC_CONF)
    tag=${tag:-default}
    if [[ -n $conf ]]; then conf_env=(env "PYTORCH_CUDA_ALLOC_CONF=$conf"); fi
    nat=$(capture "torch_native_$tag" 180 run_nat "${conf_env[@]}" \
      "$py" "$HERE/torch_check.py" --step-mib 256 --cap-mib "$CAP")
    pre=$(capture "torch_pre_$tag" 180 run_pre "torch_$tag" "$L" "" "${conf_env[@]}" \
      "$py" "$HERE/torch_check.py" --step-mib 256 --cap-mib "$CAP")
    if [[ $(kv "$pre" rc) == 77 ]]; then
      verdict="FAIL (torch saw no CUDA device under the preload)"
    elif broken "$pre"; then
      verdict=$(why_broken "$pre" "torch_pre_$tag")
    elif num_eq "$(kv "$pre" total_bytes)" "$((L * 1048576))" &&
      [[ $(kv "$pre" stop) == OutOfMemoryError && $(kv "$pre" recovered) == 1 ]] &&
      num_ge "$(kv "$pre" reached_mib)" "$lo" && num_le "$(kv "$pre" reached_mib)" "$L"; then
      verdict=PASS
    else
      verdict=FAIL
    fi
    row "PyTorch sees L, clean OOM" "$label" \
      "total $(kv "$nat" total_mib); $(kv "$nat" reached_mib) MiB, stop $(kv "$nat" stop)" \
      "total $(kv "$pre" total_mib); $(kv "$pre" reached_mib) MiB, stop $(kv "$pre" stop) ($(kv "$pre" detail)); recovered $(kv "$pre" recovered)" \
      "mem_get_info total == L; torch.OutOfMemoryError at L-856..L MiB; usable after" "$verdict"
  done
}

for s in alloc info sm two overhead torch; do
  if wants "$s"; then "section_$s"; fi
done

{
  cat "$OUT/header.md" "$TABLE"
  echo
  echo "PASS $PASS_N, FAIL $FAIL_N, INCONCLUSIVE $INCONCLUSIVE_N, SKIP $SKIP_N; ${SECONDS} s in all. Raw output: \`raw/\`."
} >"$OUT/results.md"
cat "$OUT/results.md"
echo "results: $OUT/results.md" >&2
if ((FAIL_N > 0)); then exit 1; fi
if ((INCONCLUSIVE_N > 0)); then exit 2; fi
exit 0
