// The allocation paths: each one reserves its charge in the shared region
// before calling the driver and rolls back when the driver fails, so the
// container's total never passes its limit, and over the limit the answer
// is CUDA_ERROR_OUT_OF_MEMORY and nothing else.
#include <algorithm>
#include <cstdint>

#include "charge.h"
#include "hook_support.h"
#include "pool_ledger.h"
#include "runtime.h"

namespace deviceshare::vgpu {
namespace {

uint64_t FormatBytes(CUarray_format format) {
  switch (format) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8:
      return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
      return 2;
    default:
      return 4;  // 32-bit formats; packed and block formats are smaller
  }
}

uint64_t SaturatingProduct(std::initializer_list<uint64_t> factors) {
  uint64_t product = 1;
  for (uint64_t factor : factors) {
    if (factor != 0 && product > ~0ULL / factor) return ~0ULL;
    product *= factor;
  }
  return product;
}

uint64_t ArrayBytes(const CUDA_ARRAY3D_DESCRIPTOR& desc) {
  return SaturatingProduct({desc.Width, std::max<uint64_t>(desc.Height, 1),
                            std::max<uint64_t>(desc.Depth, 1),
                            std::max<uint64_t>(desc.NumChannels, 1),
                            FormatBytes(desc.Format)});
}

// A linear allocation (cuMemAlloc, managed), charged by its rounded size
// and recorded by its device pointer.
template <typename Allocate>
CUresult ChargedLinear(VgpuRuntime& runtime, CUdeviceptr* dptr, size_t size,
                       Allocate allocate) {
  int device = size == 0 ? -1 : runtime.CurrentDevice();
  return ChargedAllocation(
      runtime, device, dptr, ChargeFor(size), AllocationKind::kLinear, allocate,
      [&](CUdeviceptr made) { runtime.cuda().cuMemFree_v2(made); });
}

template <typename Real>
CUresult AllocAsync(VgpuRuntime& runtime, CUdeviceptr* dptr, size_t size,
                    CUmemoryPool pool, CUstream stream, Real real) {
  const RealCuda& cuda = runtime.cuda();
  CUdevice ordinal = 0;
  if (dptr == nullptr || size == 0 ||
      cuda.cuCtxGetDevice(&ordinal) != CUDA_SUCCESS) {
    return real(pool);
  }
  int device = runtime.DeviceForOrdinal(ordinal);
  if (device < 0) return real(pool);
  if (pool == nullptr &&
      (cuda.cuDeviceGetMemPool == nullptr ||
       cuda.cuDeviceGetMemPool(&pool, ordinal) != CUDA_SUCCESS)) {
    return real(nullptr);
  }
  return PooledAllocate(runtime, device, pool, dptr, size, stream,
                        [&] { return real(pool); });
}

}  // namespace
}  // namespace deviceshare::vgpu

using deviceshare::vgpu::Allocation;
using deviceshare::vgpu::AllocationKind;
using deviceshare::vgpu::ChargeFor;
using deviceshare::vgpu::Guarded;
using deviceshare::vgpu::VgpuRuntime;
namespace vgpu = deviceshare::vgpu;

VGPU_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t size) {
  VgpuRuntime& runtime = VgpuRuntime::Get();
  auto real = runtime.cuda().cuMemAlloc_v2;
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  if (runtime.passthrough()) return real(dptr, size);
  return Guarded([&] {
    return vgpu::ChargedLinear(runtime, dptr, size,
                               [&] { return real(dptr, size); });
  });
}

VGPU_EXPORT CUresult cuMemAllocManaged(CUdeviceptr* dptr, size_t size,
                                       unsigned int flags) {
  VgpuRuntime& runtime = VgpuRuntime::Get();
  auto real = runtime.cuda().cuMemAllocManaged;
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  if (runtime.passthrough()) return real(dptr, size, flags);
  // Managed memory may live on the host, but it may all migrate to the GPU:
  // charge it in full.
  return Guarded([&] {
    return vgpu::ChargedLinear(runtime, dptr, size,
                               [&] { return real(dptr, size, flags); });
  });
}

