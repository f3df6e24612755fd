// File: lib/hamicore/vgpu/src/real_driver.h
//
// The real libcuda.so.1 and libnvidia-ml.so.1 behind the hooks: opened with
// dlopen, every entry point resolved once with the real dlsym (found
// through dlvsym, since libvgpu.so exports its own dlsym), and called
// through these pointers -- an indexed load per call, no lookup. Nothing
// links against CUDA, so the library builds without the toolkit.
//
// VGPU_CUDA_HOOKS lists the driver symbols libvgpu.so exports and wraps;
// VGPU_CUDA_CALLS those it only calls. A pointer is null when the driver
// lacks the symbol (older drivers), and the hook then answers
// CUDA_ERROR_NOT_FOUND.
//
// Thread safety: LoadRealCuda()/LoadRealNvml() may race; the first call
// resolves, the others wait (pthread_once). The tables are read-only after.
#ifndef DEVICESHARE_VGPU_REAL_DRIVER_H_
#define DEVICESHARE_VGPU_REAL_DRIVER_H_

#include "gpu_abi/cuda_abi.h"
#include "gpu_abi/nvml_abi.h"

#define VGPU_CUDA_HOOKS(X)                                        \
  X(cuInit, cuInit_fn)                                            \
  X(cuGetProcAddress, cuGetProcAddress_fn)                        \
  X(cuGetProcAddress_v2, cuGetProcAddress_v2_fn)                  \
  X(cuDeviceTotalMem_v2, cuDeviceTotalMem_v2_fn)                  \
  X(cuMemGetInfo_v2, cuMemGetInfo_v2_fn)                          \
  X(cuMemAlloc_v2, cuMemAlloc_v2_fn)                              \
  X(cuMemAllocPitch_v2, cuMemAllocPitch_v2_fn)                    \
  X(cuMemAllocManaged, cuMemAllocManaged_fn)                      \
  X(cuMemFree_v2, cuMemFree_v2_fn)                                \
  X(cuArrayCreate_v2, cuArrayCreate_v2_fn)                        \
  X(cuArray3DCreate_v2, cuArray3DCreate_v2_fn)                    \
  X(cuArrayDestroy, cuArrayDestroy_fn)                            \
  X(cuMipmappedArrayCreate, cuMipmappedArrayCreate_fn)            \
  X(cuMipmappedArrayDestroy, cuMipmappedArrayDestroy_fn)          \
  X(cuMemCreate, cuMemCreate_fn)                                  \
  X(cuMemRelease, cuMemRelease_fn)                                \
  X(cuMemAllocAsync, cuMemAllocAsync_fn)                          \
  X(cuMemAllocAsync_ptsz, cuMemAllocAsync_fn)                     \
  X(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync_fn)          \
  X(cuMemAllocFromPoolAsync_ptsz, cuMemAllocFromPoolAsync_fn)     \
  X(cuMemFreeAsync, cuMemFreeAsync_fn)                            \
  X(cuMemFreeAsync_ptsz, cuMemFreeAsync_fn)                       \
  X(cuMemPoolDestroy, cuMemPoolDestroy_fn)                        \
  X(cuGraphAddMemAllocNode, cuGraphAddMemAllocNode_fn)            \
  X(cuGraphDestroy, cuGraphDestroy_fn)                            \
  X(cuGraphInstantiateWithFlags, cuGraphInstantiateWithFlags_fn)  \
  X(cuGraphExecDestroy, cuGraphExecDestroy_fn)                    \
  X(cuLaunchKernel, cuLaunchKernel_fn)                            \
  X(cuLaunchKernel_ptsz, cuLaunchKernel_fn)                       \
  X(cuLaunchKernelEx, cuLaunchKernelEx_fn)                        \
  X(cuLaunchKernelEx_ptsz, cuLaunchKernelEx_fn)                   \
  X(cuLaunchCooperativeKernel, cuLaunchCooperativeKernel_fn)      \
  X(cuLaunchCooperativeKernel_ptsz, cuLaunchCooperativeKernel_fn) \
  X(cuGraphLaunch, cuGraphLaunch_fn)                              \
  X(cuGraphLaunch_ptsz, cuGraphLaunch_fn)

