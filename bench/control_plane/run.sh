#!/usr/bin/env bash
# bench/control_plane/run.sh [NODES...]   (default: 500 5000)
#
# Throughput where users feel it, on the real control plane of tests/cluster
# (etcd, kube-apiserver, kube-controller-manager, kube-scheduler built from
# Kubernetes v1.37.2): pods/s from creation to bound for 10,000 pods created
# at once (PODS overrides), on NODES Node objects of 8 H100s, for
#   plain      the stock kube-scheduler, pods asking no GPU (the ceiling)
#   share      GPU-share pods of both dialects through the extender
#   dra-stock  DRA claims from a template, the stock kube-scheduler's
#              DynamicResources allocating from deviceshare's slices
#   dra-serve  the same claims allocated by the extender
# and the ratios of each row to plain and to dra-stock, one line per row
# (tests/cluster/cmd/throughput says what runs). Needs the CMake build in
# BUILD_DIR (default ./build): `cmake --build build`. Not a test: minutes.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD_DIR:-$repo/build}
pods=${PODS:-10000}
export PATH="$PATH:/usr/local/go/bin"
cmake --build "$build" --target kubernetes_binaries deviceshare-scheduler \
  deviceshare-node-agent fake_nvml >/dev/null
(cd "$repo/tests/cluster" && go build -o "$build/k8s-bin/throughput" ./cmd/throughput)
nodes=("$@")
((${#nodes[@]})) || nodes=(500 5000)
for n in "${nodes[@]}"; do
  out=$("$build/k8s-bin/throughput" --bin "$build/k8s-bin" --repo "$repo" \
          --build "$build" --nodes "$n" --pods "$pods")
  echo "$out"
  awk -v n="$n" '
    { split($4, kv, "="); rate[$1] = kv[2]; order[++rows] = $1 }
    END {
      printf "| nodes | row | pods/s | / plain | / dra-stock |\n|---|---|---|---|---|\n"
      for (i = 1; i <= rows; i++) {
        r = order[i]
        printf "| %d | %s | %.1f | %.2f | %.2f |\n", n, r, rate[r],
               rate[r] / rate["plain"], rate[r] / rate["dra-stock"]
      }
    }' <<<"$out"
done
