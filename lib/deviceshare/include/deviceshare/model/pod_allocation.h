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

#include "deviceshare/model/sharing_mode.h"

namespace deviceshare {

// One GPU share given to one container.
struct DeviceGrant {
  std::string uuid;        // physical GPU uuid
  int32_t gpu_index = -1;  // Gpu::index on the node; -1 = not resolved yet
  SharingMode mode = SharingMode::kHamiCore;
  int64_t memory_mib = 0;
  int32_t cores = 0;  // percent of the GPU's SMs

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

}  // namespace deviceshare

#endif  // DEVICESHARE_MODEL_POD_ALLOCATION_H_
