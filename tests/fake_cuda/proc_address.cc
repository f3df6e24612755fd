// cuGetProcAddress / cuGetProcAddress_v2 and the one table of what the fake
// exports. Like the driver, a caller asks for a BASE name ("cuMemAlloc")
// and the CUDA version it was built for, and gets the implementation that
// version's cuda.h would have bound the name to (cuMemAlloc_v2 from 3.2 on);
// exact versioned names work too. With CU_GET_PROC_ADDRESS_PER_THREAD_
// DEFAULT_STREAM the per-thread-stream (_ptsz) variant comes back where
// there is one. The interposer's tests rely on this behaving like the
// driver, so every versioning rule lives here and nowhere else.
#include <cstring>
#include <string>
#include <type_traits>

#include "world.h"

// Each implementation, declared with its gpu_abi function type so the
// table cannot point at a function of another signature.
#define FAKE_CUDA_DECLARE(name) \
  FAKE_CUDA_EXPORT std::remove_pointer_t<name##_fn> name;
#define FAKE_CUDA_DECLARE_PTSZ(name) \
  FAKE_CUDA_EXPORT std::remove_pointer_t<name##_fn> name##_ptsz;

#define FAKE_CUDA_SYMBOLS(X)       \
  X(cuInit)                        \
  X(cuDriverGetVersion)            \
  X(cuGetErrorString)              \
  X(cuGetErrorName)                \
  X(cuGetProcAddress)              \
  X(cuGetProcAddress_v2)           \
  X(cuDeviceGet)                   \
  X(cuDeviceGetCount)              \
  X(cuDeviceGetName)               \
  X(cuDeviceGetUuid)               \
  X(cuDeviceGetUuid_v2)            \
  X(cuDeviceTotalMem_v2)           \
  X(cuDeviceGetAttribute)          \
  X(cuDevicePrimaryCtxRetain)      \
  X(cuDevicePrimaryCtxRelease_v2)  \
  X(cuCtxGetCurrent)               \
  X(cuCtxSetCurrent)               \
  X(cuCtxGetDevice)                \
  X(cuCtxSynchronize)              \
  X(cuCtxPushCurrent_v2)           \
  X(cuCtxPopCurrent_v2)            \
  X(cuMemGetInfo_v2)               \
  X(cuMemAlloc_v2)                 \
  X(cuMemAllocPitch_v2)            \
  X(cuMemAllocManaged)             \
  X(cuMemFree_v2)                  \
  X(cuMemcpyHtoD_v2)               \
  X(cuMemcpyDtoH_v2)               \
  X(cuMemsetD8_v2)                 \
  X(cuArrayCreate_v2)              \
  X(cuArray3DCreate_v2)            \
  X(cuArrayDestroy)                \
  X(cuMipmappedArrayCreate)        \
  X(cuMipmappedArrayDestroy)       \
  X(cuMemCreate)                   \
  X(cuMemRelease)                  \
  X(cuMemGetAllocationGranularity) \
  X(cuMemAddressReserve)           \
  X(cuMemAddressFree)              \
  X(cuMemMap)                      \
  X(cuMemUnmap)                    \
  X(cuMemAllocAsync)               \
  X(cuMemAllocFromPoolAsync)       \
  X(cuMemFreeAsync)                \
  X(cuMemPoolCreate)               \
  X(cuMemPoolDestroy)              \
  X(cuMemPoolGetAttribute)         \
  X(cuMemPoolSetAttribute)         \
  X(cuMemPoolTrimTo)               \
  X(cuDeviceGetDefaultMemPool)     \
  X(cuDeviceGetMemPool)            \
  X(cuStreamCreate)                \
  X(cuStreamDestroy_v2)            \
  X(cuStreamSynchronize)           \
  X(cuStreamIsCapturing)           \
  X(cuEventCreate)                 \
  X(cuEventRecord)                 \
  X(cuEventQuery)                  \
  X(cuEventSynchronize)            \
  X(cuEventElapsedTime)            \
  X(cuEventElapsedTime_v2)         \
  X(cuEventDestroy_v2)             \
  X(cuModuleLoadData)              \
  X(cuModuleUnload)                \
  X(cuModuleGetFunction)           \
  X(cuLaunchKernel)                \
  X(cuLaunchKernelEx)              \
  X(cuLaunchCooperativeKernel)     \
  X(cuGraphCreate)                 \
  X(cuGraphDestroy)                \
  X(cuGraphAddKernelNode_v2)       \
  X(cuGraphAddMemAllocNode)        \
  X(cuGraphInstantiateWithFlags)   \
  X(cuGraphLaunch)                 \
  X(cuGraphExecDestroy)            \
  X(cuDeviceGetGraphMemAttribute)  \
  X(cuDeviceGraphMemTrim)

// The calls with a per-thread-default-stream twin `<name>_ptsz`.
#define FAKE_CUDA_PTSZ_SYMBOLS(X) \
  X(cuLaunchKernel)               \
  X(cuLaunchKernelEx)             \
  X(cuLaunchCooperativeKernel)    \
  X(cuGraphLaunch)                \
  X(cuMemAllocAsync)              \
  X(cuMemAllocFromPoolAsync)      \
  X(cuMemFreeAsync)               \
  X(cuEventRecord)                \
  X(cuStreamSynchronize)

