#!/usr/bin/env bash
# go_test.sh: gofmt, `go vet`, staticcheck (pinned as a tool in go.mod) and
# `go test ./...` in a Go module of the repository that links this
# build's C API (`ctest -L go`): bindings/go (the default; its tests run
# with -race, the example's test included, which runs
# deviceshare-scheduler simulate beside it) or a host such as
# plugins/kube-scheduler. Skipped (exit 77) only when `go` is missing, as
# .ci/install-deps installs it.
#
# bindings/go's build cache lives in a temporary folder, removed at exit.
# A host builds on Kubernetes' modules: it uses the user's build cache,
# which the control plane's build (tests/cluster) has filled with them, and
# runs without -race (the race detector would compile all of Kubernetes
# again, several minutes on 2 cores; the binding's concurrency is raced
# in bindings/go).
#
# usage: go_test.sh SOURCE_DIR CAPI_INCLUDE_DIR CAPI_LIBRARY SCHEDULER [MODULE]
set -euo pipefail

src=$1 include_dir=$2 library=$3 scheduler=$4 module=${5:-bindings/go}
if ! command -v go >/dev/null 2>&1; then
  echo "go_test: skipped: go is not installed (apt-get install golang-go)"
  exit 77
fi
for built in "$library" "$scheduler"; do
  [[ -e $built ]] || { echo "go_test: $built is not built" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/deviceshare-go-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
library_dir=$(dirname "$library")
# The module cache stays the user's: staticcheck's modules (a tool of
# bindings/go/go.mod) are downloaded once, not per run.
export GOMODCACHE=${GOMODCACHE:-$(go env GOMODCACHE)}
race=(-race)
if [[ $module == bindings/go ]]; then
  export GOCACHE=$tmp/cache
else
  race=()
fi
export GOPATH=$tmp/path GOTMPDIR=$tmp GOFLAGS=-mod=mod \
  GOTOOLCHAIN=local GO111MODULE=on CGO_ENABLED=1
export CGO_CFLAGS="-I$include_dir"
export CGO_LDFLAGS="-L$library_dir -Wl,-rpath,$library_dir"
export DEVICESHARE_SCHEDULER=$scheduler
cd "$src/$module"
go version
unformatted=$(gofmt -l .)
[[ -z $unformatted ]] || { echo "go_test: not gofmt'ed: $unformatted" >&2; exit 1; }
go vet ./...
go tool staticcheck ./...
go test -count=1 "${race[@]}" ./...
