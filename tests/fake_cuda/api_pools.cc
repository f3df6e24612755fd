// Stream-ordered allocation: memory pools as the driver keeps them. An
// allocation of s bytes uses round_up(s, 2 MiB) of its pool; when the pool's
// free reserve is short the reserve grows in 32 MiB chunks, each charged as
// physical memory. Frees lower `used` only; reserve above max(used, release
// threshold) goes back at synchronization or cuMemPoolTrimTo.
#include <algorithm>

#include "world.h"

using namespace fake_cuda;

namespace {

Pool* FindPool(CUmemoryPool handle) {
  auto& pools = TheWorld().pools;
  auto it = pools.find(HandleId(Tag::kPool, handle));
  return it == pools.end() || it->second.destroyed ? nullptr : &it->second;
}

CUresult AllocFromPool(CUdeviceptr* dptr, uint64_t bytes, uint64_t pool_id,
                       CUstream hstream) {
  if (dptr == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  CUresult error = CUDA_SUCCESS;
  if (ResolveStream(hstream, &error) == nullptr) return error;
  World& world = TheWorld();
  auto it = world.pools.find(pool_id);
  if (it == world.pools.end() || it->second.destroyed) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  Pool& pool = it->second;
  const uint64_t rounded = RoundUp(bytes, kGranularity);
  if (rounded < bytes) return CUDA_ERROR_OUT_OF_MEMORY;
  uint64_t grow = 0;
  if (pool.used + rounded > pool.reserved) {
    grow = RoundUp(pool.used + rounded - pool.reserved, kPoolChunk);
    if (!ChargePhysical(pool.device, grow)) return CUDA_ERROR_OUT_OF_MEMORY;
  }
  const uintptr_t address = MapHostMemory(rounded);
  if (address == 0) {
    if (grow != 0) UnchargePhysical(pool.device, grow);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  pool.reserved += grow;
  pool.used += rounded;
  pool.reserved_high = std::max(pool.reserved_high, pool.reserved);
  pool.used_high = std::max(pool.used_high, pool.used);
  Allocation allocation;
  allocation.bytes = bytes;
  allocation.mapped = rounded;
  allocation.device = pool.device;
  allocation.pool = pool_id;
  allocation.kind = AllocKind::kPool;
  world.allocations[address] = allocation;
  *dptr = address;
  return CUDA_SUCCESS;
}

CUresult AllocAsync(CUdeviceptr* dptr, size_t bytesize, CUstream hstream) {
  FAKE_CUDA_ENTER();
  CUresult error = CUDA_SUCCESS;
  const Stream* stream = ResolveStream(hstream, &error);
  if (stream == nullptr) return error;
  return AllocFromPool(
      dptr, bytesize, TheWorld().devices[stream->device].current_pool, hstream);
}

CUresult AllocFromPoolAsync(CUdeviceptr* dptr, size_t bytesize,
                            CUmemoryPool pool, CUstream hstream) {
  FAKE_CUDA_ENTER();
  if (FindPool(pool) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  return AllocFromPool(dptr, bytesize, HandleId(Tag::kPool, pool), hstream);
}

CUresult FreeAsync(CUdeviceptr dptr, CUstream hstream) {
  FAKE_CUDA_ENTER();
  CUresult error = CUDA_SUCCESS;
  if (ResolveStream(hstream, &error) == nullptr) return error;
  World& world = TheWorld();
  auto it = world.allocations.find(static_cast<uintptr_t>(dptr));
  if (it == world.allocations.end() || it->second.kind != AllocKind::kPool) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const Allocation allocation = it->second;
  world.allocations.erase(it);
  UnmapHostMemory(static_cast<uintptr_t>(dptr), allocation.mapped);
  ReturnToPool(allocation.pool, allocation.mapped);
  return CUDA_SUCCESS;
}

}  // namespace

FAKE_CUDA_EXPORT CUresult cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize,
                                          CUstream stream) {
  return AllocAsync(dptr, bytesize, stream);
}

FAKE_CUDA_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr* dptr,
                                               size_t bytesize,
                                               CUstream stream) {
  return AllocAsync(dptr, bytesize, stream);
}

FAKE_CUDA_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr,
                                                  size_t bytesize,
                                                  CUmemoryPool pool,
                                                  CUstream stream) {
  return AllocFromPoolAsync(dptr, bytesize, pool, stream);
}

