#include "deviceshare/agent/discovered_gpu.h"

#include "deviceshare/mig/mig_backend.h"

namespace deviceshare::agent {
namespace {

// The facts a DiscoveredGpu and a Gpu both carry, copied from one to the
// other in either direction: the one list to extend when both gain a fact.
template <typename From, typename To>
void CopyCommonFacts(const From& from, To& to) {
  to.uuid = from.uuid;
  to.index = from.index;
  to.model = from.model;
  to.pci_device_id = from.pci_device_id;
  to.memory_mib = from.memory_mib;
  to.sm_count = from.sm_count;
  to.numa_node = from.numa_node;
  to.links = from.links;
  to.mig_capable = from.mig_capable;
  to.healthy = from.healthy;
}

}  // namespace

Gpu ToPhysicalGpu(const DiscoveredGpu& gpu) {
  Gpu out;
  CopyCommonFacts(gpu, out);
  if (gpu.mig_enabled) {
    out.mode = mig::kMode;
    for (const MigInstanceInfo& instance : gpu.mig_instances) {
      out.mig_instances.push_back(instance.slot);
    }
  }
  return out;
}

DiscoveredGpu FromPhysicalGpu(const Gpu& gpu) {
  DiscoveredGpu out;
  CopyCommonFacts(gpu, out);
  out.mig_enabled = gpu.mode == mig::kMode;
  out.mig_capable = gpu.mig_capable || out.mig_enabled;
  return out;
}

}  // namespace deviceshare::agent
