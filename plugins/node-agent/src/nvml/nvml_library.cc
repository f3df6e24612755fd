#include "nvml/nvml_library.h"

#include <dlfcn.h>

#include <cctype>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace deviceshare::agent {
namespace {

template <typename Fn>
void Resolve(void* handle, const char* name, Fn& out) {
  out = reinterpret_cast<Fn>(dlsym(handle, name));
}

absl::StatusCode CodeOf(nvmlReturn_t result) {
  switch (result) {
    case NVML_ERROR_INVALID_ARGUMENT:
      return absl::StatusCode::kInvalidArgument;
    case NVML_ERROR_NOT_FOUND:
      return absl::StatusCode::kNotFound;
    case NVML_ERROR_NO_PERMISSION:
      return absl::StatusCode::kPermissionDenied;
    case NVML_ERROR_NOT_SUPPORTED:
    case NVML_ERROR_UNINITIALIZED:
    case NVML_ERROR_DRIVER_NOT_LOADED:
    case NVML_ERROR_IN_USE:
    case NVML_ERROR_INSUFFICIENT_RESOURCES:
      return absl::StatusCode::kFailedPrecondition;
    case NVML_ERROR_TIMEOUT:
      return absl::StatusCode::kDeadlineExceeded;
    case NVML_ERROR_GPU_IS_LOST:
      return absl::StatusCode::kUnavailable;
    default:
      return absl::StatusCode::kInternal;
  }
}

}  // namespace

std::string FromNvmlChars(const char* chars, size_t capacity) {
  return std::string(chars, strnlen(chars, capacity));
}

std::string SysfsPciName(absl::string_view nvml_bus_id) {
  std::string name = absl::AsciiStrToLower(nvml_bus_id);
  const size_t colon = name.find(':');
  // NVML pads the domain to 8 digits; Linux prints 4 unless the domain
  // needs more.
  if (colon != std::string::npos && colon > 4) {
    size_t zeros = 0;
    while (zeros < colon - 4 && name[zeros] == '0') ++zeros;
    name.erase(0, zeros);
  }
  return name;
}

