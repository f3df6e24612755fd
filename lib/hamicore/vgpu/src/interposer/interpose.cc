// How calls reach the hooks. A program that links libcuda.so.1 gets the
// exported hooks from LD_PRELOAD's symbol precedence. The CUDA runtime does
// not: it dlopens libcuda.so.1, dlsyms cuGetProcAddress, and asks that for
// every other entry point. So libvgpu.so exports a dlsym that hands out the
// hook for a hooked name looked up in the driver (or NVML), and a
// cuGetProcAddress that swaps the driver's answer for the hook whenever the
// driver returns the very function a hook wraps -- whatever version mapping
// the driver applied. Everything else goes to glibc's dlsym by a tail call,
// so RTLD_NEXT still resolves relative to the real caller.
#include <dlfcn.h>

#include <cstring>
#include <type_traits>

#include "hook_support.h"
#include "log.h"
#include "runtime.h"

#define VGPU_DECLARE_HOOK(name, type) \
  extern "C" std::remove_pointer_t<type> name;
VGPU_CUDA_HOOKS(VGPU_DECLARE_HOOK)
VGPU_NVML_HOOKS(VGPU_DECLARE_HOOK)
#undef VGPU_DECLARE_HOOK

namespace {

using deviceshare::vgpu::InitializingOnThisThread;
using deviceshare::vgpu::LoadRealCuda;
using deviceshare::vgpu::LoadRealNvml;
using deviceshare::vgpu::RealCuda;
using deviceshare::vgpu::RealNvml;
using deviceshare::vgpu::VgpuRuntime;

// A hooked symbol: its name, our hook and the driver's function it wraps
// (null when the driver lacks it).
struct Hook {
  const char* name;
  void* hook;
  void* real;
};

template <size_t N>
struct HookTable {
  Hook hooks[N];
  static constexpr size_t size = N;
};

#define VGPU_COUNT(name, type) +1
constexpr size_t kCudaHookCount = 0 VGPU_CUDA_HOOKS(VGPU_COUNT);
constexpr size_t kNvmlHookCount = 0 VGPU_NVML_HOOKS(VGPU_COUNT);
#undef VGPU_COUNT

const HookTable<kCudaHookCount>& CudaHooks() {
  static const HookTable<kCudaHookCount> table = [] {
    const RealCuda& cuda = LoadRealCuda();
#define VGPU_ENTRY(name, type)                  \
  Hook{#name, reinterpret_cast<void*>(&::name), \
       reinterpret_cast<void*>(cuda.name)},
    return HookTable<kCudaHookCount>{{VGPU_CUDA_HOOKS(VGPU_ENTRY)}};
#undef VGPU_ENTRY
  }();
  return table;
}

const HookTable<kNvmlHookCount>& NvmlHooks() {
  static const HookTable<kNvmlHookCount> table = [] {
    const RealNvml& nvml = LoadRealNvml();
#define VGPU_ENTRY(name, type)                  \
  Hook{#name, reinterpret_cast<void*>(&::name), \
       reinterpret_cast<void*>(nvml.name)},
    return HookTable<kNvmlHookCount>{{VGPU_NVML_HOOKS(VGPU_ENTRY)}};
#undef VGPU_ENTRY
  }();
  return table;
}

// Names only, so a lookup of an unrelated "cu..." symbol (curl_*, say)
// never loads the driver.
bool IsHookName(const char* const* names, size_t count, const char* name) {
  for (size_t i = 0; i < count; ++i) {
    if (std::strcmp(names[i], name) == 0) return true;
  }
  return false;
}

#define VGPU_NAME(name, type) #name,
constexpr const char* kCudaHookNames[] = {VGPU_CUDA_HOOKS(VGPU_NAME)};
constexpr const char* kNvmlHookNames[] = {VGPU_NVML_HOOKS(VGPU_NAME)};
#undef VGPU_NAME

template <typename Table>
void* Intercept(const Table& table, void* library, void* handle,
                const char* name) {
  for (const Hook& entry : table.hooks) {
    if (std::strcmp(entry.name, name) != 0) continue;
    if (handle != library && handle != RTLD_DEFAULT) return nullptr;
    if (entry.real == nullptr || VgpuRuntime::Get().passthrough()) {
      return nullptr;
    }
    return entry.hook;
  }
  return nullptr;
}

// The hook wrapping the driver function `real`, or `real` itself.
void* Substitute(void* real) {
  if (real == nullptr || VgpuRuntime::Get().passthrough()) return real;
  for (const Hook& entry : CudaHooks().hooks) {
    if (entry.real == real) return entry.hook;
  }
  return real;
}

__attribute__((constructor)) void ResolveDlsymEarly() {
  deviceshare::vgpu::RealDlsym();
}

}  // namespace

VGPU_EXPORT void* dlsym(void* __restrict handle,
                        const char* __restrict name) noexcept {
  // glibc declares `name` nonnull; keep the compiler from dropping the
  // check, since callers do pass null.
  asm("" : "+r"(name));
  if (name != nullptr && !InitializingOnThisThread()) {
    void* hook = nullptr;
    if (name[0] == 'c' && name[1] == 'u' &&
        IsHookName(kCudaHookNames, kCudaHookCount, name)) {
      hook = Intercept(CudaHooks(), LoadRealCuda().handle, handle, name);
    } else if (name[0] == 'n' && name[1] == 'v' &&
               IsHookName(kNvmlHookNames, kNvmlHookCount, name)) {
      hook = Intercept(NvmlHooks(), LoadRealNvml().handle, handle, name);
    }
    if (hook != nullptr) return hook;
  }
  deviceshare::vgpu::DlsymFn real = deviceshare::vgpu::RealDlsym();
  if (real == nullptr) return nullptr;
  return real(handle, name);
}

VGPU_EXPORT CUresult cuGetProcAddress_v2(
    const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
    CUdriverProcAddressQueryResult* symbol_status) {
  auto real = LoadRealCuda().cuGetProcAddress_v2;
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  CUresult rc = real(symbol, pfn, cuda_version, flags, symbol_status);
  if (rc == CUDA_SUCCESS && pfn != nullptr) *pfn = Substitute(*pfn);
  return rc;
}

VGPU_EXPORT CUresult cuGetProcAddress(const char* symbol, void** pfn,
                                      int cuda_version, cuuint64_t flags) {
  auto real = LoadRealCuda().cuGetProcAddress;
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  CUresult rc = real(symbol, pfn, cuda_version, flags);
  if (rc == CUDA_SUCCESS && pfn != nullptr) *pfn = Substitute(*pfn);
  return rc;
}

VGPU_EXPORT CUresult cuInit(unsigned int flags) {
  auto real = LoadRealCuda().cuInit;
  if (real == nullptr) return CUDA_ERROR_NO_DEVICE;
  CUresult rc = real(flags);
  if (rc == CUDA_SUCCESS) {
    deviceshare::vgpu::Guarded([] {
      VgpuRuntime::Get().OnDriverInitialized();
      return CUDA_SUCCESS;
    });
  }
  return rc;
}
