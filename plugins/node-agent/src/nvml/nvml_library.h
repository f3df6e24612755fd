// File: nvml/nvml_library.h
//
// NvmlLibrary: libnvidia-ml loaded with dlopen, its symbols resolved by
// their versioned names (nvmlInit_v2, nvmlDeviceGetPciInfo_v3, ...), and
// nvmlInit_v2 called once; the destructor calls nvmlShutdown and dlcloses.
//
// A few symbols every driver since r450 exports are required (init, count,
// handles, uuid, name, PCI info, memory); everything else is optional and
// null when the library lacks it (an old driver, the tests' fake), so
// callers degrade instead of failing discovery.
//
// Thread safety: the function table is immutable after Open(); NVML itself
// is thread-safe. Callers serialize what they keep around it.
#ifndef DEVICESHARE_AGENT_NVML_NVML_LIBRARY_H_
#define DEVICESHARE_AGENT_NVML_NVML_LIBRARY_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpu_abi/nvml_abi.h"

namespace deviceshare::agent {

struct NvmlFunctions {
  // Required.
  nvmlReturn_t (*Init)();
  nvmlReturn_t (*Shutdown)();
  const char* (*ErrorString)(nvmlReturn_t);
  nvmlReturn_t (*DeviceGetCount)(unsigned int*);
  nvmlReturn_t (*DeviceGetHandleByIndex)(unsigned int, nvmlDevice_t*);
  nvmlReturn_t (*DeviceGetHandleByUUID)(const char*, nvmlDevice_t*);
  nvmlReturn_t (*DeviceGetUUID)(nvmlDevice_t, char*, unsigned int);
  nvmlReturn_t (*DeviceGetName)(nvmlDevice_t, char*, unsigned int);
  nvmlReturn_t (*DeviceGetPciInfo)(nvmlDevice_t, nvmlPciInfo_t*);
  nvmlReturn_t (*DeviceGetMemoryInfo)(nvmlDevice_t, nvmlMemory_t*);

