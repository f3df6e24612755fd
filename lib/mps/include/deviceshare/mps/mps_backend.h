// File: mps/mps_backend.h
//
// The mps backend: each tenant is a client of the node's NVIDIA MPS server,
// limited to an active-thread percentage (its cores request) and a pinned
// device memory limit (its memory request). Placement is the share search
// of backend/fractional_share.h on GPUs whose mode is mps; an mps GPU takes
// at most kMaxMpsClients (48) clients, or its split count if lower
// (MpsClientsExhausted).
// MPS and hami-core tenants never share a GPU: a GPU runs one mode.
//
// Fault isolation is weaker than with hami-core or MIG: a fatal GPU
// exception in one MPS client is delivered to every client of that GPU,
// and the server takes no new client until they have all exited
// (docs/reference/mig-mps-nvml.md §4.1). Use mps for cooperating tenants.
//
// Thread safety: immutable; see SharingBackend.
#ifndef DEVICESHARE_MPS_MPS_BACKEND_H_
#define DEVICESHARE_MPS_MPS_BACKEND_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "deviceshare/backend/backend_registry.h"
#include "deviceshare/backend/sharing_backend.h"
#include "deviceshare/config/device_config.h"
#include "deviceshare/model/reason_code.h"
#include "deviceshare/model/sharing_mode.h"

namespace deviceshare::mps {

inline constexpr char kBackendName[] = "mps";
// The mode this backend serves (Gpu::mode, DeviceGrant::mode).
inline constexpr SharingMode kMode(kBackendName);

// An MPS server serves at most 48 clients per GPU (measured on an H100,
// docs/reference/mig-mps-nvml.md §4.1).
inline constexpr int32_t kMaxMpsClients = 48;

// An mps GPU that already serves kMaxMpsClients (below its split count).
inline constexpr ReasonInfo kMpsClientsExhaustedInfo{"MpsClientsExhausted", 11,
                                                     false};
inline constexpr ReasonCode kMpsClientsExhausted(kMpsClientsExhaustedInfo);

// Where containers find the MPS server's pipe and log directories.
inline constexpr char kPipeDirectory[] = "/tmp/nvidia-mps";
inline constexpr char kLogDirectory[] = "/tmp/nvidia-log";

// Clients one MPS server takes on a MIG compute instance of
// `compute_slices` out of `total_compute_slices`: 48 lowered in proportion
// to the instance's size (NVIDIA MIG guide, "MIG with CUDA MPS"), at least
// one. A whole GPU (equal slices, or total 0) takes 48.
int32_t MpsClientLimit(int32_t compute_slices, int32_t total_compute_slices);

absl::StatusOr<std::unique_ptr<SharingBackend>> NewMpsBackend(
    const DeviceConfig& config);

// Registers NewMpsBackend under kBackendName.
absl::Status RegisterMpsBackend(BackendRegistry& registry);

}  // namespace deviceshare::mps

#endif  // DEVICESHARE_MPS_MPS_BACKEND_H_
