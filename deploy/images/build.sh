#!/usr/bin/env bash
# build.sh: builds the deviceshare images (and pushes them) with docker or
# podman. The images, their names and default tags are those of
# deploy/kustomization.yaml's `images:` (the one place they are written):
# each entry `name: deviceshare-<x>` is built from deploy/images/<x>.Dockerfile
# with the repository root as the context.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: deploy/images/build.sh [--engine docker|podman] [--push REGISTRY]
                              [--print] [TAG]

Builds the kit's images -- deviceshare-scheduler, deviceshare-node-agent,
and deviceshare-kube-scheduler (deploy/in-process) -- from
deploy/images/<name without deviceshare->.Dockerfile, the repository root
as the build context.

  TAG                 the tag of both images (default: each image's newTag
                      in deploy/kustomization.yaml)
  --engine E          docker or podman (default: docker if found, else
                      podman)
  --push REGISTRY     name the images REGISTRY/<name>:TAG and push them;
                      then point the kit at them with
                      `kustomize edit set image <name>=REGISTRY/<name>:TAG`
                      (in deploy/, and in deploy/dra/ for the node agent)
  --print             print the commands instead of running them (needs no
                      engine)
  -h, --help          this text

Without --push the images are named <newName>:TAG, as the kit expects.
USAGE
}

die() {
  echo "build.sh: $*" >&2
  exit 2
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# The kit's images, and those of its components (deploy/in-process).
kustomization=$root/deploy/kustomization.yaml
kustomizations=("$kustomization" "$root/deploy/in-process/kustomization.yaml")

engine="" registry="" print=0 tag=""
while (($#)); do
  case $1 in
    -h | --help)
      usage
      exit 0
      ;;
    --engine)
      (($# >= 2)) || die "--engine needs a value"
      engine=$2
      shift 2
      ;;
    --engine=*)
      engine=${1#*=}
      shift
      ;;
    --push)
      (($# >= 2)) || die "--push needs a registry"
      registry=$2
      shift 2
      ;;
    --push=*)
      registry=${1#*=}
      shift
      ;;
    --print)
      print=1
      shift
      ;;
    -*) die "unknown flag $1 (see --help)" ;;
    *)
      [[ -z $tag ]] || die "one tag only: $tag, $1"
      tag=$1
      shift
      ;;
  esac
done

case $engine in
  "")
    if command -v docker >/dev/null 2>&1; then
      engine=docker
    elif command -v podman >/dev/null 2>&1; then
      engine=podman
    elif ((print)); then
      engine=docker # only printed
    else
      die "neither docker nor podman is installed (--engine, --print)"
    fi
    ;;
  docker | podman)
    ((print)) || command -v "$engine" >/dev/null 2>&1 ||
      die "$engine is not installed"
    ;;
  *) die "--engine: \"$engine\" is not one of docker, podman" ;;
esac
registry=${registry%/}

# The `images:` entries as "name newName newTag" lines. The kit writes each
# entry as `- name:` followed by its newName and newTag.
images() {
  awk '
    FNR == 1 {
      if (name != "") print name, new_name, new_tag
      name = ""; in_images = 0
    }
    /^images:/ { in_images = 1; next }
    /^[^ #-]/ { in_images = 0 }
    !in_images { next }
    /^ *- *name:/ {
      if (name != "") print name, new_name, new_tag
      name = $NF; new_name = name; new_tag = ""
      next
    }
    /^ *newName:/ { new_name = $NF }
    /^ *newTag:/ { new_tag = $NF }
    END { if (name != "") print name, new_name, new_tag }
  ' "${kustomizations[@]}" | tr -d '"'"'"
}

# Prints the command, then runs it unless --print.
run() {
  printf '%q ' "$@" | sed 's/ $//'
  echo
  ((print)) || "$@"
}

found=0
while read -r name new_name new_tag; do
  found=1
  dockerfile=deploy/images/${name#deviceshare-}.Dockerfile
  [[ -f $root/$dockerfile ]] ||
    die "$kustomization names $name, but there is no $dockerfile"
  image_tag=${tag:-$new_tag}
  [[ -n $image_tag ]] || die "$name: no newTag in $kustomization and no TAG"
  if [[ -n $registry ]]; then
    ref=$registry/$name:$image_tag
  else
    ref=$new_name:$image_tag
  fi
  run "$engine" build -f "$root/$dockerfile" -t "$ref" "$root"
  if [[ -n $registry ]]; then
    run "$engine" push "$ref"
  fi
done < <(images)
((found)) || die "no images: entries in $kustomization"
