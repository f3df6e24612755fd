// File: lib/hamicore/vgpu/src/env_config.h
//
// What libvgpu.so enforces, read from the environment once at load, with
// HAMi-core's names and units so a HAMi or Volcano device plugin can hand
// its containers' env to this library unchanged:
//   CUDA_DEVICE_MEMORY_LIMIT[_<i>]  bytes, or with a k/m/g suffix (1024^n);
//                                   0 or unset: unlimited; _<i> wins
//   CUDA_DEVICE_SM_LIMIT[_<i>]      percent of SM time; 0, >=100 or unset:
//                                   unlimited
//   CUDA_DEVICE_MEMORY_SHARED_CACHE the region file shared by the
//                                   container's processes
//   GPU_CORE_UTILIZATION_POLICY     force | disable | anything else
//   CUDA_DISABLE_CONTROL            true: pass every call through untouched
//   LIBCUDA_LOG_LEVEL               0..4
// `<i>` is the container's device index: the position of the GPU among the
// container's GPUs (NVIDIA_VISIBLE_DEVICES order), whatever
// CUDA_VISIBLE_DEVICES then renumbers.
//
// Bad values never stop a workload: the variable is ignored (unlimited for
// a limit) and `errors` names it and its value, for the caller to log.
#ifndef DEVICESHARE_VGPU_ENV_CONFIG_H_
#define DEVICESHARE_VGPU_ENV_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace deviceshare::vgpu {

inline constexpr int kMaxDevices = 16;

enum class CorePolicy { kDefault, kForce, kDisable };

struct VgpuConfig {
  // Indexed by container device index; 0 = unlimited.
  uint64_t memory_limit_bytes[kMaxDevices] = {};
  // Indexed by container device index; 0 = unlimited, else 1..99.
  int sm_limit_percent[kMaxDevices] = {};
  CorePolicy core_policy = CorePolicy::kDefault;
  bool disable_control = false;
  int log_level = 2;
  std::string region_path = "/tmp/cudevshr.cache";
  // NVIDIA_VISIBLE_DEVICES when it lists UUIDs: the container's devices in
  // index order; empty otherwise.
  std::vector<std::string> container_uuids;
  // CUDA_VISIBLE_DEVICES entries as given; empty when unset.
  std::vector<std::string> cuda_visible;
  std::vector<std::string> errors;

  bool AnyMemoryLimit() const;
  // True when some device's SM share is to be enforced (policy applied).
  bool AnySmLimit() const;
};

using EnvLookup = const char* (*)(const char* name);

VgpuConfig ReadConfig(EnvLookup lookup);

// "4g", "1024m", "512k", "1048576", "0x100000"; nullopt on anything else
// (empty, junk, overflow).
std::optional<uint64_t> ParseByteSize(const char* text);

}  // namespace deviceshare::vgpu

#endif  // DEVICESHARE_VGPU_ENV_CONFIG_H_
