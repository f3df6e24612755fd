#!/bin/sh
# run_in_temp_folder.sh COMMAND [ARGS...]: runs one test with TMPDIR (and
# gtest's TEST_TMPDIR) set to a fresh folder of its own under $TMPDIR (else
# /tmp), and fails it if it leaves anything there; the folder goes either
# way. ctest starts every test executable through this script (their
# CROSSCOMPILING_EMULATOR, tests/CMakeLists.txt), so a test that leaves a
# temporary file behind fails by name, whatever runs beside it, and a test
# run leaves nothing in /tmp. The test's exit status passes through (77:
# skipped).
root=${TMPDIR:-/tmp}
dir=$(mktemp -d "${root%/}/dst.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
TMPDIR=$dir TEST_TMPDIR=$dir "$@"
status=$?
if [ -n "$(ls -A "$dir")" ]; then
  echo "run_in_temp_folder.sh: the test left these in its TMPDIR $dir:" >&2
  (cd "$dir" && find . -mindepth 1 -maxdepth 3 | sort | head -n 50) >&2
  [ "$status" -eq 0 ] && status=1
fi
exit "$status"
