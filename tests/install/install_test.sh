#!/usr/bin/env bash
# install_test.sh: the installable package end to end (`ctest -L install`).
#
# Installs the build into a temporary prefix, checks the layout, configures
# and builds examples/embedding (C++) and examples/c (C11) against it with
# find_package, builds examples/c once more with pkg-config, runs all three
# and checks what they print. Everything it writes is under one temporary
# folder, removed at exit, except build/install_manifest.txt, which
# `cmake --install` always writes into the build tree.
#
# usage: install_test.sh SOURCE_DIR BUILD_DIR CONFIG LIBDIR WITH_C CMAKE
#            GENERATOR MAKE_PROGRAM CXX PKG_CONFIG -- ARTIFACT...
# ARTIFACT: the files the install copies (tests/install/CMakeLists.txt
# passes them as $<TARGET_FILE:...>): without them there is nothing to test.
set -euo pipefail

src=$1 build=$2 config=$3 libdir=$4 with_c=$5 cmake=$6 generator=$7
make_program=$8 cxx=$9 pkg_config=${10}
shift 10
[[ ${1:-} == -- ]] && shift

fail() {
  echo "install_test: $*" >&2
  exit 1
}

for artifact in "$@"; do
  [[ -e $artifact ]] || fail "$artifact is not built; build first" \
    "(cmake --build $build)"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/deviceshare-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
started=$SECONDS

# Runs a command with its output kept in a log, shown only on failure.
quiet() {
  "$@" >"$tmp/log" 2>&1 || {
    cat "$tmp/log" >&2
    fail "failed: $*"
  }
}

# Fails unless the output file $1 has a match of the extended regex $2.
expect() {
  grep -qE -- "$2" "$1" || {
    cat "$1" >&2
    fail "$(basename "$1"): no '$2' in the output above"
  }
}

echo "== cmake --install into $prefix"
quiet "$cmake" --install "$build" --config "$config" --prefix "$prefix"

for file in include/deviceshare/scheduler/scheduler.h \
  include/deviceshare/builtin_backends.h include/deviceshare/mig/mig_backend.h \
  include/gpu_abi/nvml_abi.h "$libdir/cmake/deviceshare/deviceshareConfig.cmake" \
  "$libdir/cmake/deviceshare/deviceshareConfigVersion.cmake"; do
  [[ -f $prefix/$file ]] || fail "$file is not installed"
done
# Exactly the public headers: none of a library's src/ comes along.
public_dirs=("$src"/lib/*/include)
((with_c)) && public_dirs+=("$src/plugins/capi/include")
want=$(find "${public_dirs[@]}" -name '*.h' | wc -l)
got=$(find "$prefix/include" -name '*.h' | wc -l)
((want == got)) || fail "$got headers installed, $want public ones"

# The examples' own build trees, from nothing: the package alone must
# suffice (CMAKE_PREFIX_PATH), built without optimisation to stay quick.
configure_example() {  # NAME
  quiet "$cmake" -S "$src/examples/$1" -B "$tmp/$1" -G "$generator" \
    -DCMAKE_MAKE_PROGRAM="$make_program" -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
  grep -qxF "deviceshare_DIR:PATH=$prefix/$libdir/cmake/deviceshare" \
    "$tmp/$1/CMakeCache.txt" || fail "$1 found another deviceshare package"
  quiet "$cmake" --build "$tmp/$1"
}

# Runs the program $1, keeping its output in $tmp/$2.out.
run_example() {  # PROGRAM NAME
  "$1" >"$tmp/$2.out" 2>&1 || { cat "$tmp/$2.out" >&2; fail "$2 failed"; }
}

echo "== examples/embedding with find_package(deviceshare)"
configure_example embedding
run_example "$tmp/embedding/embedding" embedding
cat "$tmp/embedding.out"
expect "$tmp/embedding.out" '^team-a/hami-small -> (a100-[12]|h100-1|a30-1) '
expect "$tmp/embedding.out" '^team-b/volcano-two-gpus -> h100-1 '
expect "$tmp/embedding.out" '^team-c/too-big: fits nowhere$'

if ((with_c)); then
  echo "== examples/c with find_package(deviceshare COMPONENTS c)"
  configure_example c
  run_example "$tmp/c/c_example" c
  cat "$tmp/c.out"
  expect "$tmp/c.out" '"nodes": ?\["a100-1", ?"a30-1"\]'
  expect "$tmp/c.out" '"placed": ?true'
  expect "$tmp/c.out" '"node": ?"(a100-1|a30-1)"'

  echo "== examples/c with pkg-config"
  export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
  quiet "$pkg_config" --exists --print-errors deviceshare
  # Word splitting of the flags is intended.
  # shellcheck disable=SC2046
  quiet "${CC:-cc}" -std=c11 -Wall -Werror "$src/examples/c/main.c" \
    $("$pkg_config" --cflags --libs deviceshare) \
    -Wl,-rpath,"$("$pkg_config" --variable=libdir deviceshare)" \
    -o "$tmp/c_pkgconfig"
  run_example "$tmp/c_pkgconfig" c_pkgconfig
  # Not compared with the CMake build's output: the annotations carry the
  # bind time.
  expect "$tmp/c_pkgconfig.out" '"placed": ?true'
  expect "$tmp/c_pkgconfig.out" '"node": ?"(a100-1|a30-1)"'
fi

echo "== passed in $((SECONDS - started)) s"
