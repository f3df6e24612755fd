# Helpers for run.sh (sourced, not executed): running a program natively or
# under the interposer, pulling numbers out of its RESULT line, comparing
# them, and adding rows to the results table. Every verdict in the table is
# computed here from measured numbers.
# shellcheck shell=bash

# Set by run.sh before use.
: "${LIB:?}" "${OUT:?}" "${TMPD:?}"

PASS_N=0
FAIL_N=0
INCONCLUSIVE_N=0
SKIP_N=0
TABLE="$OUT/table.md"

# Both runners are meant to be called through capture, which sets
# KIT_TIMEOUT; a program that hangs (a deadlocked interposer) is killed.
kit_timeout() { timeout --kill-after=10 "${KIT_TIMEOUT:-600}" "$@"; }

# Native: nothing of ours in the environment.
run_nat() {
  kit_timeout env -u LD_PRELOAD -u CUDA_DEVICE_MEMORY_LIMIT -u CUDA_DEVICE_MEMORY_LIMIT_0 \
    -u CUDA_DEVICE_SM_LIMIT -u GPU_CORE_UTILIZATION_POLICY \
    -u CUDA_DEVICE_MEMORY_SHARED_CACHE "$@"
}

# run_pre CACHE LIMIT_MIB SM_LIMIT CMD...: under the interposer, with a fresh
# region file per scenario (a stale one could carry old limits). SM_LIMIT ""
# leaves the limiter off (no CUDA_DEVICE_SM_LIMIT at all).
run_pre() {
  local cache="$TMPD/$1.cache" limit=$2 sm=$3
  shift 3
  rm -f "$cache"
  local envs=("LD_PRELOAD=$LIB" "CUDA_DEVICE_MEMORY_LIMIT_0=${limit}m"
    "CUDA_DEVICE_MEMORY_SHARED_CACHE=$cache")
  if [[ -n $sm ]]; then
    envs+=("CUDA_DEVICE_SM_LIMIT=$sm" "GPU_CORE_UTILIZATION_POLICY=force")
  fi
  kit_timeout env -u CUDA_DEVICE_MEMORY_LIMIT -u CUDA_DEVICE_SM_LIMIT \
    -u GPU_CORE_UTILIZATION_POLICY "${envs[@]}" "$@"
}

# capture NAME TIMEOUT_S run_nat|run_pre ...: runs the command with a time
# limit (exit 124 when it ran out), its output in raw/NAME.log; prints its last RESULT line with " rc=<exit status>"
# appended ("RESULT missing=1 rc=..." when it printed none). Never fails.
capture() {
  local name=$1 limit=$2
  shift 2
  local log="$OUT/raw/$name.log" rc=0 line
  {
    printf '$'
    printf ' %q' "$@"
    printf '\n'
  } >"$log"
  KIT_TIMEOUT=$limit "$@" >>"$log" 2>&1 || rc=$?
  echo "exit status: $rc" >>"$log"
  line=$(grep '^RESULT ' "$log" | tail -n 1 || true)
  if [[ -z $line ]]; then line="RESULT missing=1"; fi
  echo "$line rc=$rc"
}

# kv LINE KEY: the value of KEY in a RESULT line (empty if absent).
kv() {
  awk -v k="$2" '{
    for (i = 2; i <= NF; i++) {
      p = index($i, "=");
      if (substr($i, 1, p - 1) == k) { print substr($i, p + 1); exit }
    }
  }' <<<"$1"
}

# Numeric tests; an empty or non-numeric operand is false.
is_num() { [[ $1 =~ ^-?[0-9]+([.][0-9]+)?$ ]]; }
num_le() { is_num "$1" && is_num "$2" && awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }
num_ge() { num_le "$2" "$1"; }
num_eq() { num_le "$1" "$2" && num_le "$2" "$1"; }
# calc EXPR: awk arithmetic, printed with up to 1 decimal.
calc() { awk "BEGIN { v = $1; printf(\"%.1f\", v) }"; }

# median of the arguments (numbers).
median() {
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) { print ""; exit }
    if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
range() { printf '%s\n' "$@" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf("%s..%s", lo, hi) }'; }

cell() { local s=$*; s=${s//|/\/}; printf '%s' "${s//$'\n'/ }"; }

# row ITEM SCENARIO NATIVE PRELOADED CRITERION VERDICT
row() {
  case $6 in
    PASS) PASS_N=$((PASS_N + 1)) ;;
    FAIL*) FAIL_N=$((FAIL_N + 1)) ;;
    INCONCLUSIVE*) INCONCLUSIVE_N=$((INCONCLUSIVE_N + 1)) ;;
    SKIP*) SKIP_N=$((SKIP_N + 1)) ;;
    *) echo "internal: bad verdict '$6'" >&2 && exit 1 ;;
  esac
  printf '| %s | %s | %s | %s | %s | **%s** |\n' "$(cell "$1")" "$(cell "$2")" \
    "$(cell "$3")" "$(cell "$4")" "$(cell "$5")" "$(cell "$6")" >>"$TABLE"
  printf '  %-14s %-44s %s\n' "$6" "$1: $2" "$4" >&2
}

# A program that did not produce its result is a failure of that row.
broken() {
  [[ $(kv "$1" missing) == 1 ]]
}
why_broken() { echo "FAIL (no result, exit $(kv "$1" rc); see raw/$2.log)"; }
