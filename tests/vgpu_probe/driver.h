// File: tests/vgpu_probe/driver.h
//
// The driver entry points the probe calls, as one table of function
// pointers. How the table is filled is the point of the probe: through
// cuGetProcAddress_v2 by base name (what the CUDA runtime does), through
// dlsym of the versioned names, or from the symbols the executable was
// linked against (so whatever LD_PRELOAD exports wins). An interposer has
// to hold up under all three.
#ifndef DEVICESHARE_TESTS_VGPU_PROBE_DRIVER_H_
#define DEVICESHARE_TESTS_VGPU_PROBE_DRIVER_H_

#include <string>

#include "gpu_abi/cuda_abi.h"
#include "gpu_abi/nvml_abi.h"

namespace vgpu_probe {

// X(base name, versioned symbol): the member is named after the base name
// (what cuGetProcAddress is asked for), typed after the versioned symbol
// (what dlsym and the linker see).
#define VGPU_PROBE_CUDA_FUNCTIONS(X)                              \
  X(cuInit, cuInit)                                               \
  X(cuDriverGetVersion, cuDriverGetVersion)                       \
  X(cuDeviceGet, cuDeviceGet)                                     \
  X(cuDeviceGetCount, cuDeviceGetCount)                           \
  X(cuDeviceGetUuid, cuDeviceGetUuid_v2)                          \
  X(cuDeviceTotalMem, cuDeviceTotalMem_v2)                        \
  X(cuDeviceGetAttribute, cuDeviceGetAttribute)                   \
  X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain)           \
  X(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2)      \
  X(cuCtxSetCurrent, cuCtxSetCurrent)                             \
  X(cuCtxGetDevice, cuCtxGetDevice)                               \
  X(cuCtxSynchronize, cuCtxSynchronize)                           \
  X(cuMemGetInfo, cuMemGetInfo_v2)                                \
  X(cuMemAlloc, cuMemAlloc_v2)                                    \
  X(cuMemAllocPitch, cuMemAllocPitch_v2)                          \
  X(cuMemAllocManaged, cuMemAllocManaged)                         \
  X(cuMemFree, cuMemFree_v2)                                      \
  X(cuArrayCreate, cuArrayCreate_v2)                              \
  X(cuArray3DCreate, cuArray3DCreate_v2)                          \
  X(cuArrayDestroy, cuArrayDestroy)                               \
  X(cuMipmappedArrayCreate, cuMipmappedArrayCreate)               \
  X(cuMipmappedArrayDestroy, cuMipmappedArrayDestroy)             \
  X(cuMemCreate, cuMemCreate)                                     \
  X(cuMemRelease, cuMemRelease)                                   \
  X(cuMemGetAllocationGranularity, cuMemGetAllocationGranularity) \
  X(cuMemAddressReserve, cuMemAddressReserve)                     \
  X(cuMemAddressFree, cuMemAddressFree)                           \
  X(cuMemMap, cuMemMap)                                           \
  X(cuMemUnmap, cuMemUnmap)                                       \
  X(cuMemAllocAsync, cuMemAllocAsync)                             \
  X(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync)             \
  X(cuMemFreeAsync, cuMemFreeAsync)                               \
  X(cuMemPoolCreate, cuMemPoolCreate)                             \
  X(cuMemPoolDestroy, cuMemPoolDestroy)                           \
  X(cuStreamCreate, cuStreamCreate)                               \
  X(cuStreamDestroy, cuStreamDestroy_v2)                          \
  X(cuStreamSynchronize, cuStreamSynchronize)                     \
  X(cuModuleLoadData, cuModuleLoadData)                           \
  X(cuModuleGetFunction, cuModuleGetFunction)                     \
  X(cuLaunchKernel, cuLaunchKernel)                               \
  X(cuLaunchKernelEx, cuLaunchKernelEx)                           \
  X(cuLaunchCooperativeKernel, cuLaunchCooperativeKernel)         \
  X(cuGraphCreate, cuGraphCreate)                                 \
  X(cuGraphDestroy, cuGraphDestroy)                               \
  X(cuGraphAddKernelNode, cuGraphAddKernelNode_v2)                \
  X(cuGraphAddMemAllocNode, cuGraphAddMemAllocNode)               \
  X(cuGraphInstantiateWithFlags, cuGraphInstantiateWithFlags)     \
  X(cuGraphLaunch, cuGraphLaunch)                                 \
  X(cuGraphExecDestroy, cuGraphExecDestroy)                       \
  X(cuDeviceGraphMemTrim, cuDeviceGraphMemTrim)

struct Driver {
#define VGPU_PROBE_MEMBER(base, symbol) symbol##_fn base = nullptr;
  VGPU_PROBE_CUDA_FUNCTIONS(VGPU_PROBE_MEMBER)
#undef VGPU_PROBE_MEMBER
};

// nvml.h's functions the probe calls; nvml_abi.h declares types only.
struct NvmlMemoryV2 {  // nvmlMemory_v2_t
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
static_assert(sizeof(NvmlMemoryV2) == 40);
constexpr unsigned kNvmlMemoryV2Version =
    static_cast<unsigned>(sizeof(NvmlMemoryV2) | (2u << 24));

struct Nvml {
  nvmlReturn_t (*nvmlInit_v2)() = nullptr;
  nvmlReturn_t (*nvmlDeviceGetHandleByIndex_v2)(unsigned,
                                                nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetHandleByUUID)(const char*,
                                            nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetMemoryInfo)(nvmlDevice_t,
                                          nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetMemoryInfo_v2)(nvmlDevice_t,
                                             NvmlMemoryV2*) = nullptr;
};

// How the tables are filled (--resolve=).
enum class Resolve { kGetProc, kDlsym, kLinked };

// Fills `driver`. False with `error` naming what is missing. Every member
// must be found: the probe is a test tool, a partial table would turn a
// missing export into a confusing crash later.
bool LoadDriver(Resolve resolve, Driver& driver, std::string& error);

// Fills `nvml` (dlopen of libnvidia-ml.so.1, or the linked symbols).
// Members the library lacks stay null; callers report them.
bool LoadNvml(Resolve resolve, Nvml& nvml, std::string& error);

// The linked variants, defined only in vgpu_probe_linked; the dlopen
// binary answers false.
bool LoadLinkedDriver(Driver& driver, std::string& error);
bool LoadLinkedNvml(Nvml& nvml, std::string& error);

}  // namespace vgpu_probe

#endif  // DEVICESHARE_TESTS_VGPU_PROBE_DRIVER_H_
