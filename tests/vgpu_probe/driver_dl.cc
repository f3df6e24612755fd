// Fills the driver table the two ways a dynamically loading program does:
// cuGetProcAddress_v2 by base name at CUDA 13.0 (the runtime's way), or
// dlsym of each versioned name.
#include <dlfcn.h>

#include "driver.h"

namespace vgpu_probe {
namespace {

// The version the runtime passes: the driver then picks the newest
// versioned implementation of each base name, as it would for an
// application built with CUDA 13.
constexpr int kCudaVersion = 13000;

void* OpenOnce(const char* name, std::string& error) {
  void* handle = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    error = std::string("dlopen ") + name + ": " + (why ? why : "?");
  }
  return handle;
}

}  // namespace

bool LoadDriver(Resolve resolve, Driver& driver, std::string& error) {
  if (resolve == Resolve::kLinked) return LoadLinkedDriver(driver, error);
  void* handle = OpenOnce("libcuda.so.1", error);
  if (handle == nullptr) return false;
  std::string missing;
  if (resolve == Resolve::kDlsym) {
#define VGPU_PROBE_DLSYM(base, symbol)                                 \
  driver.base = reinterpret_cast<symbol##_fn>(dlsym(handle, #symbol)); \
  if (driver.base == nullptr) missing += " " #symbol;
    VGPU_PROBE_CUDA_FUNCTIONS(VGPU_PROBE_DLSYM)
#undef VGPU_PROBE_DLSYM
  } else {
    auto get_proc = reinterpret_cast<cuGetProcAddress_v2_fn>(
        dlsym(handle, "cuGetProcAddress_v2"));
    if (get_proc == nullptr) {
      error = "libcuda.so.1 has no cuGetProcAddress_v2";
      return false;
    }
#define VGPU_PROBE_GETPROC(base, symbol)                                  \
  {                                                                       \
    void* pfn = nullptr;                                                  \
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;  \
    const CUresult code = get_proc(#base, &pfn, kCudaVersion,             \
                                   CU_GET_PROC_ADDRESS_DEFAULT, &status); \
    if (code != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS) {  \
      pfn = nullptr;                                                      \
    }                                                                     \
    driver.base = reinterpret_cast<symbol##_fn>(pfn);                     \
    if (driver.base == nullptr) missing += " " #base;                     \
  }
    VGPU_PROBE_CUDA_FUNCTIONS(VGPU_PROBE_GETPROC)
#undef VGPU_PROBE_GETPROC
  }
  if (!missing.empty()) {
    error = "driver entry points not found:" + missing;
    return false;
  }
  return true;
}

bool LoadNvml(Resolve resolve, Nvml& nvml, std::string& error) {
  if (resolve == Resolve::kLinked) return LoadLinkedNvml(nvml, error);
  void* handle = OpenOnce("libnvidia-ml.so.1", error);
  if (handle == nullptr) return false;
#define VGPU_PROBE_NVML(name) \
  nvml.name = reinterpret_cast<decltype(nvml.name)>(dlsym(handle, #name));
  VGPU_PROBE_NVML(nvmlInit_v2)
  VGPU_PROBE_NVML(nvmlDeviceGetHandleByIndex_v2)
  VGPU_PROBE_NVML(nvmlDeviceGetHandleByUUID)
  VGPU_PROBE_NVML(nvmlDeviceGetMemoryInfo)
  VGPU_PROBE_NVML(nvmlDeviceGetMemoryInfo_v2)
#undef VGPU_PROBE_NVML
  return true;
}

}  // namespace vgpu_probe
