#include "deviceshare/agent/discovered_gpu.h"

namespace deviceshare::agent {

Gpu ToPhysicalGpu(const DiscoveredGpu& gpu) {
  Gpu out;
  out.uuid = gpu.uuid;
  out.index = gpu.index;
  out.model = gpu.model;
  out.pci_device_id = gpu.pci_device_id;
  out.memory_mib = gpu.memory_mib;
  out.sm_count = gpu.sm_count;
  out.numa_node = gpu.numa_node;
  out.links = gpu.links;
  out.mig_capable = gpu.mig_capable;
  out.healthy = gpu.healthy;
  if (gpu.mig_enabled) {
    out.mode = SharingMode::kMig;
    for (const MigInstanceInfo& instance : gpu.mig_instances) {
      out.mig_instances.push_back(instance.slot);
    }
  }
  return out;
}

}  // namespace deviceshare::agent
