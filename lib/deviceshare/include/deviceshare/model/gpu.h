// File: model/gpu.h
//
// Gpu: the static facts of one physical GPU, as the node agent reports them
// (or as a registration annotation carries them). A value type; the
// scheduler's mutable view of a GPU is its DeviceLedger.
#ifndef DEVICESHARE_MODEL_GPU_H_
#define DEVICESHARE_MODEL_GPU_H_

#include <cstdint>
#include <string>
#include <vector>

#include "deviceshare/model/mig_slot.h"
#include "deviceshare/model/sharing_mode.h"

namespace deviceshare {

// How well this GPU talks to a peer, as hami.io/node-nvidia-score rates it
// (HAMi's device plugin sums its P2P and NVLink figures: more is better).
struct GpuPairScore {
  std::string peer_uuid;
  int32_t score = 0;

  bool operator==(const GpuPairScore& other) const = default;
};

// A direct link from one GPU to a peer on the same node.
struct GpuLink {
  int32_t peer_index = 0;  // Gpu::index of the peer
  int32_t nvlinks = 0;     // number of NVLink lanes; 0 = PCIe only
  bool same_numa = false;  // PCIe path stays on one CPU socket

  bool operator==(const GpuLink& other) const = default;
};

struct Gpu {
  std::string uuid;   // "GPU-0fc3eda5-..."
  int32_t index = 0;  // NVML index (minor order) on the node
  // The type string as registered, e.g. "NVIDIA-NVIDIA A100-SXM4-80GB" or
  // "NVIDIA H200 NVL". Model filters match a case-insensitive substring.
  std::string model;
  uint32_t pci_device_id = 0;  // 0 = unknown
  // Memory the scheduler may hand out, in MiB, as registered. When the node
  // oversubscribes memory (deviceMemoryScaling > 1) this is already scaled.
  int64_t memory_mib = 0;
  int32_t sm_count = 0;  // 0 = unknown
  // SM share capacity in percent of one GPU: 100 x deviceCoreScaling.
  int32_t core_capacity = 100;
  int32_t split_count = 10;  // most tenants (container slots) at once
  int32_t numa_node = 0;
  std::vector<GpuLink> links;
  // From the node's hami.io/node-nvidia-score; read by topology-aware.
  std::vector<GpuPairScore> pair_scores;
  bool mig_capable = false;
  bool mps_capable = false;
  bool healthy = true;
  // Listed in the node's hami.io/device-cordon: no new pod, the pods on it
  // stay (a per-GPU `kubectl cordon`).
  bool cordoned = false;
  SharingMode mode = kDefaultSharingMode;  // how the GPU is operated now
  // MIG GPU instances that exist on the hardware now, as the node agent
  // found them (mode mig only; empty = none or not reported). Pods' grants
  // may reuse a free one; an idle GPU may be repartitioned.
  std::vector<MigSlot> mig_instances;

  bool operator==(const Gpu& other) const = default;
};

}  // namespace deviceshare

#endif  // DEVICESHARE_MODEL_GPU_H_
