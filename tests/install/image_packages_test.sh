#!/usr/bin/env bash
# image_packages_test.sh: the images' Debian package lists against the
# binaries they ship (`ctest -L images`). No image is built (that needs a
# container engine); what the runtime stage must install is computed here,
# on a Debian 12 machine like the images' base:
#
#   - for each file an image ships, `ldd` gives the shared libraries it
#     loads and `dpkg -S` the package of each;
#   - those in debian:12-slim already (the packages of Priority required
#     and everything they depend on, the set debootstrap's minbase
#     installs) need not be listed; every other one must be in the runtime
#     stage's `apt-get install --no-install-recommends`, and that list may
#     hold nothing no binary loads;
#   - the build stage installs only packages of .ci/install-deps, and all
#     of them the build needs (not the tests', benchmarks', clang, Go);
#   - the Dockerfile copies each shipped file, libvgpu.so to the DaemonSets'
#     --vgpu-library, and the scheduler image runs as the numeric,
#     non-root user of deploy/deployment.yaml.
#
# usage: image_packages_test.sh SOURCE_DIR DOCKERFILE=FILE[,FILE...]...
#   DOCKERFILE  a file name under deploy/images
#   FILE        a built file that image ships (tests/install/CMakeLists.txt
#               passes $<TARGET_FILE:...>)
# Exits 77 (skipped) without dpkg or ldd: the package names are Debian's.
set -euo pipefail

src=$1
shift
images_dir=${DEVICESHARE_IMAGES_DIR:-$src/deploy/images}

# Failures are counted in a file: some checks run in subshells.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/deviceshare-image-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/failures"
fail() {
  echo "image_packages_test: FAIL: $*" >&2
  echo "$*" >>"$tmp/failures"
}

for tool in dpkg-query dpkg ldd; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "image_packages_test: no $tool here; skipped" >&2
    exit 77
  }
done

