#!/usr/bin/env bash
# install_test.sh: the installable package end to end (`ctest -L install`).
#
# Installs the build into a temporary prefix, checks the layout, configures
# and builds examples/embedding (C++) and examples/c (C11) against it with
# find_package, builds examples/c once more with pkg-config, runs all three
# and checks what they print. Then the installed executables on their own:
# the deploy kit and examples are installed as in the source, no RUNPATH
# or ldd result names the build or source tree, and, with the prefix moved
# elsewhere and (where a mount namespace can be made) the build and source
# trees hidden under empty mounts, the installed scheduler simulates the
# installed example and the installed agent discovers GPUs from the
# installed inventory and from the fake NVML. Everything it writes is under
# one temporary folder, removed at exit, except build/install_manifest.txt,
# which `cmake --install` always writes into the build tree.
#
# usage: install_test.sh SOURCE_DIR BUILD_DIR CONFIG LIBDIR WITH_C CMAKE
#            GENERATOR MAKE_PROGRAM CXX PKG_CONFIG FAKE_NVML -- ARTIFACT...
# FAKE_NVML: tests/fake_nvml's libnvidia-ml.so.1 (copied out of the build
# tree before use). ARTIFACT: the files the install copies
# (tests/install/CMakeLists.txt passes them as $<TARGET_FILE:...>): without
# them there is nothing to test.
set -euo pipefail

src=$1 build=$2 config=$3 libdir=$4 with_c=$5 cmake=$6 generator=$7
make_program=$8 cxx=$9 pkg_config=${10} fake_nvml=${11}
shift 11
[[ ${1:-} == -- ]] && shift

fail() {
  echo "install_test: $*" >&2
  exit 1
}

for artifact in "$fake_nvml" "$@"; do
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

echo "== the images' installs: one component each, stripped"
# deploy/images/*.Dockerfile install these components and copy the files
# they make: each must make exactly those files.
image_install() {  # COMPONENT... -> the files made, one a line
  local root=$tmp/image-$1 component
  for component in "$@"; do
    DESTDIR=$root quiet "$cmake" --install "$build" --config "$config" \
      --prefix /usr/local --component "$component" --strip
  done
  (cd "$root" && find . -type f | sort | tr '\n' ' ')
}
got=$(image_install scheduler)
[[ $got == "./usr/local/bin/deviceshare-scheduler " ]] ||
  fail "component scheduler installs $got"
got=$(image_install node-agent)
[[ $got == "./usr/local/bin/deviceshare-node-agent ./usr/local/lib/deviceshare/libvgpu.so " ]] ||
  fail "component node-agent installs $got"
"$tmp/image-node-agent/usr/local/bin/deviceshare-node-agent" --help \
  >"$tmp/stripped.out" 2>&1 || fail "the stripped agent does not run"
if readelf -S "$tmp/image-scheduler/usr/local/bin/deviceshare-scheduler" |
  grep -qE '\.(symtab|debug_info) '; then
  fail "the scheduler's component install is not stripped"
fi
rm -rf "$tmp"/image-*

