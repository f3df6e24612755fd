// File: codec/hami_codec.h
//
// HAMi's wire strings, both directions, byte for byte as in
// shared/reference/formats.md:
//
//   node `hami.io/node-nvidia-register`, JSON (HAMi >= 2.8): a list of
//     {"id","index","count","devmem","devcore","type","numa","mode","health"}
//     in that key order, each key omitted when zero / empty / false (Go's
//     omitempty), no spaces.
//   the same annotation as a legacy string (HAMi <= 2.7):
//     UUID,split,memMiB,devcore,type,numa,health[,index,mode]:
//   pod `hami.io/vgpu-devices-allocated` (= `-to-allocate`): one entry per
//     container, init containers first, GPU-less containers as empty
//     entries, each entry ending ';', each GPU UUID,NVIDIA,memMiB,cores:
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
// One vector of grants per container entry, in order.
absl::StatusOr<std::vector<std::vector<DeviceGrant>>> DecodeHamiAllocation(
    absl::string_view text);

}  // namespace deviceshare

#endif  // DEVICESHARE_CODEC_HAMI_CODEC_H_