VGPU_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pitch,
                                        size_t width, size_t height,
                                        unsigned int element_size) {
  VgpuRuntime& runtime = VgpuRuntime::Get();
  auto real = runtime.cuda().cuMemAllocPitch_v2;
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  if (runtime.passthrough()) {
    return real(dptr, pitch, width, height, element_size);
  }
  return Guarded([&]() -> CUresult {
    int device = runtime.CurrentDevice();
    if (device < 0 || dptr == nullptr || pitch == nullptr) {
      return real(dptr, pitch, width, height, element_size);
    }
    // The driver pads rows to its pitch alignment (512 bytes at most on
    // current GPUs); settle against the real pitch afterwards.
    uint64_t estimate =
        ChargeFor(vgpu::SaturatingProduct({(width + 511) / 512 * 512, height}));
    if (!vgpu::ReserveOrTrim(runtime, device, estimate)) {
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    CUresult rc = real(dptr, pitch, width, height, element_size);
    if (rc != CUDA_SUCCESS) {
      runtime.region()->Release(device, estimate);
      return rc;
    }
    uint64_t actual = ChargeFor(vgpu::SaturatingProduct({*pitch, height}));
    if (!vgpu::MoveCharge(runtime, device, estimate, actual)) {
      runtime.cuda().cuMemFree_v2(*dptr);
      runtime.region()->Release(device, estimate);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (!runtime.allocations().Insert(
            *dptr, Allocation{actual, device, AllocationKind::kLinear, 0})) {
      runtime.cuda().cuMemFree_v2(*dptr);
      runtime.region()->Release(device, actual);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    return CUDA_SUCCESS;
  });
}

VGPU_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr) {
  VgpuRuntime& runtime = VgpuRuntime::Get();
  auto real = runtime.cuda().cuMemFree_v2;
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  if (runtime.passthrough()) return real(dptr);
  CUresult rc = real(dptr);
  if (rc == CUDA_SUCCESS && dptr != 0) {
    Guarded([&] {
      vgpu::Refund(runtime, dptr);
      return CUDA_SUCCESS;
    });
  }
  return rc;
}

VGPU_EXPORT CUresult cuArrayCreate_v2(CUarray* array,
                                      const CUDA_ARRAY_DESCRIPTOR* desc) {
  VgpuRuntime& runtime = VgpuRuntime::Get();
  auto real = runtime.cuda().cuArrayCreate_v2;
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  if (runtime.passthrough() || desc == nullptr) return real(array, desc);
  return Guarded([&] {
    CUDA_ARRAY3D_DESCRIPTOR as3d = {desc->Width,  desc->Height,      0,
                                    desc->Format, desc->NumChannels, 0};
    return vgpu::ChargedAllocation(
        runtime, runtime.CurrentDevice(), array,
        ChargeFor(vgpu::ArrayBytes(as3d)), AllocationKind::kArray,
        [&] { return real(array, desc); },
        [&](CUarray made) { runtime.cuda().cuArrayDestroy(made); });
  });
}

VGPU_EXPORT CUresult cuArray3DCreate_v2(CUarray* array,
                                        const CUDA_ARRAY3D_DESCRIPTOR* desc) {
  VgpuRuntime& runtime = VgpuRuntime::Get();
  auto real = runtime.cuda().cuArray3DCreate_v2;
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  if (runtime.passthrough() || desc == nullptr) return real(array, desc);
  return Guarded([&] {
    return vgpu::ChargedAllocation(
        runtime, runtime.CurrentDevice(), array,
        ChargeFor(vgpu::ArrayBytes(*desc)), AllocationKind::kArray,
        [&] { return real(array, desc); },
        [&](CUarray made) { runtime.cuda().cuArrayDestroy(made); });
  });
}

VGPU_EXPORT CUresult cuArrayDestroy(CUarray array) {
  VgpuRuntime& runtime = VgpuRuntime::Get();
  auto real = runtime.cuda().cuArrayDestroy;
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  CUresult rc = real(array);
  if (rc == CUDA_SUCCESS && !runtime.passthrough()) {
    Guarded([&] {
      vgpu::Refund(runtime, reinterpret_cast<uint64_t>(array));
      return CUDA_SUCCESS;
    });
  }
  return rc;
}

VGPU_EXPORT CUresult cuMipmappedArrayCreate(CUmipmappedArray* handle,
                                            const CUDA_ARRAY3D_DESCRIPTOR* desc,
                                            unsigned int levels) {
  VgpuRuntime& runtime = VgpuRuntime::Get();
  auto real = runtime.cuda().cuMipmappedArrayCreate;
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  if (runtime.passthrough() || desc == nullptr) {
    return real(handle, desc, levels);
  }
  return Guarded([&] {
    uint64_t bytes = 0;
    CUDA_ARRAY3D_DESCRIPTOR level = *desc;
    for (unsigned i = 0; i < std::max(levels, 1u) && i < 64; ++i) {
      uint64_t add = vgpu::ArrayBytes(level);
      bytes = bytes > ~0ULL - add ? ~0ULL : bytes + add;
      level.Width = std::max<size_t>(level.Width / 2, 1);
      level.Height =
          level.Height == 0 ? 0 : std::max<size_t>(level.Height / 2, 1);
      level.Depth = level.Depth == 0 ? 0 : std::max<size_t>(level.Depth / 2, 1);
    }
    return vgpu::ChargedAllocation(
        runtime, runtime.CurrentDevice(), handle, ChargeFor(bytes),
        AllocationKind::kMipmapped, [&] { return real(handle, desc, levels); },
        [&](CUmipmappedArray made) {
          runtime.cuda().cuMipmappedArrayDestroy(made);
        });
  });
}

VGPU_EXPORT CUresult cuMipmappedArrayDestroy(CUmipmappedArray handle) {
  VgpuRuntime& runtime = VgpuRuntime::Get();
  auto real = runtime.cuda().cuMipmappedArrayDestroy;
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  CUresult rc = real(handle);
  if (rc == CUDA_SUCCESS && !runtime.passthrough()) {
    Guarded([&] {
      vgpu::Refund(runtime, reinterpret_cast<uint64_t>(handle));
      return CUDA_SUCCESS;
    });
  }
  return rc;
}

VGPU_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle* handle,
                                 size_t size, const CUmemAllocationProp* prop,
                                 unsigned long long flags) {
  VgpuRuntime& runtime = VgpuRuntime::Get();
  auto real = runtime.cuda().cuMemCreate;
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  if (runtime.passthrough() || prop == nullptr ||
      prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE) {
    return real(handle, size, prop, flags);
  }
  // Physical memory is created here, at the granularity the caller had to
  // use; cuMemMap only maps it (twice maps count once).
  return Guarded([&] {
    return vgpu::ChargedAllocation(
        runtime, runtime.DeviceForOrdinal(prop->location.id), handle, size,
        AllocationKind::kVmmHandle,
        [&] { return real(handle, size, prop, flags); },
        [&](CUmemGenericAllocationHandle made) {
          runtime.cuda().cuMemRelease(made);
        });
  });
}

VGPU_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  VgpuRuntime& runtime = VgpuRuntime::Get();
  auto real = runtime.cuda().cuMemRelease;
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  CUresult rc = real(handle);
  if (rc == CUDA_SUCCESS && !runtime.passthrough()) {
    Guarded([&] {
      vgpu::Refund(runtime, handle);
      return CUDA_SUCCESS;
    });
  }
  return rc;
}

