#include "real_driver.h"

#include <dlfcn.h>
#include <pthread.h>

#include <atomic>

#include "log.h"

namespace deviceshare::vgpu {
namespace {

std::atomic<DlsymFn> g_real_dlsym{nullptr};
thread_local int g_init_depth = 0;

RealCuda g_cuda;
pthread_once_t g_cuda_once = PTHREAD_ONCE_INIT;
RealNvml g_nvml;
pthread_once_t g_nvml_once = PTHREAD_ONCE_INIT;

void* OpenLibrary(const char* name) {
  // Already loaded by the program (linked or dlopen'ed): share its handle.
  void* handle = dlopen(name, RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) handle = dlopen(name, RTLD_NOW | RTLD_NODELETE);
  return handle;
}

void LoadCuda() {
  InitScope scope;
  g_cuda.handle = OpenLibrary("libcuda.so.1");
  if (g_cuda.handle == nullptr) {
    VGPU_LOG(kError, "cannot load libcuda.so.1: %s", dlerror());
    return;
  }
  DlsymFn real = RealDlsym();
#define VGPU_RESOLVE(name, type) \
  g_cuda.name = reinterpret_cast<type>(real(g_cuda.handle, #name));
  VGPU_CUDA_HOOKS(VGPU_RESOLVE)
  VGPU_CUDA_CALLS(VGPU_RESOLVE)
#undef VGPU_RESOLVE
}

void LoadNvml() {
  InitScope scope;
  g_nvml.handle = OpenLibrary("libnvidia-ml.so.1");
  if (g_nvml.handle == nullptr) return;
  DlsymFn real = RealDlsym();
#define VGPU_RESOLVE(name, type) \
  g_nvml.name = reinterpret_cast<type>(real(g_nvml.handle, #name));
  VGPU_NVML_HOOKS(VGPU_RESOLVE)
  VGPU_NVML_CALLS(VGPU_RESOLVE)
#undef VGPU_RESOLVE
}

}  // namespace

bool InitializingOnThisThread() { return g_init_depth > 0; }
InitScope::InitScope() { ++g_init_depth; }
InitScope::~InitScope() { --g_init_depth; }

DlsymFn RealDlsym() {
  DlsymFn real = g_real_dlsym.load(std::memory_order_acquire);
  if (real != nullptr) return real;
  // glibc 2.34 moved dlsym into libc; older ones version it GLIBC_2.2.5
  // (x86-64) or GLIBC_2.17 (arm64).
  static const char* const kVersions[] = {"GLIBC_2.34", "GLIBC_2.2.5",
                                          "GLIBC_2.17", "GLIBC_2.0"};
  for (const char* version : kVersions) {
    real = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", version));
    if (real != nullptr) break;
  }
  g_real_dlsym.store(real, std::memory_order_release);
  return real;
}

const RealCuda& LoadRealCuda() {
  pthread_once(&g_cuda_once, LoadCuda);
  return g_cuda;
}

const RealNvml& LoadRealNvml() {
  pthread_once(&g_nvml_once, LoadNvml);
  return g_nvml;
}

}  // namespace deviceshare::vgpu