# The packages debian:12-slim holds: Priority required and the closure of
# their Depends and Pre-Depends over the installed packages (alternatives
# count when installed; version constraints and :any are dropped).
base_packages() {
  dpkg-query -W -f='${Package}\t${Priority}\t${Pre-Depends}, ${Depends}\n' |
    awk -F'\t' '
      { installed[$1] = 1; deps[$1] = $3; if ($2 == "required") queue[++n] = $1 }
      END {
        for (i = 1; i <= n; i++) {
          p = queue[i]
          if (p in base) continue
          base[p] = 1
          m = split(deps[p], alternatives, /[,|]/)
          for (j = 1; j <= m; j++) {
            d = alternatives[j]
            sub(/\(.*/, "", d); gsub(/[ \t]/, "", d); sub(/:.*/, "", d)
            if ((d in installed) && !(d in base)) queue[++n] = d
          }
        }
        for (p in base) print p
      }' | sort -u
}

# The instructions of stage $2 (0 = first, -1 = last) of Dockerfile $1, one
# per line: continuation lines joined, comments dropped.
stage() {
  awk -v want="$2" '
    /^[ \t]*#/ { next }
    { line = line $0 }
    /\\$/ { sub(/\\$/, " ", line); next }
    { if (line ~ /^FROM /) stages++; text[stages] = text[stages] line "\n"; line = "" }
    END { printf "%s", text[want < 0 ? stages : want + 1] }
  ' "$1"
}

# The packages the `apt-get install` commands of the instructions on stdin
# install, one a line, sorted.
apt_installs() {
  grep -E 'apt-get +install' |
    sed -E 's/.*apt-get +install//; s/&&.*//' | tr ' ' '\n' |
    grep -vE '^(-.*|)$' | sort -u
}

# The shared libraries file $1 loads (ldd), one a line.
libraries() {
  ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
}

# The paths dpkg may know a library by: Debian 12 installs libraries under
# both /lib and /usr/lib (merged /usr), and ldd names either, or a link.
candidates() {
  local path=$1 real
  real=$(readlink -f "$path")
  printf '%s\n' "$path" "/usr$path" "${path#/usr}" "$real" "/usr$real"
}

# owner_of[PATH]: the package of each candidate path of the libraries the
# files "$@" load, from one `dpkg -S` (each call reads the whole database).
declare -A owner_of
index_owners() {
  local paths=() line
  mapfile -t paths < <(for file in "$@"; do
    [[ -f $file ]] && libraries "$file"
  done | sort -u | while read -r library; do candidates "$library"; done |
    sort -u)
  ((${#paths[@]})) || return 0
  # "package[:arch][, package...]: path"; diversions are not owners.
  while IFS= read -r line; do
    [[ $line == diversion* ]] && continue
    owner_of[${line##*: }]=${line%%[:,]*}
  done < <(dpkg -S "${paths[@]}" 2>/dev/null || true)
}

# The packages of the libraries file $1 loads, one a line: "PACKAGE FILE".
loaded_packages() {
  local file=$1 library candidate package
  if ldd "$file" | grep -q 'not found'; then
    fail "$file: a library is not found: $(ldd "$file" | grep 'not found')"
  fi
  while read -r library; do
    package=""
    while read -r candidate; do
      package=${owner_of[$candidate]:-}
      [[ -n $package ]] && break
    done < <(candidates "$library")
    if [[ -z $package ]]; then
      fail "$file loads $library, which no Debian package owns"
      continue
    fi
    echo "$package $(basename "$file")"
  done < <(libraries "$file")
}

base=$(base_packages)
[[ -n $base ]] || { echo "image_packages_test: no required packages" >&2; exit 77; }
ci_packages=$(sed -n '/^packages=(/,/^)/p' "$src/.ci/install-deps" |
  sed 's/packages=(//; s/)//' | tr ' ' '\n' | grep -v '^$' | sort -u)
[[ -n $ci_packages ]] || fail ".ci/install-deps: no packages=( ... ) list"

checked=0
for spec in "$@"; do
  dockerfile=$images_dir/${spec%%=*}
  name=$(basename "$dockerfile")
  IFS=, read -r -a shipped <<<"${spec#*=}"
  [[ -f $dockerfile ]] || { fail "no $dockerfile"; continue; }
  index_owners "${shipped[@]}"
  echo "== $name"

  build_stage=$(stage "$dockerfile" 0)
  runtime_stage=$(stage "$dockerfile" -1)
  # golang:<version>-bookworm is Debian 12 with a Go newer than Debian's
  # (the Go hosts need Go >= 1.26).
  grep -qE '^FROM (debian:12|golang:[0-9.]+-bookworm) ' <<<"$build_stage" ||
    fail "$name: the first stage is not FROM debian:12 (or golang:*-bookworm)"
  grep -qE '^FROM debian:12-slim( |$)' <<<"$runtime_stage" ||
    fail "$name: the last stage is not FROM debian:12-slim"

  # The build stage: .ci/install-deps is the list of build packages, and
  # the build needs all of them but the tests', the benchmarks', the
  # sanitizer build's and the Go binding's.
  build_packages=$(apt_installs <<<"$build_stage")
  while read -r package; do
    grep -qxF "$package" <<<"$ci_packages" ||
      fail "$name: the build stage installs $package, not in .ci/install-deps"
  done <<<"$build_packages"
  while read -r package; do
    case $package in
      libgtest-dev | libgmock-dev | libbenchmark-dev | libglpk-dev | clang | golang-go) ;;
      *) grep -qxF "$package" <<<"$build_packages" ||
        fail "$name: the build stage lacks $package (.ci/install-deps; the build needs it)" ;;
    esac
  done <<<"$ci_packages"

  # The runtime stage: what the shipped files load, less the base image.
  grep -E 'apt-get +install' <<<"$runtime_stage" |
    grep -qv -- '--no-install-recommends' &&
    fail "$name: a runtime apt-get install without --no-install-recommends"
  listed=$(apt_installs <<<"$runtime_stage")
  loads=$(for file in "${shipped[@]}"; do
    [[ -f $file ]] || fail "$file is not built; build first"
    [[ -f $file ]] && loaded_packages "$file"
    grep -qE "^COPY .*/$(basename "$file") " <<<"$runtime_stage" ||
      fail "$name does not copy $(basename "$file") into the image"
  done | sort -u)
  needed=$(cut -d' ' -f1 <<<"$loads" | sort -u)
  [[ -n $needed ]] || fail "$name: its files load no package at all"
  while read -r package; do
    [[ -z $package ]] && continue
    if grep -qxF "$package" <<<"$listed"; then
      echo "  $package: installed"
    elif grep -qxF "$package" <<<"$base"; then
      echo "  $package: in debian:12-slim"
    else
      fail "$name: $(awk -v p="$package" '$1 == p { print $2 }' <<<"$loads" |
        paste -sd,) load(s) a library of $package, which the runtime stage" \
        "does not install"
    fi
  done <<<"$needed"
  while read -r package; do
    [[ -z $package ]] && continue
    grep -qxF "$package" <<<"$needed" ||
      fail "$name: the runtime stage installs $package, which nothing loads"
  done <<<"$listed"
  checked=$((checked + 1))
done
((checked == $#)) || fail "checked $checked of $# images"

# libvgpu.so where every DaemonSet's --vgpu-library expects it.
agent_runtime=$(stage "$images_dir/node-agent.Dockerfile" -1)
while read -r path; do
  grep -qE "^COPY .* $path\$" <<<"$agent_runtime" ||
    fail "node-agent.Dockerfile does not put libvgpu.so at $path" \
      "(--vgpu-library of a DaemonSet)"
done < <(grep -rhoE -- '--vgpu-library=[^ "]+' "$src/deploy" |
  sed 's/^--vgpu-library=//' | sort -u)

# The scheduler runs as the Deployment's numeric, non-root user.
user=$(stage "$images_dir/scheduler.Dockerfile" -1 | awk '/^USER / { u = $2 } END { print u }')
run_as=$(awk '/runAsUser:/ { print $2; exit }' "$src/deploy/deployment.yaml")
[[ $user =~ ^[0-9]+(:[0-9]+)?$ && ${user%%:*} != 0 ]] ||
  fail "scheduler.Dockerfile: USER '$user' is not a numeric non-root user"
[[ ${user%%:*} == "$run_as" ]] ||
  fail "scheduler.Dockerfile: USER $user, deployment.yaml runAsUser $run_as"

failures=$(wc -l <"$tmp/failures")
if ((failures)); then
  echo "image_packages_test: $failures failure(s)" >&2
  exit 1
fi
echo "== passed"
