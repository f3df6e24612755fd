#!/usr/bin/env bash
# bench/control_plane/run.sh [NODES...]   (default: 500 5000)
#
# Throughput where users feel it, on the real control plane of tests/cluster
# (etcd, kube-apiserver, kube-controller-manager, kube-scheduler built from
# Kubernetes v1.37.2): pods/s from creation to bound for 10,000 pods created
# at once (PODS overrides), on NODES Node objects of 8 H100s, for
#   plain      the stock kube-scheduler, pods asking no GPU (the ceiling)
#   share      GPU-share pods of both dialects through the extender
#   inprocess  the same pods through deviceshare-kube-scheduler (the
#              DeviceShare plugin in-process)
#   dra-stock  DRA claims from a template, the stock kube-scheduler's
#              DynamicResources allocating from deviceshare's slices
#   dra-serve  the same claims allocated by the extender
# and the ratios of each row to plain and to dra-stock, one line per row
# (tests/cluster/cmd/throughput says what runs). A row still binding after
# DEADLINE (default 20m) is reported at the rate it bound the pods it did,
# with that count in the "bound" column. Needs the CMake build in
# BUILD_DIR (default ./build): `cmake --build build`. Not a test: minutes.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD_DIR:-$repo/build}
pods=${PODS:-10000}
deadline=${DEADLINE:-20m}
export PATH="$PATH:/usr/local/go/bin"
cmake --build "$build" --target kubernetes_binaries deviceshare-scheduler \
  deviceshare-node-agent fake_nvml deviceshare_kube_scheduler >/dev/null
(cd "$repo/tests/cluster" && go build -o "$build/k8s-bin/throughput" ./cmd/throughput)
nodes=("$@")
((${#nodes[@]})) || nodes=(500 5000)
status=0
for n in "${nodes[@]}"; do
  out=$("$build/k8s-bin/throughput" --bin "$build/k8s-bin" --repo "$repo" \
          --build "$build" --nodes "$n" --pods "$pods" --deadline "$deadline") || status=1
  echo "$out"
  awk -v n="$n" '
    { split($4, kv, "="); rate[$1] = kv[2]; split($5, kv, "="); bound[$1] = kv[2]
      order[++rows] = $1 }
    function ratio(a, b) { return b > 0 ? sprintf("%.2f", a / b) : "-" }
    END {
      printf "| nodes | row | pods/s | bound | / plain | / dra-stock |\n|---|---|---|---|---|---|\n"
      for (i = 1; i <= rows; i++) {
        r = order[i]
        printf "| %d | %s | %.1f | %d | %s | %s |\n", n, r, rate[r], bound[r],
               ratio(rate[r], rate["plain"]), ratio(rate[r], rate["dra-stock"])
      }
    }' <<<"$out"
done
exit "$status"
