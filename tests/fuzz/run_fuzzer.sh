#!/usr/bin/env bash
# Builds tests/fuzz with clang++ (libFuzzer + ASan + UBSan) in its own build
# tree and runs fuzzers for a bounded time each, on copies of their seed
# corpora: by default the extender's request decoders and the node agent's
# ResourceClaim decoder, or the fuzzers named (capi_fuzzer: the C API's
# JSON entry points; input_loaders_fuzzer: simulate's file readers). Only
# the named fuzzers are built; <seconds> is shared among them.
#
#   run_fuzzer.sh <source-dir> <build-dir> <seconds> [fuzzer...]
#
# DEVICESHARE_FUZZ_SECONDS overrides <seconds>. Exits 77 (ctest: skipped)
# when clang++ or its libFuzzer runtime (libclang-rt-14-dev) is missing; a
# crash leaves its input under <build-dir>/artifacts/ and fails.
set -euo pipefail

if (($# < 3)); then
  echo "usage: $0 <source-dir> <build-dir> <seconds> [fuzzer...]" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
build=$2
seconds=${DEVICESHARE_FUZZ_SECONDS:-$3}
shift 3
fuzzers=("$@")
if ((${#fuzzers[@]} == 0)); then
  fuzzers=(extender_decoders_fuzzer allocated_claim_fuzzer)
fi
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
cmake --build "$build" --target "${fuzzers[@]}"
echo "fuzz: clang build took $((SECONDS - start)) s"

# libFuzzer adds what it finds to the first directory: keep the sources'
# corpora clean. Each fuzzer gets its share of the time.
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
  # The seed folder's files only: another fuzzer's seeds may sit below it.
  find "$seeds" -maxdepth 1 -type f -exec cp -t "$corpus" {} +
  local share=$(((seconds + ${#fuzzers[@]} - 1) / ${#fuzzers[@]}))
  # libFuzzer can hang in its out-of-memory report (a sanitizer stopping
  # the world over a 2 GB heap): a fuzzer still running well past its time
  # is killed, which fails the test, instead of holding CI for the ctest
  # timeout. (Such a hang saves no input: rerun the fuzzer by hand.)
  timeout --kill-after=10 $((share + 120)) \
  "$build/$name" "$corpus" "$@" \
    -max_total_time="$share" \
    -max_len=16384 -timeout=30 \
    -rss_limit_mb=2048 -error_exitcode=1 -timeout_exitcode=1 \
    -print_final_stats=1 -artifact_prefix="$build/artifacts/$name-"
}
for fuzzer in "${fuzzers[@]}"; do
  case $fuzzer in
    extender_decoders_fuzzer)
      run "$fuzzer" "$fuzz_dir/corpus" -dict="$fuzz_dir/extender.dict" ;;
    allocated_claim_fuzzer) run "$fuzzer" "$fuzz_dir/claim_corpus" ;;
    capi_fuzzer)
      run "$fuzzer" "$fuzz_dir/corpus/capi" -dict="$fuzz_dir/capi.dict" ;;
    input_loaders_fuzzer) run "$fuzzer" "$fuzz_dir/input_corpus" ;;
    *)
      echo "unknown fuzzer $fuzzer" >&2
      exit 2
      ;;
  esac
done
