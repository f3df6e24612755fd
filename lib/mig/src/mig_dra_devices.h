// File: mig_dra_devices.h
//
// A MIG-mode GPU as DRA partitionable devices (KEP-4815, 1.34 layout): one
// counter set per GPU -- a counter per memory slice ("memory-slice-<i>",
// value 1) and one for its compute slices ("compute-slices"); counter
// names are DNS labels -- and one device per legal placement of every
// allowed profile of the catalog, consuming the memory slices it covers and
// its compute slices. The allocator then can never pick two overlapping
// instances. Devices are named "<gpu>-mig-<profile>-<start>" (profile
// without dots, '+' as '-': "gpu-0-mig-1g10gb-me-3").
//
// Thread safety: pure function.
#ifndef DEVICESHARE_MIG_MIG_DRA_DEVICES_H_
#define DEVICESHARE_MIG_MIG_DRA_DEVICES_H_

#include <string>

#include "absl/status/statusor.h"
#include "deviceshare/dra/resource_slice.h"
#include "deviceshare/model/gpu.h"
#include "gpu_kinds.h"

namespace deviceshare::mig::internal {

// The DNS-label form of a profile name: "1g.10gb+me" -> "1g10gb-me".
std::string ProfileLabel(absl::string_view profile);

// FailedPrecondition when the catalog lacks the GPU's model.
absl::StatusOr<dra::GpuDevices> MigDraDevices(const Gpu& gpu,
                                              const GpuKind& kind,
                                              const dra::DeviceNaming& naming);

}  // namespace deviceshare::mig::internal

#endif  // DEVICESHARE_MIG_MIG_DRA_DEVICES_H_