#define VGPU_CUDA_CALLS(X)                           \
  X(cuDeviceGetCount, cuDeviceGetCount_fn)           \
  X(cuDeviceGet, cuDeviceGet_fn)                     \
  X(cuDeviceGetUuid_v2, cuDeviceGetUuid_v2_fn)       \
  X(cuDeviceGetUuid, cuDeviceGetUuid_fn)             \
  X(cuCtxGetDevice, cuCtxGetDevice_fn)               \
  X(cuCtxGetCurrent, cuCtxGetCurrent_fn)             \
  X(cuCtxSetCurrent, cuCtxSetCurrent_fn)             \
  X(cuDeviceGetMemPool, cuDeviceGetMemPool_fn)       \
  X(cuMemPoolGetAttribute, cuMemPoolGetAttribute_fn) \
  X(cuMemPoolTrimTo, cuMemPoolTrimTo_fn)             \
  X(cuStreamIsCapturing, cuStreamIsCapturing_fn)     \
  X(cuEventCreate, cuEventCreate_fn)                 \
  X(cuEventRecord, cuEventRecord_fn)                 \
  X(cuEventQuery, cuEventQuery_fn)                   \
  X(cuEventElapsedTime, cuEventElapsedTime_fn)       \
  X(cuEventDestroy_v2, cuEventDestroy_v2_fn)

#define VGPU_NVML_HOOKS(X)                               \
  X(nvmlDeviceGetMemoryInfo, nvmlDeviceGetMemoryInfo_fn) \
  X(nvmlDeviceGetMemoryInfo_v2, nvmlDeviceGetMemoryInfo_v2_fn)

#define VGPU_NVML_CALLS(X)                                           \
  X(nvmlInit_v2, nvmlInit_v2_fn)                                     \
  X(nvmlDeviceGetCount_v2, nvmlDeviceGetCount_v2_fn)                 \
  X(nvmlDeviceGetHandleByIndex_v2, nvmlDeviceGetHandleByIndex_v2_fn) \
  X(nvmlDeviceGetUUID, nvmlDeviceGetUUID_fn)

extern "C" {
typedef nvmlReturn_t (*nvmlDeviceGetMemoryInfo_fn)(nvmlDevice_t device,
                                                   nvmlMemory_t* memory);
typedef nvmlReturn_t (*nvmlDeviceGetMemoryInfo_v2_fn)(nvmlDevice_t device,
                                                      void* memory_v2);
typedef nvmlReturn_t (*nvmlInit_v2_fn)();
typedef nvmlReturn_t (*nvmlDeviceGetCount_v2_fn)(unsigned int* count);
typedef nvmlReturn_t (*nvmlDeviceGetHandleByIndex_v2_fn)(unsigned int index,
                                                         nvmlDevice_t* device);
typedef nvmlReturn_t (*nvmlDeviceGetUUID_fn)(nvmlDevice_t device, char* uuid,
                                             unsigned int length);
}

namespace deviceshare::vgpu {

#define VGPU_DECLARE_POINTER(name, type) type name = nullptr;

struct RealCuda {
  void* handle = nullptr;
  VGPU_CUDA_HOOKS(VGPU_DECLARE_POINTER)
  VGPU_CUDA_CALLS(VGPU_DECLARE_POINTER)
};

struct RealNvml {
  void* handle = nullptr;
  VGPU_NVML_HOOKS(VGPU_DECLARE_POINTER)
  VGPU_NVML_CALLS(VGPU_DECLARE_POINTER)
};

#undef VGPU_DECLARE_POINTER

using DlsymFn = void* (*)(void*, const char*) noexcept;

// glibc's own dlsym (never ours).
DlsymFn RealDlsym();

// True on a thread that is inside libvgpu.so's own initialisation (loading
// a driver runs its constructors, which may call dlsym): interception is
// then off, so nothing recurses.
bool InitializingOnThisThread();
class InitScope {
 public:
  InitScope();
  ~InitScope();
  InitScope(const InitScope&) = delete;
  InitScope& operator=(const InitScope&) = delete;
};

// Loads on first use; `handle` stays null when the library is absent.
const RealCuda& LoadRealCuda();
const RealNvml& LoadRealNvml();

}  // namespace deviceshare::vgpu

#endif  // DEVICESHARE_VGPU_REAL_DRIVER_H_
