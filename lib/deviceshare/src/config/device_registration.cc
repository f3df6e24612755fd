#include "deviceshare/config/device_registration.h"

#include "absl/strings/str_format.h"
#include "deviceshare/codec/dialect_modes.h"

namespace deviceshare {

absl::StatusOr<Gpu> RegisteredGpu(Gpu physical, const DeviceConfig& config) {
  Gpu gpu = std::move(physical);
  if (gpu.memory_mib <= 0) {
    if (config.preconfigured_device_memory_mib <= 0) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "gpu %s: memory size unknown and nvidia.preConfiguredDeviceMemory "
          "is not set",
          gpu.uuid));
    }
    gpu.memory_mib = config.preconfigured_device_memory_mib;
  }
  gpu.split_count = config.device_split_count;
  if (gpu.mode == dialect::kMigMode) {
    gpu.core_capacity = 100;
    return gpu;
  }
  gpu.memory_mib =
      static_cast<int64_t>(static_cast<__int128>(gpu.memory_mib) *
                           config.device_memory_scaling_milli / 1000);
  gpu.core_capacity = static_cast<int32_t>(
      int64_t{100} * config.device_core_scaling_milli / 1000);
  return gpu;
}

}  // namespace deviceshare
