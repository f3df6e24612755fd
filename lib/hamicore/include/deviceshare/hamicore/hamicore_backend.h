// File: hamicore/hamicore_backend.h
//
// The hami-core backend: a tenant gets N MiB of a GPU's memory and P % of
// its SM time, enforced inside the container by the libvgpu.so interposer
// that the node agent mounts and configures through environment variables
// (docs/reference/formats.md, "Container edits").
//
// Placement is the share search of backend/fractional_share.h on GPUs whose
// mode is hami-core. Thread safety: immutable; see SharingBackend.
#ifndef DEVICESHARE_HAMICORE_HAMICORE_BACKEND_H_
#define DEVICESHARE_HAMICORE_HAMICORE_BACKEND_H_

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "deviceshare/backend/backend_registry.h"
#include "deviceshare/backend/sharing_backend.h"
#include "deviceshare/config/device_config.h"

namespace deviceshare::hamicore {

inline constexpr char kBackendName[] = "hami-core";
// The mode this backend serves (Gpu::mode, DeviceGrant::mode).
inline constexpr SharingMode kMode(kBackendName);

absl::StatusOr<std::unique_ptr<SharingBackend>> NewHamiCoreBackend(
    const DeviceConfig& config);

// Registers NewHamiCoreBackend under kBackendName.
absl::Status RegisterHamiCoreBackend(BackendRegistry& registry);

// A stable UUID (RFC 4122 version 5, SHA-1) for a container's shared cache
// file, so a retried Allocate gets the same file.
std::string CacheFileUuid(absl::string_view pod_uid,
                          absl::string_view container_name);

}  // namespace deviceshare::hamicore

#endif  // DEVICESHARE_HAMICORE_HAMICORE_BACKEND_H_
