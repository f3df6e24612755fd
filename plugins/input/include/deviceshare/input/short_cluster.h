// File: input/short_cluster.h
//
// The short form of a cluster, for people writing one by hand (simulate's
// `--cluster`, the node agent's `--inventory`):
//
//   nodes:
//   - name: gpu-a
//     cpu_milli: 64000          # optional; 0 or absent = not tracked
//     memory_mib: 262144        # optional; 0 or absent = not tracked
//     dra: false                # optional; true: the GPUs are published
//                               # as DRA ResourceSlices (serve --dra)
//     gpus:
//     - {model: "NVIDIA A100-SXM4-80GB", memory_mib: 81920, count: 8,
//        split: 10, numa: 0, mode: hami-core}
//     links:                    # optional: how the GPUs are connected
//     - {gpus: [0, 1, 2, 3], nvlinks: 12}
//     - {gpus: [0, 1], pcie: switch, numa: true}
//
// GPU keys: model and memory_mib (physical MiB) are required; count
// (default 1), split (default nvidia.deviceSplitCount), numa (default 0),
// mode (hami-core | mig | mps, default hami-core), uuid (only with count 1;
// default GeneratedGpuUuid), healthy (default true) and cores (the core
// capacity in percent as registered; default 100 x deviceCoreScaling).
// Each GPU is registered the way the node plugin would (RegisteredGpu:
// deviceMemoryScaling applies to memory_mib), then `split` / `cores`
// override the config when given. GPU indexes run across a node's entries
// in order.
//
// Links (read by topology-aware): each entry gives every pair of its
// `gpus` (two or more GPU indexes of the node) the members it has:
// nvlinks (NVLink lanes, 0-1024), pcie (the closest PCIe element they
// share: board, switch, switches, hostbridge, numa or system) and numa
// (their path stays on one NUMA node); a later entry overrides an
// earlier one member by member. With any entry, every GPU gets a link to
// every other: what the entries say, else 0 lanes, numa as the GPUs' numa
// say and pcie numa (same NUMA) or system. Without `links` the GPUs have
// none.
//
// Unknown keys and values of the wrong type are errors naming the path,
// e.g. `nodes[0].gpus[1].splt: unknown key`.
//
// Thread safety: pure functions.
#ifndef DEVICESHARE_INPUT_SHORT_CLUSTER_H_
#define DEVICESHARE_INPUT_SHORT_CLUSTER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "deviceshare/config/device_config.h"
#include "deviceshare/model/node_inventory.h"
#include "nlohmann/json.hpp"

namespace deviceshare::input {

// True for a document that is a mapping with `nodes` and no `kind`.
bool IsShortCluster(const nlohmann::json& document);

struct ShortNode {
  NodeInventory inventory;
  // `dra: true`: the node's agent runs `serve --dra`, so its GPUs are
  // served as DRA devices, not registered in an annotation.
  bool dra = false;
};

absl::StatusOr<std::vector<ShortNode>> ParseShortClusterNodes(
    const nlohmann::json& document, const DeviceConfig& config);

// The inventories alone (the `dra` switch is for simulate).
absl::StatusOr<std::vector<NodeInventory>> ParseShortCluster(
    const nlohmann::json& document, const DeviceConfig& config);

}  // namespace deviceshare::input

#endif  // DEVICESHARE_INPUT_SHORT_CLUSTER_H_
