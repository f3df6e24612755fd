// NVML's memory figures, clamped like cuMemGetInfo, so nvidia-smi inside
// the container and frameworks that size themselves through NVML see the
// limit. Used is what the container charged; an NVML-only process (such as
// nvidia-smi) that never touched CUDA still reads the container's region.
#include <algorithm>
#include <climits>
#include <cstdint>

#include "hook_support.h"
#include "runtime.h"

namespace {

using deviceshare::vgpu::VgpuRuntime;

constexpr nvmlReturn_t kFunctionNotFound = 13;  // NVML_ERROR_FUNCTION_NOT_FOUND

// nvml.h's nvmlMemory_v2_t.
struct MemoryV2 {
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
static_assert(sizeof(MemoryV2) == 40);

struct Clamp {
  bool limited = false;
  uint64_t limit = 0;
  uint64_t charged = 0;
};

Clamp ClampFor(VgpuRuntime& runtime, nvmlDevice_t device) {
  Clamp clamp;
  const deviceshare::vgpu::RealNvml& nvml = deviceshare::vgpu::LoadRealNvml();
  char uuid[96] = {};
  if (nvml.nvmlDeviceGetUUID == nullptr ||
      nvml.nvmlDeviceGetUUID(device, uuid, sizeof(uuid)) != NVML_SUCCESS) {
    return clamp;
  }
  int region_device = runtime.DeviceForUuid(uuid);
  if (region_device >= 0) {
    clamp.limit = runtime.region()->Limit(region_device);
    clamp.charged = runtime.region()->Charged(region_device);
  } else {
    int index = runtime.ContainerIndex(uuid, INT_MAX);
    if (index >= 0 && index < deviceshare::vgpu::kMaxDevices) {
      clamp.limit = runtime.config().memory_limit_bytes[index];
    }
  }
  clamp.limited = clamp.limit != 0;
  return clamp;
}

}  // namespace

VGPU_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device,
                                                 nvmlMemory_t* memory) {
  const auto& nvml = deviceshare::vgpu::LoadRealNvml();
  if (nvml.nvmlDeviceGetMemoryInfo == nullptr) {
    return kFunctionNotFound;
  }
  nvmlReturn_t rc = nvml.nvmlDeviceGetMemoryInfo(device, memory);
  VgpuRuntime& runtime = VgpuRuntime::Get();
  if (rc != NVML_SUCCESS || memory == nullptr || runtime.passthrough()) {
    return rc;
  }
  try {
    Clamp clamp = ClampFor(runtime, device);
    if (!clamp.limited) return rc;
    uint64_t total = std::min<uint64_t>(clamp.limit, memory->total);
    uint64_t used = std::min<uint64_t>(clamp.charged, total);
    memory->total = total;
    memory->used = used;
    memory->free = total - used;
  } catch (...) {
  }
  return rc;
}

VGPU_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device,
                                                    void* memory_v2) {
  const auto& nvml = deviceshare::vgpu::LoadRealNvml();
  if (nvml.nvmlDeviceGetMemoryInfo_v2 == nullptr) {
    return kFunctionNotFound;
  }
  nvmlReturn_t rc = nvml.nvmlDeviceGetMemoryInfo_v2(device, memory_v2);
  VgpuRuntime& runtime = VgpuRuntime::Get();
  if (rc != NVML_SUCCESS || memory_v2 == nullptr || runtime.passthrough()) {
    return rc;
  }
  try {
    auto* memory = static_cast<MemoryV2*>(memory_v2);
    Clamp clamp = ClampFor(runtime, device);
    if (!clamp.limited) return rc;
    uint64_t total = std::min<uint64_t>(clamp.limit, memory->total);
    uint64_t used = std::min<uint64_t>(clamp.charged, total);
    uint64_t reserved = std::min<uint64_t>(memory->reserved, total - used);
    memory->total = total;
    memory->used = used;
    memory->reserved = reserved;
    memory->free = total - used - reserved;
  } catch (...) {
  }
  return rc;
}
