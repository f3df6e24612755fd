// The virtual clock's kernels: how long a launch runs and where it lands on
// the device timeline every process shares (see world.h).
#include <algorithm>

#include "world.h"

namespace fake_cuda {
namespace {

constexpr uint64_t kThreadsPerSm = 2048;
constexpr uint64_t kMaxBlocksPerSm = 32;
constexpr unsigned kMaxThreadsPerBlock = 1024;
constexpr unsigned kMaxBlock[3] = {1024, 1024, 64};
constexpr unsigned kMaxGrid[3] = {0x7fffffff, 65535, 65535};

// spin_<N>us runs N µs per wave; a wave is as many blocks as fit on the
// whole GPU at once (2048 threads per SM, at most 32 blocks per SM), so
// 8 x SM blocks of 256 threads are one wave, as on a real H100.
uint64_t DurationNs(uint64_t spin_us, const KernelLaunch& launch,
                    int sm_count) {
  const uint64_t blocks =
      uint64_t{launch.grid[0]} * launch.grid[1] * launch.grid[2];
  const uint64_t threads =
      uint64_t{launch.block[0]} * launch.block[1] * launch.block[2];
  const uint64_t per_sm =
      std::clamp<uint64_t>(kThreadsPerSm / threads, 1, kMaxBlocksPerSm);
  const uint64_t per_wave = static_cast<uint64_t>(sm_count) * per_sm;
  const uint64_t waves = (blocks + per_wave - 1) / per_wave;
  return spin_us * 1000 * waves;
}

}  // namespace

CUresult ValidateLaunch(const KernelLaunch& launch) {
  if (TheWorld().functions.count(launch.function) == 0) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  for (int i = 0; i < 3; ++i) {
    if (launch.grid[i] == 0 || launch.grid[i] > kMaxGrid[i] ||
        launch.block[i] == 0 || launch.block[i] > kMaxBlock[i]) {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  if (uint64_t{launch.block[0]} * launch.block[1] * launch.block[2] >
      kMaxThreadsPerBlock) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult EnqueueKernel(Stream& stream, const KernelLaunch& launch) {
  const CUresult valid = ValidateLaunch(launch);
  if (valid != CUDA_SUCCESS) return valid;
  World& world = TheWorld();
  const Device& device = world.devices[stream.device];
  const uint64_t duration = DurationNs(
      world.functions.at(launch.function).spin_us, launch, device.sm_count);
  const uint64_t earliest = std::max(MonotonicNowNs(), stream.tail_ns);
  const uint64_t start = world.shared.Schedule(device.slot, earliest, duration);
  stream.tail_ns = start + duration;
  world.shared.LogKernel(device.slot, start, start + duration);
  return CUDA_SUCCESS;
}

}  // namespace fake_cuda
