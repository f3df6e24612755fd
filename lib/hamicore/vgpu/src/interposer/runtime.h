// File: lib/hamicore/vgpu/src/runtime.h
//
// libvgpu.so's process-wide state: the configuration read once from the
// environment, the shared region, the allocations this process charged,
// the CUDA ordinal -> region device mapping and the SM limiter. The hooks
// reach it through Runtime(); it is built on first use and never torn down
// before exit (hooks may run from other libraries' destructors).
//
// Device identity goes through UUIDs: a CUDA ordinal is looked up with
// cuDeviceGetUuid, the UUID's position among the container's GPUs
// (NVIDIA_VISIBLE_DEVICES, else NVML's enumeration, else the integers of
// CUDA_VISIBLE_DEVICES) picks its CUDA_DEVICE_MEMORY_LIMIT_<i>, and the
// region counts per UUID.
//
// Thread safety: everything here may be called from any thread.
#ifndef DEVICESHARE_VGPU_RUNTIME_H_
#define DEVICESHARE_VGPU_RUNTIME_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "allocation_map.h"
#include "env_config.h"
#include "real_driver.h"
#include "shared_region.h"
#include "sm_limiter.h"

namespace deviceshare::vgpu {

inline constexpr int kMaxOrdinals = 64;

void BuildRuntime();

class VgpuRuntime {
 public:
  static VgpuRuntime& Get();

  // True when the library must not touch anything (CUDA_DISABLE_CONTROL,
  // or no limit at all): every hook is then the driver's call, unchanged.
  bool passthrough() const { return passthrough_; }
  const VgpuConfig& config() const { return config_; }
  const RealCuda& cuda() const { return LoadRealCuda(); }
  SharedRegion* region() { return region_; }
  AllocationMap& allocations() { return allocations_; }
  AllocationMap& pools() { return pools_; }
  AllocationMap& graphs() { return graphs_; }
  std::mutex& pool_mutex() { return pool_mutex_; }

  // The region device of the current context's GPU; -1 when there is no
  // context (the driver call then answers for itself).
  int CurrentDevice();
  int DeviceForOrdinal(int ordinal);
  // "GPU-xxxxxxxx-..." of a CUDA ordinal; empty when unknown.
  std::string UuidOfOrdinal(int ordinal);
  // Index among the container's GPUs of `uuid` (for the limit variables).
  int ContainerIndex(const std::string& uuid, int ordinal);
  // The region device of `uuid` as NVML names it; -1 if none.
  int DeviceForUuid(const char* uuid);

  // After the real cuInit succeeded: starts the SM limiter once.
  void OnDriverInitialized();
  SmLimiter* limiter() { return limiter_.get(); }
  // Hot path gate for launches.
  static bool LimiterActive() {
    return limiter_active_.load(std::memory_order_relaxed);
  }

 private:
  friend void BuildRuntime();
  VgpuRuntime();
  void Configure();
  void StartLimiter();
  void LoadContainerUuids();

  VgpuConfig config_;
  bool passthrough_ = true;
  SharedRegion* region_ = nullptr;
  AllocationMap allocations_;
  AllocationMap pools_;
  AllocationMap graphs_;
  std::mutex pool_mutex_;
  std::atomic<int> ordinal_device_[kMaxOrdinals];
  // Container index of each ordinal, learnt with its device; -1 unknown.
  std::atomic<int> ordinal_index_[kMaxOrdinals];
  std::mutex device_mutex_;
  std::vector<std::string> container_uuids_;  // under device_mutex_
  bool container_uuids_loaded_ = false;
  std::once_flag limiter_once_;
  std::unique_ptr<GpuTimeLedger> ledger_;
  std::unique_ptr<SmLimiter> limiter_;
  static std::atomic<bool> limiter_active_;
};

// round_up(bytes, 2 MiB), or to 512 bytes below 1 MiB, where the driver
// packs small allocations into shared pages.
uint64_t ChargeFor(uint64_t bytes);
// The next multiple of `granule` (> 0), saturating at the maximum.
uint64_t RoundUp(uint64_t bytes, uint64_t granule);

}  // namespace deviceshare::vgpu

#endif  // DEVICESHARE_VGPU_RUNTIME_H_