FAKE_CUDA_SYMBOLS(FAKE_CUDA_DECLARE)
FAKE_CUDA_PTSZ_SYMBOLS(FAKE_CUDA_DECLARE_PTSZ)

namespace {

struct Symbol {
  const char* name;
  void* function;
};

#define FAKE_CUDA_ENTRY(name) {#name, reinterpret_cast<void*>(&name)},
#define FAKE_CUDA_ENTRY_PTSZ(name) \
  {#name "_ptsz", reinterpret_cast<void*>(&name##_ptsz)},

const Symbol kSymbols[] = {FAKE_CUDA_SYMBOLS(FAKE_CUDA_ENTRY)
                               FAKE_CUDA_PTSZ_SYMBOLS(FAKE_CUDA_ENTRY_PTSZ)};

// A base name and, from CUDA version `since` on, the symbol the driver
// binds it to. Below `since` the driver would give the legacy ABI, which
// the fake implements only where it exports the base name itself.
struct Versioned {
  const char* base;
  int since;
  const char* symbol;
};

constexpr Versioned kVersioned[] = {
    {"cuMemAlloc", 3020, "cuMemAlloc_v2"},
    {"cuMemFree", 3020, "cuMemFree_v2"},
    {"cuMemGetInfo", 3020, "cuMemGetInfo_v2"},
    {"cuDeviceTotalMem", 3020, "cuDeviceTotalMem_v2"},
    {"cuMemAllocPitch", 3020, "cuMemAllocPitch_v2"},
    {"cuArrayCreate", 3020, "cuArrayCreate_v2"},
    {"cuArray3DCreate", 3020, "cuArray3DCreate_v2"},
    {"cuMemcpyHtoD", 3020, "cuMemcpyHtoD_v2"},
    {"cuMemcpyDtoH", 3020, "cuMemcpyDtoH_v2"},
    {"cuMemsetD8", 3020, "cuMemsetD8_v2"},
    {"cuStreamDestroy", 4000, "cuStreamDestroy_v2"},
    {"cuEventDestroy", 4000, "cuEventDestroy_v2"},
    {"cuCtxPushCurrent", 4000, "cuCtxPushCurrent_v2"},
    {"cuCtxPopCurrent", 4000, "cuCtxPopCurrent_v2"},
    {"cuDevicePrimaryCtxRelease", 11000, "cuDevicePrimaryCtxRelease_v2"},
    {"cuDeviceGetUuid", 11040, "cuDeviceGetUuid_v2"},
    {"cuGraphInstantiate", 11040, "cuGraphInstantiateWithFlags"},
    {"cuGraphAddKernelNode", 12000, "cuGraphAddKernelNode_v2"},
    {"cuGetProcAddress", 12000, "cuGetProcAddress_v2"},
    {"cuEventElapsedTime", 12080, "cuEventElapsedTime_v2"},
};

void* FindExact(const std::string& name) {
  for (const Symbol& symbol : kSymbols) {
    if (name == symbol.name) return symbol.function;
  }
  return nullptr;
}

CUresult Resolve(const char* symbol, void** pfn, int cuda_version,
                 cuuint64_t flags, CUdriverProcAddressQueryResult* status) {
  if (symbol == nullptr || pfn == nullptr ||
      (flags & ~(CU_GET_PROC_ADDRESS_LEGACY_STREAM |
                 CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *pfn = nullptr;
  std::string name = symbol;
  for (const Versioned& versioned : kVersioned) {
    if (name != versioned.base) continue;
    if (cuda_version >= versioned.since) {
      name = versioned.symbol;
    } else if (FindExact(name) == nullptr) {
      // The legacy ABI of a name the fake has only in its newer form.
      if (status != nullptr)
        *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
      return CUDA_ERROR_NOT_FOUND;
    }
    break;
  }
  void* function = nullptr;
  if ((flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0) {
    function = FindExact(name + "_ptsz");
  }
  if (function == nullptr) function = FindExact(name);
  if (function == nullptr) {
    if (status != nullptr) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_ERROR_NOT_FOUND;
  }
  *pfn = function;
  if (status != nullptr) *status = CU_GET_PROC_ADDRESS_SUCCESS;
  return CUDA_SUCCESS;
}

}  // namespace

// Both work before cuInit, as the driver's do (the runtime finds cuInit
// itself through them).
FAKE_CUDA_EXPORT CUresult cuGetProcAddress(const char* symbol, void** pfn,
                                           int cuda_version, cuuint64_t flags) {
  return Resolve(symbol, pfn, cuda_version, flags, nullptr);
}

FAKE_CUDA_EXPORT CUresult cuGetProcAddress_v2(
    const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
    CUdriverProcAddressQueryResult* symbol_status) {
  return Resolve(symbol, pfn, cuda_version, flags, symbol_status);
}
