// File: codec/volcano_codec.h
//
// Volcano's wire strings, both directions, byte for byte as in
// shared/reference/formats.md:
//
//   node `volcano.sh/node-vgpu-register`: one entry per GPU, each ending ':'
//     UUID,split,memMiB,type,health,mode:
//   pod `volcano.sh/vgpu-ids-new` (= `volcano.sh/devices-to-allocate`): one
//     entry per app container that asked for GPUs, joined by ';', each GPU
//     UUID,NVIDIA,memMiB,cores:
//
// Decoders never crash on malformed text: they return InvalidArgument naming
// the annotation, the entry and the field.
#ifndef DEVICESHARE_CODEC_VOLCANO_CODEC_H_
#define DEVICESHARE_CODEC_VOLCANO_CODEC_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/model/gpu.h"
#include "deviceshare/model/pod_allocation.h"

namespace deviceshare {

// Gpu::index is the entry's position; NUMA, core capacity (100) and links
// are not carried by this format.
std::string EncodeVolcanoNodeRegister(const std::vector<Gpu>& gpus);
absl::StatusOr<std::vector<Gpu>> DecodeVolcanoNodeRegister(
    absl::string_view text);

// Encodes the app containers that hold at least one device (Volcano counts
// only those); init containers and GPU-less containers get no entry.
std::string EncodeVolcanoAllocation(const PodAllocation& allocation);
// One vector of grants per entry, in order. Grants have gpu_index -1 and
// mode hami-core (Volcano's string does not carry them).
absl::StatusOr<std::vector<std::vector<DeviceGrant>>> DecodeVolcanoAllocation(
    absl::string_view text);

}  // namespace deviceshare

#endif  // DEVICESHARE_CODEC_VOLCANO_CODEC_H_
