// File: model/pod_allocation.h
//
// PodAllocation: the decision for one pod: the node and, per container, the
// GPU shares granted. It is the single source of truth: the scheduler writes
// it to the pod (in the pod's dialect, see codec/) and the node agent reads
// it back to build each container's environment. A value type.
#ifndef DEVICESHARE_MODEL_POD_ALLOCATION_H_
#define DEVICESHARE_MODEL_POD_ALLOCATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "deviceshare/model/mig_slot.h"
#include "deviceshare/model/sharing_mode.h"

namespace deviceshare {

// One GPU share given to one container.
struct DeviceGrant {
  std::string uuid;        // physical GPU uuid
  int32_t gpu_index = -1;  // Gpu::index on the node; -1 = not resolved yet
  SharingMode mode = kDefaultSharingMode;
  int64_t memory_mib = 0;
  int32_t cores = 0;  // percent of the GPU's SMs
  // Mode mig: the instance granted (memory_mib and cores are then the
  // instance's memory and compute share), what the node agent must do to
  // get it, and, once it exists, its runtime identity.
  MigSlot mig;
  MigAction mig_action = MigAction::kNone;
  std::string mig_uuid;              // "MIG-..."; empty until created
  int32_t gpu_instance_id = -1;      // NVML GPU instance id; -1 = unknown
  int32_t compute_instance_id = -1;  // NVML compute instance id

  // Whether the grant is a hardware partition (a MIG instance): it names a
  // slot, a profile or a configMap group.
  bool has_partition() const {
    return mig.start >= 0 || !mig.profile.empty() || !mig.group.empty();
  }

  bool operator==(const DeviceGrant& other) const = default;
};

struct ContainerAllocation {
  int32_t container_index = 0;  // position in PodRequest::containers
  std::string name;
  bool is_init = false;
  std::vector<DeviceGrant> devices;  // empty for a container without GPUs

  bool operator==(const ContainerAllocation& other) const = default;
};

struct PodAllocation {
  std::string pod_uid;
  std::string pod_key;  // "namespace/name"
  std::string node_name;
  // One entry per container of the pod, in PodRequest order.
  std::vector<ContainerAllocation> containers;

  bool operator==(const PodAllocation& other) const = default;
};

// Whether two containers' grants give the same share, so that either
// container may be handed the other's: per device in order the same GPU
// uuid, memory, cores, MIG-or-not and MIG slot (profile, start). Runtime ids
// (MIG uuid, instance ids) do not count, nor the hami-core/mps distinction:
// that is the GPU's, and records read back do not carry it.
bool SameShare(const std::vector<DeviceGrant>& a,
               const std::vector<DeviceGrant>& b);

}  // namespace deviceshare

#endif  // DEVICESHARE_MODEL_POD_ALLOCATION_H_
