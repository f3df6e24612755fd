// File: simulate/synthetic.h
//
// A generated cluster and workload for scale runs, deterministic for a seed
// on every platform (std::mt19937_64 and plain modulo arithmetic, no
// std::*_distribution, whose output differs between standard libraries).
//
// Nodes "node-00000", "node-00001", ...: `gpus_per_node` x "NVIDIA
// A100-SXM4-80GB" (81920 MiB, registered with the config: split count and
// scaling), the first half on NUMA node 0 and the rest on NUMA node 1,
// 128 CPUs (128000m) and 1 TiB of memory.
//
// Pods "default/pod-000000", ... (one container "main"), drawn from the mix
//   70% a share of one GPU: memory 2..40 GiB in 2 GiB steps, cores 0..60 in
//       steps of 10; 1..8 CPUs, 4..32 GiB of memory;
//   20% one whole GPU (cores 100): 8 CPUs, 64 GiB;
//   10% 2, 4 or 8 whole GPUs (equally likely, never more than
//       gpus_per_node; one whole GPU when gpus_per_node is 1): 8 CPUs and
//       64 GiB per GPU.
#ifndef DEVICESHARE_SIMULATE_SYNTHETIC_H_
#define DEVICESHARE_SIMULATE_SYNTHETIC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "deviceshare/config/device_config.h"
#include "deviceshare/model/node_inventory.h"
#include "deviceshare/model/pod_request.h"

namespace deviceshare::simulate {

inline constexpr char kSyntheticGpuModel[] = "NVIDIA A100-SXM4-80GB";
inline constexpr int64_t kSyntheticGpuMemoryMib = 81920;

absl::StatusOr<std::vector<NodeInventory>> SyntheticNodes(
    int64_t nodes, int64_t gpus_per_node, const DeviceConfig& config);

std::vector<PodRequest> SyntheticPods(int64_t pods, int64_t gpus_per_node,
                                      uint64_t seed);

// One line describing the mix above, for --help and the report.
std::string SyntheticMixDescription();

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_SYNTHETIC_H_