share=$prefix/share/deviceshare
echo "== the deploy kit and the examples in $share"
# As in the source, less deploy/images (it builds from a source tree).
[[ ! -e $share/deploy/images ]] || fail "deploy/images is installed"
quiet diff -r --exclude=images "$src/deploy" "$share/deploy"
# The kit's scripts stay executable.
while read -r script; do
  [[ -x $share/deploy/${script#"$src/deploy/"} ]] ||
    fail "${script#"$src/"} is installed without its execute bit"
done < <(find "$src/deploy" -path "$src/deploy/images" -prune -o -type f \
  -perm -u+x -print)
for kit in deploy deploy/dra; do
  while read -r resource; do
    [[ -f $share/$kit/$resource ]] ||
      fail "$kit/kustomization.yaml lists $resource, not installed"
  done < <(sed -n '/^resources:/,/^[^ -]/s/^ *- *\([^ #]*\).*/\1/p' \
    "$share/$kit/kustomization.yaml")
done
for example in "$src"/examples/*.yaml; do
  quiet cmp "$example" "$share/examples/$(basename "$example")"
done
quiet diff -r "$src/examples/modes" "$share/examples/modes"
quiet diff -r "$src/examples/dra" "$share/examples/dra"

echo "== nothing installed refers to the build or source tree"
mapfile -t elves < <(find "$prefix/bin" "$prefix/$libdir" -type f \
  \( -path "$prefix/bin/*" -o -name '*.so*' \) | sort)
((${#elves[@]} >= 3)) || fail "only ${elves[*]} installed"
for elf in "${elves[@]}"; do
  # Every RUNPATH/RPATH entry is relative to the file itself.
  while read -r entry; do
    # shellcheck disable=SC2016 # $ORIGIN is literal: the loader expands it
    [[ $entry == '$ORIGIN'* ]] ||
      fail "${elf#"$prefix"/}: RUNPATH entry $entry is not under \$ORIGIN"
  done < <(readelf -d "$elf" | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\]/\2/p' |
    tr ':' '\n')
  ldd "$elf" >"$tmp/ldd" 2>&1 || true
  if grep -qF -e "$build" -e "$src/" "$tmp/ldd"; then
    cat "$tmp/ldd" >&2
    fail "${elf#"$prefix"/} loads a library of the build or source tree"
  fi
  if grep -q 'not found' "$tmp/ldd"; then
    cat "$tmp/ldd" >&2
    fail "${elf#"$prefix"/}: a library is not found"
  fi
done

# The prefix moved after installing: nothing may depend on where it was.
moved=$tmp/moved
mv "$prefix" "$moved"
bin=$moved/bin examples=$moved/share/deviceshare/examples
mkdir "$tmp/nvml"
cp -L "$fake_nvml" "$tmp/nvml/libnvidia-ml.so.1"

# Hides the build and source trees under empty tmpfs mounts in a private
# mount namespace (root, or an unprivileged user namespace), where this
# machine allows it and the temporary folder is outside both.
hide=()
case $tmp/ in
  "$build"/* | "$src"/*) ;;
  *)
    for flags in "--mount" "--user --map-root-user --mount"; do
      # Word splitting of the flags is intended.
      # shellcheck disable=SC2086
      if unshare $flags true 2>/dev/null; then
        read -r -a hide <<<"unshare $flags"
        break
      fi
    done
    ;;
esac
hidden() {
  if ((${#hide[@]})); then
    # $1, $2: the trees, mounted over in this order (the build tree may be
    # inside the source tree), expanded by the inner shell.
    # shellcheck disable=SC2016
    "${hide[@]}" bash -c 'mount -t tmpfs none "$1" && mount -t tmpfs none "$2" &&
      shift 2 && exec "$@"' hidden "$build" "$src" "$@"
  else
    "$@"
  fi
}
if ((${#hide[@]})) && hidden test ! -e "$build/CMakeCache.txt"; then
  echo "== the installed executables, moved, with $build and $src hidden"
else
  hide=()
  echo "== the installed executables, moved (no mount namespace here: the" \
    "build tree stays visible; RUNPATH and ldd were checked above)"
fi

# Runs an installed program (the environment's library path dropped),
# keeping its output in $tmp/NAME.out.
run_installed() {  # NAME COMMAND...
  local name=$1
  shift
  hidden env -u LD_LIBRARY_PATH -u LD_PRELOAD "$@" >"$tmp/$name.out" 2>&1 || {
    cat "$tmp/$name.out" >&2
    fail "$name failed: $*"
  }
}

# README's quick start, on the installed files.
run_installed simulate "$bin/deviceshare-scheduler" simulate \
  --cluster "$examples/cluster.yaml" --pods "$examples/workload.yaml" \
  --config "$examples/deviceshare.yaml"
expect "$tmp/simulate.out" '^POD '
expect "$tmp/simulate.out" 'team-b/h100-trainer'
expect "$tmp/simulate.out" 'Unschedulable \(3 pods\)'
expect "$tmp/simulate.out" '^Summary$'
run_installed simulate_modes "$bin/deviceshare-scheduler" simulate \
  --cluster "$examples/modes/cluster.yaml" \
  --pods "$examples/modes/workload.yaml" \
  --config "$examples/modes/deviceshare.yaml"
expect "$tmp/simulate_modes.out" '^Summary$'

run_installed agent_help "$bin/deviceshare-node-agent" --help
expect "$tmp/agent_help.out" '^  --health-interval D +.*\(default 5s\)$'
expect "$tmp/agent_help.out" '^  --dialect D +hami \| volcano \(default hami\)$'
run_installed discover_inventory "$bin/deviceshare-node-agent" discover \
  --inventory "$examples/inventory.yaml"
expect "$tmp/discover_inventory.out" \
  '"uuid": "GPU-3f2a6c1e-0d4b-4c1e-9a7e-5b8f00000001"'
printf '%s\n' 'gpus:' \
  '- {uuid: GPU-install-0, model: NVIDIA A100-SXM4-80GB, memory_mib: 81920,' \
  '   pci_device_id: 0x20b2, cc: [8, 0]}' >"$tmp/nvml/gpus.yaml"
run_installed discover_nvml env FAKE_NVML_INVENTORY="$tmp/nvml/gpus.yaml" \
  FAKE_NVML_STATE="$tmp/nvml/state.json" \
  "$bin/deviceshare-node-agent" discover --output annotation \
  --nvml-library "$tmp/nvml/libnvidia-ml.so.1" \
  --config "$examples/deviceshare.yaml"
expect "$tmp/discover_nvml.out" '"hami.io/node-nvidia-register":.*GPU-install-0'

# The DaemonSets' libvgpu.so is where an install under /usr/local (the
# images') puts it.
while read -r path; do
  [[ $path == /usr/local/* && -f $moved/${path#/usr/local/} ]] ||
    fail "--vgpu-library=$path: not a file an install into /usr/local makes"
done < <(grep -rhoE -- '--vgpu-library=[^ "]+' "$moved/share/deviceshare/deploy" |
  sed 's/^--vgpu-library=//' | sort -u)
hidden ldd "$moved/lib/deviceshare/libvgpu.so" >"$tmp/ldd" 2>&1 ||
  fail "ldd libvgpu.so failed"
grep -q 'not found' "$tmp/ldd" && fail "libvgpu.so: $(cat "$tmp/ldd")"

echo "== passed in $((SECONDS - started)) s"
