// File: nvml/nvml_mig_reader.h
//
// Reads a GPU's MIG facts through NVML: the GPU-instance profiles with
// their legal placements, the GPU and compute instances that exist, and the
// MIG device UUIDs. Shared by discovery (nvml_gpu_source.cc) and the NVML
// MigControl (nvml_mig_control.cc).
//
// Thread safety: stateless; NVML is thread-safe.
#ifndef DEVICESHARE_AGENT_NVML_NVML_MIG_READER_H_
#define DEVICESHARE_AGENT_NVML_NVML_MIG_READER_H_

#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "deviceshare/agent/discovered_gpu.h"
#include "nvml/nvml_library.h"

namespace deviceshare::agent {

// Every profile nvmlDeviceGetGpuInstanceProfileInfoV answers for indexes
// 0..NVML_GPU_INSTANCE_PROFILE_COUNT-1, in index order, "MIG " stripped
// from the name, with the starts of nvmlDeviceGetGpuInstancePossible
// Placements_v2. NOT_SUPPORTED / INVALID_ARGUMENT for an index skip it (the
// header says enumeration ends at INVALID_ARGUMENT, but r580 answers
// NOT_SUPPORTED for holes, so every index is tried). Empty when the library
// lacks the call.
std::vector<MigProfileInfo> ReadMigProfiles(const NvmlLibrary& nvml,
                                            nvmlDevice_t device);

// The GPU instances of every profile in `profiles`, ordered by start. Each
// carries its lowest compute instance and that MIG device's UUID (-1 / ""
// for a GPU instance without one). Empty when MIG is off (NVML answers
// NOT_SUPPORTED); other NVML failures are errors.
absl::StatusOr<std::vector<MigInstanceInfo>> ReadMigInstances(
    const NvmlLibrary& nvml, nvmlDevice_t device,
    const std::vector<MigProfileInfo>& profiles);

// The compute instances of `gpu_instance`, over every compute-instance
// profile with the shared engine profile.
std::vector<std::pair<nvmlComputeInstance_t, nvmlComputeInstanceInfo_t>>
ReadComputeInstances(const NvmlLibrary& nvml, nvmlGpuInstance_t gpu_instance);

// The UUID of the MIG device of GPU instance `gi`, compute instance `ci`,
// or "" when NVML does not show it.
std::string MigDeviceUuid(const NvmlLibrary& nvml, nvmlDevice_t device,
                          unsigned int gi, unsigned int ci);

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_NVML_NVML_MIG_READER_H_
