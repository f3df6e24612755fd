#include "deviceshare/model/sharing_mode.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace deviceshare {

absl::string_view SharingModeName(SharingMode mode) {
  switch (mode) {
    case SharingMode::kHamiCore:
      return "hami-core";
    case SharingMode::kMig:
      return "mig";
    case SharingMode::kMps:
      return "mps";
  }
  return "unknown";
}

absl::StatusOr<SharingMode> ParseSharingMode(absl::string_view text,
                                             absl::string_view field) {
  for (SharingMode mode :
       {SharingMode::kHamiCore, SharingMode::kMig, SharingMode::kMps}) {
    if (text == SharingModeName(mode)) return mode;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: unknown sharing mode \"%s\" (want hami-core, mig or mps)", field,
      text));
}

}  // namespace deviceshare