absl::StatusOr<std::shared_ptr<NvmlLibrary>> NvmlLibrary::Open(
    const std::string& path) {
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return absl::FailedPreconditionError(absl::StrFormat(
        "cannot load NVML \"%s\": %s -- is the NVIDIA driver installed? "
        "(use --inventory FILE on machines without one)",
        path, why != nullptr ? why : "unknown dlopen error"));
  }
  std::shared_ptr<NvmlLibrary> library(new NvmlLibrary());
  library->handle_ = handle;
  NvmlFunctions& fn = library->fn_;
  Resolve(handle, "nvmlInit_v2", fn.Init);
  Resolve(handle, "nvmlShutdown", fn.Shutdown);
  Resolve(handle, "nvmlErrorString", fn.ErrorString);
  Resolve(handle, "nvmlDeviceGetCount_v2", fn.DeviceGetCount);
  Resolve(handle, "nvmlDeviceGetHandleByIndex_v2", fn.DeviceGetHandleByIndex);
  Resolve(handle, "nvmlDeviceGetHandleByUUID", fn.DeviceGetHandleByUUID);
  Resolve(handle, "nvmlDeviceGetUUID", fn.DeviceGetUUID);
  Resolve(handle, "nvmlDeviceGetName", fn.DeviceGetName);
  Resolve(handle, "nvmlDeviceGetPciInfo_v3", fn.DeviceGetPciInfo);
  Resolve(handle, "nvmlDeviceGetMemoryInfo", fn.DeviceGetMemoryInfo);
  const std::pair<const char*, const void*> required[] = {
      {"nvmlInit_v2", reinterpret_cast<const void*>(fn.Init)},
      {"nvmlShutdown", reinterpret_cast<const void*>(fn.Shutdown)},
      {"nvmlErrorString", reinterpret_cast<const void*>(fn.ErrorString)},
      {"nvmlDeviceGetCount_v2",
       reinterpret_cast<const void*>(fn.DeviceGetCount)},
      {"nvmlDeviceGetHandleByIndex_v2",
       reinterpret_cast<const void*>(fn.DeviceGetHandleByIndex)},
      {"nvmlDeviceGetHandleByUUID",
       reinterpret_cast<const void*>(fn.DeviceGetHandleByUUID)},
      {"nvmlDeviceGetUUID", reinterpret_cast<const void*>(fn.DeviceGetUUID)},
      {"nvmlDeviceGetName", reinterpret_cast<const void*>(fn.DeviceGetName)},
      {"nvmlDeviceGetPciInfo_v3",
       reinterpret_cast<const void*>(fn.DeviceGetPciInfo)},
      {"nvmlDeviceGetMemoryInfo",
       reinterpret_cast<const void*>(fn.DeviceGetMemoryInfo)},
  };
  for (const auto& [name, address] : required) {
    if (address == nullptr) {
      // Not initialized yet: the destructor must not call nvmlShutdown.
      library->fn_.Shutdown = nullptr;
      return absl::FailedPreconditionError(absl::StrFormat(
          "NVML \"%s\" lacks %s: the driver is older than r450 or this is "
          "not libnvidia-ml",
          path, name));
    }
  }
  Resolve(handle, "nvmlSystemGetDriverVersion", fn.SystemGetDriverVersion);
  Resolve(handle, "nvmlDeviceGetCudaComputeCapability",
          fn.DeviceGetCudaComputeCapability);
  Resolve(handle, "nvmlDeviceGetAttributes_v2", fn.DeviceGetAttributes);
  Resolve(handle, "nvmlDeviceGetTopologyCommonAncestor",
          fn.DeviceGetTopologyCommonAncestor);
  Resolve(handle, "nvmlDeviceGetNvLinkState", fn.DeviceGetNvLinkState);
  Resolve(handle, "nvmlDeviceGetNvLinkRemotePciInfo_v2",
          fn.DeviceGetNvLinkRemotePciInfo);
  Resolve(handle, "nvmlDeviceGetMigMode", fn.DeviceGetMigMode);
  Resolve(handle, "nvmlDeviceGetGpuInstanceProfileInfoV",
          fn.DeviceGetGpuInstanceProfileInfoV);
  Resolve(handle, "nvmlDeviceGetGpuInstancePossiblePlacements_v2",
          fn.DeviceGetGpuInstancePossiblePlacements);
  Resolve(handle, "nvmlDeviceGetGpuInstances", fn.DeviceGetGpuInstances);
  Resolve(handle, "nvmlDeviceGetGpuInstanceById", fn.DeviceGetGpuInstanceById);
  Resolve(handle, "nvmlGpuInstanceGetInfo", fn.GpuInstanceGetInfo);
  Resolve(handle, "nvmlDeviceCreateGpuInstanceWithPlacement",
          fn.DeviceCreateGpuInstanceWithPlacement);
  Resolve(handle, "nvmlGpuInstanceDestroy", fn.GpuInstanceDestroy);
  Resolve(handle, "nvmlGpuInstanceGetComputeInstanceProfileInfo",
          fn.GpuInstanceGetComputeInstanceProfileInfo);
  Resolve(handle, "nvmlGpuInstanceCreateComputeInstance",
          fn.GpuInstanceCreateComputeInstance);
  Resolve(handle, "nvmlGpuInstanceGetComputeInstances",
          fn.GpuInstanceGetComputeInstances);
  Resolve(handle, "nvmlComputeInstanceGetInfo_v2", fn.ComputeInstanceGetInfo);
  Resolve(handle, "nvmlComputeInstanceDestroy", fn.ComputeInstanceDestroy);
  Resolve(handle, "nvmlDeviceGetMaxMigDeviceCount",
          fn.DeviceGetMaxMigDeviceCount);
  Resolve(handle, "nvmlDeviceGetMigDeviceHandleByIndex",
          fn.DeviceGetMigDeviceHandleByIndex);
  Resolve(handle, "nvmlDeviceGetGpuInstanceId", fn.DeviceGetGpuInstanceId);
  Resolve(handle, "nvmlDeviceGetComputeInstanceId",
          fn.DeviceGetComputeInstanceId);
  Resolve(handle, "nvmlEventSetCreate", fn.EventSetCreate);
  Resolve(handle, "nvmlDeviceGetSupportedEventTypes",
          fn.DeviceGetSupportedEventTypes);
  Resolve(handle, "nvmlDeviceRegisterEvents", fn.DeviceRegisterEvents);
  Resolve(handle, "nvmlEventSetWait_v2", fn.EventSetWait);
  Resolve(handle, "nvmlEventSetFree", fn.EventSetFree);

  const nvmlReturn_t init = fn.Init();
  if (init != NVML_SUCCESS) {
    fn.Shutdown = nullptr;
    return absl::FailedPreconditionError(absl::StrFormat(
        "NVML \"%s\" loaded, but nvmlInit_v2 failed: %s -- is the NVIDIA "
        "driver loaded? (use --inventory FILE on machines without one)",
        path, library->ErrorText(init)));
  }

  // The file the loader actually picked, for logs.
  std::string file = path;
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(fn.Init), &info) != 0 &&
      info.dli_fname != nullptr) {
    file = info.dli_fname;
  }
  std::string driver = "driver unknown";
  if (fn.SystemGetDriverVersion != nullptr) {
    char version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
    if (fn.SystemGetDriverVersion(version, sizeof(version)) == NVML_SUCCESS) {
      library->driver_version_ = FromNvmlChars(version, sizeof(version));
      driver = absl::StrCat("driver ", library->driver_version_);
    }
  }
  library->description_ = absl::StrFormat("nvml %s (%s)", file, driver);
  return library;
}

NvmlLibrary::~NvmlLibrary() {
  if (fn_.Shutdown != nullptr) fn_.Shutdown();
  if (handle_ != nullptr) dlclose(handle_);
}

std::string NvmlLibrary::ErrorText(nvmlReturn_t result) const {
  const char* text =
      fn_.ErrorString != nullptr ? fn_.ErrorString(result) : nullptr;
  return absl::StrFormat("%s (NVML %d)",
                         text != nullptr ? text : "unknown error", result);
}

absl::Status NvmlLibrary::ToStatus(nvmlReturn_t result,
                                   absl::string_view what) const {
  if (result == NVML_SUCCESS) return absl::OkStatus();
  return absl::Status(CodeOf(result),
                      absl::StrCat(what, ": ", ErrorText(result)));
}

}  // namespace deviceshare::agent
