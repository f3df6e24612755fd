// File: codec/hami_codec.h
//
// HAMi's wire strings, both directions, byte for byte as in
// docs/reference/formats.md:
//
//   node `hami.io/node-nvidia-register`, JSON (HAMi >= 2.8): a list of
//     {"id","index","count","devmem","devcore","type","numa","mode",
//     "migProfiles","health"} in that key order, each key omitted when zero /
//     empty / false (Go's omitempty), no spaces. migProfiles (HAMi >= 2.10)
//     is Gpu::mig_profiles: [{"name","memoryMB","core","sliceCount",
//     "placements":[{"start","size"}]}], all five members always written.
//     deviceshare's extension, last and only when the GPU has links:
//     "links":[{"peer":1,"nvlinks":12,"pcie":"switch","numa":true}] (Gpu::
//     links, the NVLink/PCIe/NUMA relation to each peer by index), which
//     HAMi's decoder ignores; a link that cannot be read is left out with
//     its reason in Gpu::links_left_out, never refusing the node.
//   the same annotation as a legacy string (HAMi <= 2.7):
//     UUID,split,memMiB,devcore,type,numa,health[,index,mode]:
//   pod `hami.io/vgpu-devices-allocated` (= `-to-allocate`): one entry per
//     container, init containers first, GPU-less containers as empty
//     entries, each entry ending ';', each GPU UUID,NVIDIA,memMiB,cores:
//     (a plain GPU uuid, MIG grants included)
//   pod `hami.io/vgpu-mig-allocations` (HAMi >= 2.10): the MIG instance of
//     each MIG grant, a JSON list in container, then device order:
//       [{"containerIndex":1,"deviceIndex":0,"gpuUUID":"GPU-a",
//         "profile":"3g.40gb","placement":{"start":4,"size":4}}]
//     containerIndex is the entry's position in vgpu-devices-allocated (all
//     containers, init first), deviceIndex the GPU's position in that entry.
//     Once the node agent has created the instance it adds
//     "migUUID":"MIG-...","gpuInstanceID":1,"computeInstanceID":0 (all three
//     or none). deviceshare's extension for configMap mode (knownMigGeometries,
//     MigSlot::group set), which the device string has no place for: the
//     optional members "group":"group2","position":3 after those; HAMi's
//     reader ignores unknown members.
//
// Decoders never crash on malformed text: they return InvalidArgument naming
// the annotation, the entry and the field.
#ifndef DEVICESHARE_CODEC_HAMI_CODEC_H_
#define DEVICESHARE_CODEC_HAMI_CODEC_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/model/gpu.h"
#include "deviceshare/model/pod_allocation.h"

namespace deviceshare {

std::string EncodeHamiNodeRegisterJson(const std::vector<Gpu>& gpus);

// hami.io/node-nvidia-score for `gpus`: a JSON list of {"uuid": ...,
// "score": {peer uuid: score}} for every GPU with pair scores, in GPU order
// (HAMi's device plugin's form, read back by the scheduler's node parser);
// "" when no GPU has any.
std::string EncodeHamiPairScores(const std::vector<Gpu>& gpus);
absl::StatusOr<std::vector<Gpu>> DecodeHamiNodeRegisterJson(
    absl::string_view text);

// Always writes the 9-field form (with index and mode).
std::string EncodeHamiNodeRegisterLegacy(const std::vector<Gpu>& gpus);
// Accepts the 7-field and the 9-field forms.
absl::StatusOr<std::vector<Gpu>> DecodeHamiNodeRegisterLegacy(
    absl::string_view text);

// Tells the JSON form from the legacy string and decodes either.
absl::StatusOr<std::vector<Gpu>> DecodeHamiNodeRegister(absl::string_view text);

// Encodes every container of the allocation, in order.
std::string EncodeHamiAllocation(const PodAllocation& allocation);
// One vector of grants per container entry, in order, read as HAMi reads
// them (DecodePodDevices): the entries are what ';' separates, the one
// after the last ';' included when it holds a device, and each entry's
// devices as wire::GrantSyntax::kHami has it.
absl::StatusOr<std::vector<std::vector<DeviceGrant>>> DecodeHamiAllocation(
    absl::string_view text);

// The `hami.io/vgpu-mig-allocations` value of `allocation`, or "" when it
// has no MIG grant to record (the annotation is then not written, as in
// HAMi). A grant of mode mig gets an entry when its MigSlot names the
// profile and either is placed (start >= 0, size >= 1: "placement") or has
// a group and a position >= 0 ("group"/"position"; both are written when
// both hold). An entry without "placement" is deviceshare's own: HAMi's
// reader rejects the whole annotation for it, so the mig backend should
// place configMap-mode grants too. The runtime ids are written only when
// all three are set (mig_uuid non-empty, both instance ids >= 0).
std::string EncodeHamiMigAllocations(const PodAllocation& allocation);

// Merges a `hami.io/vgpu-mig-allocations` value into `containers` (as
// DecodeHamiAllocation returns them): each entry's grant becomes mode mig
// with the entry's profile, placement, group/position and runtime ids
// (members an entry lacks keep the grant's values). An entry whose
// deviceIndex is past its container's devices is a reservation the record
// does not list yet: it becomes a grant of its own on its gpuUUID (no
// memory or cores of its own; its instance is what it holds), appended in
// deviceIndex order, as HAMi restores it. "" merges nothing.
// Every entry is checked first, and nothing is changed on error: not a
// JSON list, an entry that is not an object, a missing or bad
// containerIndex (naming no container of `containers`) or deviceIndex
// (negative, or repeated), a gpuUUID that is not the device entry's uuid
// (or empty), a profile that is missing or not a MIG profile name, a placement
// with start < 0 or size < 1, neither placement nor group, a position
// without a group or < 0, a partial runtime identity. Errors are
// InvalidArgument naming the annotation, the entry and the field.
absl::Status MergeHamiMigAllocations(
    absl::string_view text, std::vector<std::vector<DeviceGrant>>& containers);

}  // namespace deviceshare

#endif  // DEVICESHARE_CODEC_HAMI_CODEC_H_
