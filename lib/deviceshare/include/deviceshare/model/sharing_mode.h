// File: model/sharing_mode.h
//
// The three ways deviceshare can share one physical GPU. The names are the
// strings Volcano and HAMi use in `volcano.sh/vgpu-mode`,
// `nvidia.com/vgpu-mode` and the registration `mode` field.
#ifndef DEVICESHARE_MODEL_SHARING_MODE_H_
#define DEVICESHARE_MODEL_SHARING_MODE_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace deviceshare {

enum class SharingMode {
  kHamiCore,  // "hami-core": memory + SM share enforced by libvgpu.so
  kMig,       // "mig": a hardware MIG instance
  kMps,       // "mps": an MPS client
};

// "hami-core", "mig" or "mps".
absl::string_view SharingModeName(SharingMode mode);

// Parses one of the names above (exact, lower case). `field` names the source
// of the text for the error message.
absl::StatusOr<SharingMode> ParseSharingMode(absl::string_view text,
                                             absl::string_view field);

}  // namespace deviceshare

#endif  // DEVICESHARE_MODEL_SHARING_MODE_H_
