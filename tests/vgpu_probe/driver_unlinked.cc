// The dlopen binary (vgpu_probe) has no link-time driver; the linked
// variant is a separate executable, vgpu_probe_linked.
#include "driver.h"

namespace vgpu_probe {

bool LoadLinkedDriver(Driver&, std::string& error) {
  error = "--resolve=linked needs the vgpu_probe_linked executable";
  return false;
}

bool LoadLinkedNvml(Nvml&, std::string& error) {
  error = "linked NVML needs the vgpu_probe_linked executable";
  return false;
}

}  // namespace vgpu_probe
