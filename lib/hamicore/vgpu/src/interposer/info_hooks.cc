// What the application and monitoring tools are told: with a limit, total
// is min(limit, physical), used is what the container charged (never more
// than total) and free is the rest, capped by what is physically free --
// no underflow (HAMi-core#200) and no NULL dereference (HAMi-core#333).
// Without a limit, the driver's figures unchanged.
#include <algorithm>
#include <climits>

#include "hook_support.h"
#include "runtime.h"

using deviceshare::vgpu::Guarded;
using deviceshare::vgpu::VgpuRuntime;

VGPU_EXPORT CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total_bytes) {
  VgpuRuntime& runtime = VgpuRuntime::Get();
  auto real = runtime.cuda().cuMemGetInfo_v2;
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  if (runtime.passthrough() || free_bytes == nullptr ||
      total_bytes == nullptr) {
    return real(free_bytes, total_bytes);
  }
  size_t physical_free = 0;
  size_t physical_total = 0;
  CUresult rc = real(&physical_free, &physical_total);
  if (rc != CUDA_SUCCESS) return rc;
  *free_bytes = physical_free;
  *total_bytes = physical_total;
  Guarded([&] {
    int device = runtime.CurrentDevice();
    uint64_t limit = runtime.region()->Limit(device);
    if (device < 0 || limit == 0) return CUDA_SUCCESS;
    uint64_t total = std::min<uint64_t>(limit, physical_total);
    uint64_t used =
        std::min<uint64_t>(runtime.region()->Charged(device), total);
    *total_bytes = total;
    *free_bytes = std::min<uint64_t>(total - used, physical_free);
    return CUDA_SUCCESS;
  });
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice device) {
  VgpuRuntime& runtime = VgpuRuntime::Get();
  auto real = runtime.cuda().cuDeviceTotalMem_v2;
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  CUresult rc = real(bytes, device);
  if (rc != CUDA_SUCCESS || runtime.passthrough() || bytes == nullptr) {
    return rc;
  }
  Guarded([&] {
    uint64_t limit = runtime.region()->Limit(runtime.DeviceForOrdinal(device));
    if (limit != 0) *bytes = std::min<uint64_t>(*bytes, limit);
    return CUDA_SUCCESS;
  });
  return rc;
}
