#!/usr/bin/env bash
# go_test.sh: gofmt, `go vet`, staticcheck (pinned as a tool in go.mod) and
# `go test -race ./...` in bindings/go against this build's C
# API (`ctest -L go`), the example's test included (it runs
# deviceshare-scheduler simulate beside it). Skipped (exit 77) only when
# `go` is missing: `apt-get install golang-go`, as .ci/install-deps does.
# Go's build cache lives in a temporary folder, removed at exit.
#
# usage: go_test.sh SOURCE_DIR CAPI_INCLUDE_DIR CAPI_LIBRARY SCHEDULER
set -euo pipefail

src=$1 include_dir=$2 library=$3 scheduler=$4
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
export GOCACHE=$tmp/cache GOPATH=$tmp/path GOTMPDIR=$tmp GOFLAGS=-mod=mod \
  GOTOOLCHAIN=local GO111MODULE=on CGO_ENABLED=1
export CGO_CFLAGS="-I$include_dir"
export CGO_LDFLAGS="-L$library_dir -Wl,-rpath,$library_dir"
export DEVICESHARE_SCHEDULER=$scheduler
cd "$src/bindings/go"
go version
unformatted=$(gofmt -l .)
[[ -z $unformatted ]] || { echo "go_test: not gofmt'ed: $unformatted" >&2; exit 1; }
go vet ./...
go tool staticcheck ./...
go test -count=1 -race ./...
