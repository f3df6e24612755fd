#!/usr/bin/env bash
# build_script_test.sh: deploy/images/build.sh's commands, printed with
# --print (no container engine needed; `ctest -L images`): one build per
# `images:` entry of deploy/kustomization.yaml and
# deploy/in-process/kustomization.yaml, from the Dockerfile of its
# name, tagged with its newName and newTag (or the TAG given), pushed under
# --push's registry; bad flags exit 2. Writes nothing.
#
# usage: build_script_test.sh SOURCE_DIR
set -euo pipefail

src=$(cd "$1" && pwd)
script=$src/deploy/images/build.sh
failures=0
fail() {
  echo "build_script_test: FAIL: $*" >&2
  failures=$((failures + 1))
}

bash -n "$script" || fail "bash -n $script"

# "name newName newTag" of each images: entry, as the kit writes them.
# The kit's and its in-process component's.
entries=$(awk 'FNR == 1 { on = 0 } /^images:/ { on = 1; next } /^[^ #-]/ { on = 0 }
  on && /- *name:/ { name = $NF } on && /newName:/ { new_name = $NF }
  on && /newTag:/ { print name, new_name, $NF }' "$src/deploy/kustomization.yaml" \
  "$src/deploy/in-process/kustomization.yaml")
[[ -n $entries ]] || fail "no images: entries in deploy/kustomization.yaml"
grep -q "^deviceshare-kube-scheduler " <<<"$entries" ||
  fail "no deviceshare-kube-scheduler entry in deploy/in-process/kustomization.yaml"

# Fails unless output $1 has the line $2 exactly.
has_line() {
  grep -qxF -- "$2" <<<"$1" || fail "no line '$2' in:"$'\n'"$1"
}

default=$("$script" --print --engine docker)
custom=$("$script" --print --engine podman --push registry.example/team/ 9.8.7)
while read -r name new_name new_tag; do
  dockerfile=$src/deploy/images/${name#deviceshare-}.Dockerfile
  [[ -f $dockerfile ]] || fail "no $dockerfile for image $name"
  has_line "$default" \
    "docker build -f $dockerfile -t $new_name:$new_tag $src"
  has_line "$custom" \
    "podman build -f $dockerfile -t registry.example/team/$name:9.8.7 $src"
  has_line "$custom" "podman push registry.example/team/$name:9.8.7"
done <<<"$entries"
(($(wc -l <<<"$default") == $(wc -l <<<"$entries"))) ||
  fail "--print ran other commands:"$'\n'"$default"
grep -q push <<<"$default" && fail "pushed without --push"

"$script" --help | grep -q -- '--push REGISTRY' || fail "--help"
for bad in "--engine nerdctl --print" "--bogus" "--print a b"; do
  # Word splitting of the arguments is intended.
  # shellcheck disable=SC2086
  if "$script" $bad >/dev/null 2>&1; then
    fail "build.sh $bad succeeded"
  elif (($? != 2)); then
    fail "build.sh $bad: exit status not 2"
  fi
done

if ((failures)); then
  echo "build_script_test: $failures failure(s)" >&2
  exit 1
fi
echo "build_script_test: passed"
