// File: config/device_registration.h
//
// How the device config map shapes what a node registers for each GPU, as
// HAMi's and Volcano's node plugins do it (upstream-hami.md §2.1): the
// split count, memory oversubscription and core scaling are applied once,
// at registration, so the scheduler's ledger simply sees the registered
// capacity.
#ifndef DEVICESHARE_CONFIG_DEVICE_REGISTRATION_H_
#define DEVICESHARE_CONFIG_DEVICE_REGISTRATION_H_

#include "absl/status/statusor.h"
#include "deviceshare/config/device_config.h"
#include "deviceshare/model/gpu.h"

namespace deviceshare {

// From a GPU's physical facts (memory_mib as NVML reports it, 0 when NVML
// cannot tell) to what is registered:
//   split_count   = deviceSplitCount
//   memory_mib    = floor(physical MiB x deviceMemoryScaling), or
//                   preConfiguredDeviceMemory when the physical size is 0;
//                   MIG-mode GPUs are never oversubscribed
//   core_capacity = 100 x deviceCoreScaling (100 in MIG mode)
// FailedPrecondition when the memory is unknown and not preconfigured.
absl::StatusOr<Gpu> RegisteredGpu(Gpu physical, const DeviceConfig& config);

}  // namespace deviceshare

#endif  // DEVICESHARE_CONFIG_DEVICE_REGISTRATION_H_
