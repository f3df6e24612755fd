#include "deviceshare/policy/stranded_capacity.h"

#include <algorithm>

namespace deviceshare {

int GrantStrandedPercent(const ContainerRequest& asked, int64_t memory_mib,
                         int32_t cores, const Gpu& gpu) {
  if (!asked.mig_profile.empty()) return 0;
  const int64_t extra_memory =
      std::max<int64_t>(0, memory_mib - asked.MemoryOn(gpu.memory_mib));
  const int64_t extra_cores = std::max<int64_t>(0, cores - asked.cores);
  const int64_t memory_percent =
      gpu.memory_mib > 0 ? extra_memory * 100 / gpu.memory_mib : 0;
  const int64_t core_percent =
      gpu.core_capacity > 0 ? extra_cores * 100 / gpu.core_capacity : 0;
  return static_cast<int>((memory_percent + core_percent) / 2);
}

int StrandedPercent(const PodRequest& request, const PodAllocation& placement,
                    const NodeState& node) {
  int64_t total = 0;
  for (const ContainerAllocation& container : placement.containers) {
    const size_t index = static_cast<size_t>(container.container_index);
    if (index >= request.containers.size()) continue;
    const ContainerRequest& asked = request.containers[index];
    for (const DeviceGrant& grant : container.devices) {
      std::optional<size_t> position = node.FindGpu(grant.uuid);
      if (!position) continue;
      total += GrantStrandedPercent(asked, grant.memory_mib, grant.cores,
                                    node.inventory().gpus[*position]);
    }
  }
  return static_cast<int>(std::min<int64_t>(total, 1 << 20));
}

}  // namespace deviceshare
