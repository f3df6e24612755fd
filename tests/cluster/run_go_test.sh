#!/usr/bin/env bash
# run_go_test.sh GO PACKAGE... [go test flags]: `go test` in this module,
# or exit 77 (ctest: skipped) where Go is missing or older than 1.26, or
# the control plane's binaries were not built.
set -euo pipefail
go=$1
shift
if [[ -z "$go" || ! -x "$go" ]]; then
  echo "skipped: no Go toolchain (Kubernetes v1.37 needs Go >= 1.26)"
  exit 77
fi
minor=$("$go" env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
if [[ -z "$minor" || "$minor" -lt 26 ]]; then
  echo "skipped: $("$go" version) is older than Go 1.26, which Kubernetes v1.37 needs"
  exit 77
fi
if [[ -n "${DEVICESHARE_K8S_BIN:-}" && ! -x "$DEVICESHARE_K8S_BIN/kube-apiserver" ]]; then
  echo "skipped: $DEVICESHARE_K8S_BIN/kube-apiserver not built (target kubernetes_binaries)"
  exit 77
fi
exec "$go" test -count=1 -timeout 14m "$@"
