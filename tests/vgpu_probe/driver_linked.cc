// vgpu_probe_linked: the driver as a program linked against libcuda.so.1
// sees it, through its exported (versioned) symbols, so under LD_PRELOAD
// the preloaded library's exports are what it calls. NVML likewise.
#include <type_traits>

#include "driver.h"

// Weak, so that a symbol the library lacks is reported by name at run time
// instead of failing the link or the program's start.
extern "C" {
#define VGPU_PROBE_DECLARE(base, symbol) \
  __attribute__((weak)) std::remove_pointer_t<symbol##_fn> symbol;
VGPU_PROBE_CUDA_FUNCTIONS(VGPU_PROBE_DECLARE)
#undef VGPU_PROBE_DECLARE

__attribute__((weak)) nvmlReturn_t nvmlInit_v2();
__attribute__((weak)) nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned,
                                                                 nvmlDevice_t*);
__attribute__((weak)) nvmlReturn_t nvmlDeviceGetHandleByUUID(const char*,
                                                             nvmlDevice_t*);
__attribute__((weak)) nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t,
                                                           nvmlMemory_t*);
__attribute__((weak)) nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(
    nvmlDevice_t, vgpu_probe::NvmlMemoryV2*);
}

namespace vgpu_probe {

bool LoadLinkedDriver(Driver& driver, std::string& error) {
  std::string missing;
#define VGPU_PROBE_TAKE(base, symbol) \
  driver.base = &::symbol;            \
  if (driver.base == nullptr) missing += " " #symbol;
  VGPU_PROBE_CUDA_FUNCTIONS(VGPU_PROBE_TAKE)
#undef VGPU_PROBE_TAKE
  if (!missing.empty()) {
    error = "linked driver lacks:" + missing;
    return false;
  }
  return true;
}

bool LoadLinkedNvml(Nvml& nvml, std::string& error) {
  nvml.nvmlInit_v2 = &::nvmlInit_v2;
  nvml.nvmlDeviceGetHandleByIndex_v2 = &::nvmlDeviceGetHandleByIndex_v2;
  nvml.nvmlDeviceGetHandleByUUID = &::nvmlDeviceGetHandleByUUID;
  nvml.nvmlDeviceGetMemoryInfo = &::nvmlDeviceGetMemoryInfo;
  nvml.nvmlDeviceGetMemoryInfo_v2 = &::nvmlDeviceGetMemoryInfo_v2;
  return true;
}

}  // namespace vgpu_probe
