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
#include "deviceshare/model/pcie_level.h"
#include "deviceshare/model/sharing_mode.h"

namespace deviceshare {

// How well this GPU talks to a peer, as hami.io/node-nvidia-score rates it
// (HAMi's device plugin sums its P2P and NVLink figures: more is better).
struct GpuPairScore {
  std::string peer_uuid;
  int32_t score = 0;

  bool operator==(const GpuPairScore& other) const = default;
};

// How one GPU reaches a peer on the same node, as the node agent found it
// (NVML's NVLink remote ends and topology common ancestor). Carried in the
// registration's optional `links` member and the short form's `links`;
// read by topology-aware (policy/topology/gpu_set_search.h).
struct GpuLink {
  int32_t peer_index = 0;  // Gpu::index of the peer
  int32_t nvlinks = 0;     // number of NVLink lanes; 0 = PCIe only
  bool same_numa = false;  // PCIe path stays on one CPU socket
  // The closest PCIe element the two share; kSystem when not known.
  PcieLevel pcie = PcieLevel::kSystem;

  bool operator==(const GpuLink& other) const = default;
};

// Where one MIG GPU instance of a profile may sit: memory slices
// [start, start + size), as NVML's GetGpuInstancePossiblePlacements gives.
struct MigPlacement {
  int32_t start = 0;
  int32_t size = 0;

  bool operator==(const MigPlacement& other) const = default;
};

// A MIG GPU-instance profile as the node registered it (HAMi's
// `migProfiles`, filled by its device plugin from NVML). When a GPU has
// them they are its catalogue: only these profiles at these placements,
// with this memory, are handed out (HAMi's scheduler knows no other).
struct RegisteredMigProfile {
  std::string name;        // "1g.5gb"
  int64_t memory_mib = 0;  // the instance's memory (NVML memorySizeMB)
  // Share of the GPU's SMs in percent, ceil(profile SMs x 100 / full SMs);
  // what a grant of the profile is charged. 0 = not reported.
  int32_t cores = 0;
  int32_t slice_count = 0;  // NVML sliceCount (compute slices)
  std::vector<MigPlacement> placements;
  // NVML instanceCount: how many instances of the profile fit the GPU. The
  // node agent knows it; it is not on the wire (HAMi's MigProfile tags it
  // `json:"-"`), so a decoded registration always has 0.
  int32_t instance_count = 0;

  bool operator==(const RegisteredMigProfile& other) const = default;
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
  // The MIG profiles the node registered for this GPU (mode mig; empty =
  // none registered: the built-in table for its model applies).
  std::vector<RegisteredMigProfile> mig_profiles;
  // migProfiles entries the registration carried that Go's decoder accepts
  // but no NVML report can hold (a name not <N>g.<M>gb, a name twice, a
  // negative number, a placement of size 0 or past memory slice 32,
  // placements of different sizes). HAMi serves such a node, so it is
  // served; each is left out of mig_profiles and kept here as why, e.g.
  // `hami.io/node-nvidia-register entry 0 field migProfiles[1].name: "big"
  // is not a MIG profile name (want <N>g.<M>gb)`. Never encoded.
  std::vector<std::string> mig_profiles_left_out;
  // `links` entries of the registration that cannot describe a link (a
  // peer that is no other device of the node, a negative or huge lane
  // count, an unknown PCIe level, a member of the wrong type). HAMi's and
  // Volcano's readers ignore the member, so the device is served with the
  // other links; each left out one is kept here as why, e.g.
  // `hami.io/node-nvidia-register entry 0 field links[1].pcie: "bridge" is
  // not a PCIe level (want board, switch, switches, hostbridge, numa or
  // system)`. Never encoded.
  std::vector<std::string> links_left_out;

  bool operator==(const Gpu& other) const = default;
};

}  // namespace deviceshare

#endif  // DEVICESHARE_MODEL_GPU_H_
