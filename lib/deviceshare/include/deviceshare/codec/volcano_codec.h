// File: codec/volcano_codec.h
//
// Volcano's wire strings, both directions, byte for byte as in
// docs/reference/formats.md:
//
//   node `volcano.sh/node-vgpu-register`: one entry per GPU, each ending ':'
//     UUID,split,memMiB,type,health,mode:
//   pod `volcano.sh/vgpu-ids-new` (= `volcano.sh/devices-to-allocate`): one
//     entry per app container that asked for GPUs, joined by ';', each GPU
//     UUID,NVIDIA,memMiB,cores:
//   a MIG grant's UUID carries its instance in brackets:
//     configMap mode (MigSlot::group set, knownMigGeometries):
//       GPU-a[group2-3],NVIDIA,10240,0:      group "group2", position 3
//     placement mode (no group; a deviceshare extension):
//       GPU-a[1g.10gb-6],NVIDIA,9984,14:     profile "1g.10gb", start 6
//   Volcano's own device plugin understands only [group-position]; the
//   placement form is for deviceshare's node agent. The decoder splits the
//   bracket at its last '-' and reads a profile name (`<N>g.<M>gb[+-]...`) on
//   the left as profile + start, anything else as group + position. So a
//   knownMigGeometries group must not be named like a MIG profile nor end in
//   '-', and must not contain any of `[],:;`.
//
// Decoders never crash on malformed text: they return InvalidArgument naming
// the annotation, the entry and the field.
#ifndef DEVICESHARE_CODEC_VOLCANO_CODEC_H_
#define DEVICESHARE_CODEC_VOLCANO_CODEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/model/gpu.h"
#include "deviceshare/model/pod_allocation.h"

namespace deviceshare {

// Gpu::index is the entry's position; NUMA, core capacity (100) and links
// are not carried by this format.
//
// `memory_factor` is Volcano's gpuMemoryFactor: Volcano counts memory in
// units of that many MiB in the registration and the record alike (its
// device plugin registers MiB / factor, its node plugin gives a container
// Usedmem x factor MiB). deviceshare counts MiB: decoders multiply by the
// factor, encoders divide (a registration rounds down, as Volcano's plugin
// does; a record rounds up, so that a share read back is never smaller than
// the one granted).
std::string EncodeVolcanoNodeRegister(const std::vector<Gpu>& gpus,
                                      int32_t memory_factor = 1);
absl::StatusOr<std::vector<Gpu>> DecodeVolcanoNodeRegister(
    absl::string_view text, int32_t memory_factor = 1);

// Encodes the app containers that hold at least one device (Volcano counts
// only those); init containers and GPU-less containers get no entry. A MIG
// grant that knows what its container asked (MigSlot::asked_memory_mib,
// asked_cores) is written with those figures, as Volcano writes them.
std::string EncodeVolcanoAllocation(const PodAllocation& allocation,
                                    int32_t memory_factor = 1);
// One vector of grants per entry, in order. Grants have gpu_index -1 and
// mode hami-core (Volcano's string does not carry them), except MIG ids,
// which give mode mig and a MigSlot with either group + position or profile
// + start. The slot's size (and, in configMap mode, its profile) is not
// carried and stays 0 / "": the mig backend resolves them from its catalog
// when it commits the grant. mig_action and the runtime ids are not
// carried either.
//
// Read as Volcano's DecodePodDevices reads it: entries split on ';' (an
// empty one keeps its place), devices on ':' (the last ':' may be missing),
// at least four fields each, the vendor column unchecked, cores above 100
// read as 100; a device that does not read is skipped and the others kept,
// and its error appended to `skipped` when that is not null.
absl::StatusOr<std::vector<std::vector<DeviceGrant>>> DecodeVolcanoAllocation(
    absl::string_view text, int32_t memory_factor = 1,
    std::vector<absl::Status>* skipped = nullptr);

}  // namespace deviceshare

#endif  // DEVICESHARE_CODEC_VOLCANO_CODEC_H_