  // Optional: null when the library does not export them.
  nvmlReturn_t (*SystemGetDriverVersion)(char*, unsigned int);
  nvmlReturn_t (*DeviceGetCudaComputeCapability)(nvmlDevice_t, int*, int*);
  nvmlReturn_t (*DeviceGetAttributes)(nvmlDevice_t, nvmlDeviceAttributes_t*);
  nvmlReturn_t (*DeviceGetTopologyCommonAncestor)(nvmlDevice_t, nvmlDevice_t,
                                                  nvmlGpuTopologyLevel_t*);
  nvmlReturn_t (*DeviceGetNvLinkState)(nvmlDevice_t, unsigned int,
                                       nvmlEnableState_t*);
  nvmlReturn_t (*DeviceGetNvLinkRemotePciInfo)(nvmlDevice_t, unsigned int,
                                               nvmlPciInfo_t*);
  nvmlReturn_t (*DeviceGetMigMode)(nvmlDevice_t, unsigned int*, unsigned int*);
  nvmlReturn_t (*DeviceGetGpuInstanceProfileInfoV)(
      nvmlDevice_t, unsigned int, nvmlGpuInstanceProfileInfo_v2_t*);
  nvmlReturn_t (*DeviceGetGpuInstancePossiblePlacements)(
      nvmlDevice_t, unsigned int, nvmlGpuInstancePlacement_t*, unsigned int*);
  nvmlReturn_t (*DeviceGetGpuInstances)(nvmlDevice_t, unsigned int,
                                        nvmlGpuInstance_t*, unsigned int*);
  nvmlReturn_t (*DeviceGetGpuInstanceById)(nvmlDevice_t, unsigned int,
                                           nvmlGpuInstance_t*);
  nvmlReturn_t (*GpuInstanceGetInfo)(nvmlGpuInstance_t, nvmlGpuInstanceInfo_t*);
  nvmlReturn_t (*DeviceCreateGpuInstanceWithPlacement)(
      nvmlDevice_t, unsigned int, const nvmlGpuInstancePlacement_t*,
      nvmlGpuInstance_t*);
  nvmlReturn_t (*GpuInstanceDestroy)(nvmlGpuInstance_t);
  nvmlReturn_t (*GpuInstanceGetComputeInstanceProfileInfo)(
      nvmlGpuInstance_t, unsigned int, unsigned int,
      nvmlComputeInstanceProfileInfo_t*);
  nvmlReturn_t (*GpuInstanceCreateComputeInstance)(nvmlGpuInstance_t,
                                                   unsigned int,
                                                   nvmlComputeInstance_t*);
  nvmlReturn_t (*GpuInstanceGetComputeInstances)(nvmlGpuInstance_t,
                                                 unsigned int,
                                                 nvmlComputeInstance_t*,
                                                 unsigned int*);
  nvmlReturn_t (*ComputeInstanceGetInfo)(nvmlComputeInstance_t,
                                         nvmlComputeInstanceInfo_t*);
  nvmlReturn_t (*ComputeInstanceDestroy)(nvmlComputeInstance_t);
  nvmlReturn_t (*DeviceGetMaxMigDeviceCount)(nvmlDevice_t, unsigned int*);
  nvmlReturn_t (*DeviceGetMigDeviceHandleByIndex)(nvmlDevice_t, unsigned int,
                                                  nvmlDevice_t*);
  nvmlReturn_t (*DeviceGetGpuInstanceId)(nvmlDevice_t, unsigned int*);
  nvmlReturn_t (*DeviceGetComputeInstanceId)(nvmlDevice_t, unsigned int*);
  nvmlReturn_t (*EventSetCreate)(nvmlEventSet_t*);
  nvmlReturn_t (*DeviceGetSupportedEventTypes)(nvmlDevice_t,
                                               unsigned long long*);
  nvmlReturn_t (*DeviceRegisterEvents)(nvmlDevice_t, unsigned long long,
                                       nvmlEventSet_t);
  nvmlReturn_t (*EventSetWait)(nvmlEventSet_t, nvmlEventData_t*, unsigned int);
  nvmlReturn_t (*EventSetFree)(nvmlEventSet_t);
};

class NvmlLibrary {
 public:
  // dlopen(`path`), resolve, nvmlInit_v2. FailedPrecondition when the
  // library cannot be loaded (the message says what to do instead), lacks
  // a required symbol, or nvmlInit_v2 fails.
  static absl::StatusOr<std::shared_ptr<NvmlLibrary>> Open(
      const std::string& path);

  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  const NvmlFunctions& fn() const { return fn_; }

  // "GPU is lost (NVML 15)".
  std::string ErrorText(nvmlReturn_t result) const;
  // OK for NVML_SUCCESS; otherwise "<what>: <ErrorText>" with the closest
  // absl code (NOT_FOUND -> NotFound, INSUFFICIENT_RESOURCES and IN_USE ->
  // FailedPrecondition, GPU_IS_LOST -> Unavailable, ...).
  absl::Status ToStatus(nvmlReturn_t result, absl::string_view what) const;

  // "nvml /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 (driver 580.1)".
  const std::string& description() const { return description_; }
  // nvmlSystemGetDriverVersion, e.g. "550.54.15"; "" when unknown.
  const std::string& driver_version() const { return driver_version_; }

 private:
  NvmlLibrary() = default;

  void* handle_ = nullptr;
  NvmlFunctions fn_{};
  std::string description_;
  std::string driver_version_;
};

// The sysfs name of an NVML bus id: "00000000:3B:00.0" -> "0000:3b:00.0"
// (Linux prints a 4-hex-digit domain and lowercase hex).
std::string SysfsPciName(absl::string_view nvml_bus_id);

// NVML strings live in fixed char arrays that a broken library might not
// terminate.
std::string FromNvmlChars(const char* chars, size_t capacity);

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_NVML_NVML_LIBRARY_H_