#define VGPU_ALLOC_ASYNC(name)                                                 \
  VGPU_EXPORT CUresult name(CUdeviceptr* dptr, size_t size, CUstream stream) { \
    VgpuRuntime& runtime = VgpuRuntime::Get();                                 \
    auto real = runtime.cuda().name;                                           \
    if (real == nullptr) return CUDA_ERROR_NOT_FOUND;                          \
    if (runtime.passthrough()) return real(dptr, size, stream);                \
    return Guarded([&] {                                                       \
      return vgpu::AllocAsync(                                                 \
          runtime, dptr, size, nullptr, stream,                                \
          [&](CUmemoryPool) { return real(dptr, size, stream); });             \
    });                                                                        \
  }
VGPU_ALLOC_ASYNC(cuMemAllocAsync)
VGPU_ALLOC_ASYNC(cuMemAllocAsync_ptsz)
#undef VGPU_ALLOC_ASYNC

#define VGPU_ALLOC_FROM_POOL(name)                                             \
  VGPU_EXPORT CUresult name(CUdeviceptr* dptr, size_t size, CUmemoryPool pool, \
                            CUstream stream) {                                 \
    VgpuRuntime& runtime = VgpuRuntime::Get();                                 \
    auto real = runtime.cuda().name;                                           \
    if (real == nullptr) return CUDA_ERROR_NOT_FOUND;                          \
    if (runtime.passthrough() || pool == nullptr) {                            \
      return real(dptr, size, pool, stream);                                   \
    }                                                                          \
    return Guarded([&] {                                                       \
      return vgpu::AllocAsync(runtime, dptr, size, pool, stream,               \
                              [&](CUmemoryPool chosen) {                       \
                                return real(dptr, size, chosen, stream);       \
                              });                                              \
    });                                                                        \
  }
VGPU_ALLOC_FROM_POOL(cuMemAllocFromPoolAsync)
VGPU_ALLOC_FROM_POOL(cuMemAllocFromPoolAsync_ptsz)
#undef VGPU_ALLOC_FROM_POOL

#define VGPU_FREE_ASYNC(name)                                        \
  VGPU_EXPORT CUresult name(CUdeviceptr dptr, CUstream stream) {     \
    VgpuRuntime& runtime = VgpuRuntime::Get();                       \
    auto real = runtime.cuda().name;                                 \
    if (real == nullptr) return CUDA_ERROR_NOT_FOUND;                \
    CUresult rc = real(dptr, stream);                                \
    if (rc == CUDA_SUCCESS && !runtime.passthrough() && dptr != 0) { \
      Guarded([&] {                                                  \
        vgpu::Refund(runtime, dptr);                                 \
        return CUDA_SUCCESS;                                         \
      });                                                            \
    }                                                                \
    return rc;                                                       \
  }
VGPU_FREE_ASYNC(cuMemFreeAsync)
VGPU_FREE_ASYNC(cuMemFreeAsync_ptsz)
#undef VGPU_FREE_ASYNC

VGPU_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool) {
  VgpuRuntime& runtime = VgpuRuntime::Get();
  auto real = runtime.cuda().cuMemPoolDestroy;
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  CUresult rc = real(pool);
  if (rc == CUDA_SUCCESS && !runtime.passthrough()) {
    Guarded([&] {
      vgpu::ForgetPool(runtime, pool);
      return CUDA_SUCCESS;
    });
  }
  return rc;
}
