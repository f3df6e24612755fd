// Linear device memory: cuMemAlloc/Pitch/Managed, cuMemFree, copies,
// memset and cuMemGetInfo. Device pointers are host addresses, so copies
// really move bytes and a test can check them.
#include <cstring>

#include "world.h"

using namespace fake_cuda;

namespace {

// CU_MEM_ATTACH_GLOBAL and CU_MEM_ATTACH_HOST.
constexpr unsigned kAttachGlobal = 0x1;
constexpr unsigned kAttachHost = 0x2;

CUresult AllocateLinear(CUdeviceptr* dptr, uint64_t bytes) {
  const int device = CurrentDevice();
  if (device < 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (dptr == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  const uint64_t rounded = RoundUp(bytes, kGranularity);
  if (rounded < bytes || !ChargePhysical(device, rounded)) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  const uintptr_t address = MapHostMemory(rounded);
  if (address == 0) {
    UnchargePhysical(device, rounded);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  Allocation allocation;
  allocation.bytes = bytes;
  allocation.mapped = rounded;
  allocation.device = device;
  allocation.charged = rounded;
  allocation.kind = AllocKind::kLinear;
  TheWorld().allocations[address] = allocation;
  *dptr = address;
  return CUDA_SUCCESS;
}

}  // namespace

FAKE_CUDA_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
  FAKE_CUDA_ENTER();
  return AllocateLinear(dptr, bytesize);
}

FAKE_CUDA_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pitch,
                                             size_t width_bytes, size_t height,
                                             unsigned int element_size_bytes) {
  FAKE_CUDA_ENTER();
  if (CurrentDevice() < 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (dptr == nullptr || pitch == nullptr || width_bytes == 0 || height == 0 ||
      (element_size_bytes != 4 && element_size_bytes != 8 &&
       element_size_bytes != 16)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const uint64_t row = RoundUp(width_bytes, 512);
  if (row < width_bytes || height > UINT64_MAX / row) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  const CUresult result = AllocateLinear(dptr, row * height);
  if (result == CUDA_SUCCESS) *pitch = row;
  return result;
}

FAKE_CUDA_EXPORT CUresult cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize,
                                            unsigned int flags) {
  FAKE_CUDA_ENTER();
  if (flags != kAttachGlobal && flags != kAttachHost) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return AllocateLinear(dptr, bytesize);
}

FAKE_CUDA_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr) {
  FAKE_CUDA_ENTER();
  if (dptr == 0) return CUDA_SUCCESS;
  World& world = TheWorld();
  auto it = world.allocations.find(static_cast<uintptr_t>(dptr));
  if (it == world.allocations.end() || it->second.kind == AllocKind::kGraph) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const Allocation allocation = it->second;
  world.allocations.erase(it);
  UnmapHostMemory(static_cast<uintptr_t>(dptr), allocation.mapped);
  if (allocation.kind == AllocKind::kPool) {
    // Freeing stream-ordered memory synchronously, as the driver allows.
    ReturnToPool(allocation.pool, allocation.mapped);
  } else {
    UnchargePhysical(allocation.device, allocation.charged);
  }
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src,
                                          size_t bytes) {
  FAKE_CUDA_ENTER();
  if (CurrentDevice() < 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (bytes == 0) return CUDA_SUCCESS;
  if (src == nullptr || !RangeIsDeviceMemory(dst, bytes)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(dst)), src, bytes);
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src,
                                          size_t bytes) {
  FAKE_CUDA_ENTER();
  if (CurrentDevice() < 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (bytes == 0) return CUDA_SUCCESS;
  if (dst == nullptr || !RangeIsDeviceMemory(src, bytes)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::memcpy(dst, reinterpret_cast<const void*>(static_cast<uintptr_t>(src)),
              bytes);
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value,
                                        size_t count) {
  FAKE_CUDA_ENTER();
  if (CurrentDevice() < 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (count == 0) return CUDA_SUCCESS;
  if (!RangeIsDeviceMemory(dst, count)) return CUDA_ERROR_INVALID_VALUE;
  std::memset(reinterpret_cast<void*>(static_cast<uintptr_t>(dst)), value,
              count);
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuMemGetInfo_v2(size_t* free_bytes,
                                          size_t* total_bytes) {
  FAKE_CUDA_ENTER();
  const int device = CurrentDevice();
  if (device < 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (free_bytes == nullptr || total_bytes == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  World& world = TheWorld();
  const Device& d = world.devices[device];
  const uint64_t used = world.shared.Used(d.slot);
  *total_bytes = d.total_bytes;
  *free_bytes = used < d.total_bytes ? d.total_bytes - used : 0;
  return CUDA_SUCCESS;
}
