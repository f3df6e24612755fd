// Kernel launches. With no SM limit the hook is one relaxed load and a
// branch in front of the driver's call; with one, the launch goes through
// the SM limiter, which measures it on the GPU (sm_limiter.h). Every launch
// path is covered: plain, extensible (Ex), cooperative, graphs, and their
// per-thread-default-stream (_ptsz) variants.
#include "hook_support.h"
#include "runtime.h"

namespace {

using deviceshare::vgpu::LaunchKind;
using deviceshare::vgpu::LoadRealCuda;
using deviceshare::vgpu::SmLimiter;
using deviceshare::vgpu::VgpuRuntime;

template <typename Launch>
CUresult LimitedLaunch(CUstream stream, LaunchKind kind, Launch launch) {
  VgpuRuntime& runtime = VgpuRuntime::Get();
  SmLimiter* limiter = runtime.limiter();
  CUdevice ordinal = 0;
  if (limiter == nullptr ||
      runtime.cuda().cuCtxGetDevice(&ordinal) != CUDA_SUCCESS ||
      !limiter->limits(ordinal)) {
    return launch();
  }
  SmLimiter::Ticket ticket;
  try {
    ticket = limiter->BeforeLaunch(ordinal, stream, kind);
  } catch (...) {
    return launch();
  }
  CUresult rc = launch();
  try {
    limiter->AfterLaunch(ticket, stream, rc == CUDA_SUCCESS);
  } catch (...) {
  }
  return rc;
}

}  // namespace

#define VGPU_LAUNCH_KERNEL(name)                                             \
  VGPU_EXPORT CUresult name(CUfunction f, unsigned int grid_x,               \
                            unsigned int grid_y, unsigned int grid_z,        \
                            unsigned int block_x, unsigned int block_y,      \
                            unsigned int block_z, unsigned int shared_bytes, \
                            CUstream stream, void** params, void** extra) {  \
    auto real = LoadRealCuda().name;                                         \
    if (real == nullptr) return CUDA_ERROR_NOT_FOUND;                        \
    if (!VgpuRuntime::LimiterActive()) {                                     \
      return real(f, grid_x, grid_y, grid_z, block_x, block_y, block_z,      \
                  shared_bytes, stream, params, extra);                      \
    }                                                                        \
    return LimitedLaunch(stream, LaunchKind::kKernel, [&] {                  \
      return real(f, grid_x, grid_y, grid_z, block_x, block_y, block_z,      \
                  shared_bytes, stream, params, extra);                      \
    });                                                                      \
  }
VGPU_LAUNCH_KERNEL(cuLaunchKernel)
VGPU_LAUNCH_KERNEL(cuLaunchKernel_ptsz)
#undef VGPU_LAUNCH_KERNEL

#define VGPU_LAUNCH_KERNEL_EX(name)                                       \
  VGPU_EXPORT CUresult name(const CUlaunchConfig* config, CUfunction f,   \
                            void** params, void** extra) {                \
    auto real = LoadRealCuda().name;                                      \
    if (real == nullptr) return CUDA_ERROR_NOT_FOUND;                     \
    if (!VgpuRuntime::LimiterActive() || config == nullptr) {             \
      return real(config, f, params, extra);                              \
    }                                                                     \
    return LimitedLaunch(config->hStream, LaunchKind::kKernel,            \
                         [&] { return real(config, f, params, extra); }); \
  }
VGPU_LAUNCH_KERNEL_EX(cuLaunchKernelEx)
VGPU_LAUNCH_KERNEL_EX(cuLaunchKernelEx_ptsz)
#undef VGPU_LAUNCH_KERNEL_EX

#define VGPU_LAUNCH_COOPERATIVE(name)                                        \
  VGPU_EXPORT CUresult name(CUfunction f, unsigned int grid_x,               \
                            unsigned int grid_y, unsigned int grid_z,        \
                            unsigned int block_x, unsigned int block_y,      \
                            unsigned int block_z, unsigned int shared_bytes, \
                            CUstream stream, void** params) {                \
    auto real = LoadRealCuda().name;                                         \
    if (real == nullptr) return CUDA_ERROR_NOT_FOUND;                        \
    if (!VgpuRuntime::LimiterActive()) {                                     \
      return real(f, grid_x, grid_y, grid_z, block_x, block_y, block_z,      \
                  shared_bytes, stream, params);                             \
    }                                                                        \
    return LimitedLaunch(stream, LaunchKind::kKernel, [&] {                  \
      return real(f, grid_x, grid_y, grid_z, block_x, block_y, block_z,      \
                  shared_bytes, stream, params);                             \
    });                                                                      \
  }
VGPU_LAUNCH_COOPERATIVE(cuLaunchCooperativeKernel)
VGPU_LAUNCH_COOPERATIVE(cuLaunchCooperativeKernel_ptsz)
#undef VGPU_LAUNCH_COOPERATIVE

#define VGPU_GRAPH_LAUNCH(name)                                   \
  VGPU_EXPORT CUresult name(CUgraphExec exec, CUstream stream) {  \
    auto real = LoadRealCuda().name;                              \
    if (real == nullptr) return CUDA_ERROR_NOT_FOUND;             \
    if (!VgpuRuntime::LimiterActive()) return real(exec, stream); \
    return LimitedLaunch(stream, LaunchKind::kGraph,              \
                         [&] { return real(exec, stream); });     \
  }
VGPU_GRAPH_LAUNCH(cuGraphLaunch)
VGPU_GRAPH_LAUNCH(cuGraphLaunch_ptsz)
#undef VGPU_GRAPH_LAUNCH
