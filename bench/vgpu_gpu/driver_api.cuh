// Driver API functions reached through the runtime's entry-point query, so
// that no program links libcuda directly: the interposer sees exactly the
// lookup path (cuGetProcAddress) that real frameworks use.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

namespace kit {

// Returns the driver function `name` (base name, no _v2 suffix) as the
// requested CUDA 12.0 ABI, or nullptr with a message.
inline void* DriverSymbol(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
#if CUDART_VERSION >= 12050
  cudaError_t e = cudaGetDriverEntryPointByVersion(name, &fn, 12000,
                                                   cudaEnableDefault, &status);
#else
  cudaError_t e =
      cudaGetDriverEntryPoint(name, &fn, cudaEnableDefault, &status);
#endif
  if (e != cudaSuccess || status != cudaDriverEntryPointSuccess || !fn) {
    std::fprintf(stderr, "driver entry point %s: %s (status %d)\n", name,
                 cudaGetErrorName(e), static_cast<int>(status));
    return nullptr;
  }
  return fn;
}

template <typename Fn>
Fn DriverFn(const char* name) {
  return reinterpret_cast<Fn>(DriverSymbol(name));
}

// The few driver calls the programs use, with their CUDA 12 signatures.
struct Driver {
  CUresult (*GetErrorName)(CUresult, const char**) = nullptr;
  CUresult (*MemGetAllocationGranularity)(size_t*, const CUmemAllocationProp*,
                                          CUmemAllocationGranularity_flags) =
      nullptr;
  CUresult (*MemCreate)(CUmemGenericAllocationHandle*, size_t,
                        const CUmemAllocationProp*,
                        unsigned long long) = nullptr;
  CUresult (*MemRelease)(CUmemGenericAllocationHandle) = nullptr;
  CUresult (*MemAddressReserve)(CUdeviceptr*, size_t, size_t, CUdeviceptr,
                                unsigned long long) = nullptr;
  CUresult (*MemAddressFree)(CUdeviceptr, size_t) = nullptr;
  CUresult (*MemMap)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                     unsigned long long) = nullptr;
  CUresult (*MemUnmap)(CUdeviceptr, size_t) = nullptr;
  CUresult (*MemSetAccess)(CUdeviceptr, size_t, const CUmemAccessDesc*,
                           size_t) = nullptr;

  // False when any symbol is missing (message already printed).
  bool Load() {
    GetErrorName = DriverFn<decltype(GetErrorName)>("cuGetErrorName");
    MemGetAllocationGranularity =
        DriverFn<decltype(MemGetAllocationGranularity)>(
            "cuMemGetAllocationGranularity");
    MemCreate = DriverFn<decltype(MemCreate)>("cuMemCreate");
    MemRelease = DriverFn<decltype(MemRelease)>("cuMemRelease");
    MemAddressReserve =
        DriverFn<decltype(MemAddressReserve)>("cuMemAddressReserve");
    MemAddressFree = DriverFn<decltype(MemAddressFree)>("cuMemAddressFree");
    MemMap = DriverFn<decltype(MemMap)>("cuMemMap");
    MemUnmap = DriverFn<decltype(MemUnmap)>("cuMemUnmap");
    MemSetAccess = DriverFn<decltype(MemSetAccess)>("cuMemSetAccess");
    return GetErrorName && MemGetAllocationGranularity && MemCreate &&
           MemRelease && MemAddressReserve && MemAddressFree && MemMap &&
           MemUnmap && MemSetAccess;
  }

  const char* Name(CUresult r) const {
    const char* s = nullptr;
    if (!GetErrorName || GetErrorName(r, &s) != CUDA_SUCCESS || !s) {
      return "unrecognized_CUresult";
    }
    return s;
  }
};

}  // namespace kit