FAKE_CUDA_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr,
                                                       size_t bytesize,
                                                       CUmemoryPool pool,
                                                       CUstream stream) {
  return AllocFromPoolAsync(dptr, bytesize, pool, stream);
}

FAKE_CUDA_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream) {
  return FreeAsync(dptr, stream);
}

FAKE_CUDA_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr,
                                              CUstream stream) {
  return FreeAsync(dptr, stream);
}

FAKE_CUDA_EXPORT CUresult cuMemPoolCreate(CUmemoryPool* pool,
                                          const CUmemPoolProps* props) {
  FAKE_CUDA_ENTER();
  if (pool == nullptr || props == nullptr ||
      props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
      props->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
      DeviceAt(props->location.id) == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  World& world = TheWorld();
  const uint64_t id = world.NewId();
  Pool created;
  created.device = props->location.id;
  world.pools[id] = created;
  *pool = MakeHandle<CUmemoryPool>(Tag::kPool, id);
  return CUDA_SUCCESS;
}

// Outstanding allocations keep a destroyed pool's memory until they are
// freed, as on the driver.
FAKE_CUDA_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool) {
  FAKE_CUDA_ENTER();
  Pool* found = FindPool(pool);
  if (found == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (found->is_default) return CUDA_ERROR_INVALID_VALUE;
  const uint64_t id = HandleId(Tag::kPool, pool);
  for (Device& device : TheWorld().devices) {
    if (device.current_pool == id) device.current_pool = device.default_pool;
  }
  found->destroyed = true;
  TrimPool(*found, 0);
  if (found->used == 0) TheWorld().pools.erase(id);
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuMemPoolGetAttribute(CUmemoryPool pool,
                                                CUmemPool_attribute attr,
                                                void* value) {
  FAKE_CUDA_ENTER();
  const Pool* found = FindPool(pool);
  if (found == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  cuuint64_t* out = static_cast<cuuint64_t*>(value);
  switch (attr) {
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
      *out = found->release_threshold;
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
      *out = found->reserved;
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
      *out = found->reserved_high;
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
      *out = found->used;
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
      *out = found->used_high;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

// The high-water marks may only be reset (set to 0, meaning "to current").
FAKE_CUDA_EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool pool,
                                                CUmemPool_attribute attr,
                                                void* value) {
  FAKE_CUDA_ENTER();
  Pool* found = FindPool(pool);
  if (found == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const cuuint64_t in = *static_cast<const cuuint64_t*>(value);
  switch (attr) {
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
      found->release_threshold = in;
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
      if (in != 0) return CUDA_ERROR_INVALID_VALUE;
      found->reserved_high = found->reserved;
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
      if (in != 0) return CUDA_ERROR_INVALID_VALUE;
      found->used_high = found->used;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

FAKE_CUDA_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool,
                                          size_t keep_bytes) {
  FAKE_CUDA_ENTER();
  Pool* found = FindPool(pool);
  if (found == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  TrimPool(*found, keep_bytes);
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool* pool,
                                                    CUdevice dev) {
  FAKE_CUDA_ENTER();
  if (pool == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const Device* device = DeviceAt(dev);
  if (device == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  *pool = MakeHandle<CUmemoryPool>(Tag::kPool, device->default_pool);
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuDeviceGetMemPool(CUmemoryPool* pool, CUdevice dev) {
  FAKE_CUDA_ENTER();
  if (pool == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const Device* device = DeviceAt(dev);
  if (device == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  *pool = MakeHandle<CUmemoryPool>(Tag::kPool, device->current_pool);
  return CUDA_SUCCESS;
}
