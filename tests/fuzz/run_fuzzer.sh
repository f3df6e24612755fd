#!/usr/bin/env bash
# Builds tests/fuzz with clang++ (libFuzzer + ASan + UBSan) in its own build
# tree and fuzzes the extender's request decoders and the node agent's
# ResourceClaim decoder for a bounded time each, on copies of their seed
# corpora.
#
#   run_fuzzer.sh <source-dir> <build-dir> <seconds>
#
# DEVICESHARE_FUZZ_SECONDS overrides <seconds>. Exits 77 (ctest: skipped)
# when clang++ or its libFuzzer runtime (libclang-rt-14-dev) is missing; a
# crash leaves its input under <build-dir>/artifacts/ and fails.
set -euo pipefail

if (($# != 3)); then
  echo "usage: $0 <source-dir> <build-dir> <seconds>" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
build=$2
seconds=${DEVICESHARE_FUZZ_SECONDS:-$3}
fuzz_dir=$src/tests/fuzz

cxx=${DEVICESHARE_FUZZ_CXX:-clang++}
if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "SKIP: $cxx not found (install clang)"
  exit 77
fi
mkdir -p "$build"
probe=$build/probe
if ! printf 'extern "C" int LLVMFuzzerTestOneInput(const char*, long) { return 0; }\n' |
  "$cxx" -x c++ -fsanitize=fuzzer,address,undefined - -o "$probe" 2>"$probe.log"; then
  echo "SKIP: $cxx cannot link -fsanitize=fuzzer (install libclang-rt-14-dev):"
  cat "$probe.log"
  exit 77
fi

generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
start=$SECONDS
cmake -S "$fuzz_dir" -B "$build" "${generator[@]}" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE= >/dev/null
cmake --build "$build"
echo "fuzz: clang build took $((SECONDS - start)) s"

# libFuzzer adds what it finds to the first directory: keep the sources'
# corpora clean. Each fuzzer gets half of the time.
# libFuzzer exits 77 on a crash by default, which ctest would read as
# "skipped": failures exit 1 instead (-error_exitcode, -timeout_exitcode).
# LeakSanitizer is on; where ptrace is denied (some containers) it cannot
# run: set ASAN_OPTIONS=detect_leaks=0 there.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
mkdir -p "$build/artifacts"
run() {  # run <fuzzer> <seed dir> [extra flags...]
  local name=$1 seeds=$2
  shift 2
  local corpus=$build/corpus-$name
  rm -rf "$corpus"
  mkdir -p "$corpus"
  cp "$seeds"/* "$corpus"/
  "$build/$name" "$corpus" "$@" \
    -max_total_time="$(((seconds + 1) / 2))" -max_len=16384 -timeout=30 \
    -rss_limit_mb=2048 -error_exitcode=1 -timeout_exitcode=1 \
    -print_final_stats=1 -artifact_prefix="$build/artifacts/$name-"
}
run extender_decoders_fuzzer "$fuzz_dir/corpus" -dict="$fuzz_dir/extender.dict"
run allocated_claim_fuzzer "$fuzz_dir/claim_corpus"
