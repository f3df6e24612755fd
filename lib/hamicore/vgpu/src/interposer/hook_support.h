// File: lib/hamicore/vgpu/src/hook_support.h
//
// What every exported hook shares: its visibility, and a guard so that no
// C++ exception ever crosses into the application (HAMi-core's C shim has
// none to throw; ours must not start). A hook that fails inside answers a
// valid CUresult, never -1.
#ifndef DEVICESHARE_VGPU_HOOK_SUPPORT_H_
#define DEVICESHARE_VGPU_HOOK_SUPPORT_H_

#include <new>

#include "gpu_abi/cuda_abi.h"

#define VGPU_EXPORT extern "C" __attribute__((visibility("default")))

namespace deviceshare::vgpu {

template <typename Body>
CUresult Guarded(Body body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  } catch (...) {
    return CUDA_ERROR_UNKNOWN;
  }
}

}  // namespace deviceshare::vgpu

#endif  // DEVICESHARE_VGPU_HOOK_SUPPORT_H_
