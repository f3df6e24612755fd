// File: src/profile_name.h (internal)
//
// MIG profile names: "<N>g.<M>gb" with an optional flavour suffix ("+me",
// "+me.all", "-me", "+gfx"), as NVML prints them after its "MIG " prefix.
#ifndef DEVICESHARE_MIG_SRC_PROFILE_NAME_H_
#define DEVICESHARE_MIG_SRC_PROFILE_NAME_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace deviceshare::mig::internal {

struct ProfileName {
  int32_t compute_slices = 0;  // <N>
  int64_t gigabytes = 0;       // <M>
  std::string suffix;          // "" or "+me", "-me", "+me.all", ...
};

// `name` without a leading "MIG " (any case) and surrounding blanks.
absl::string_view StripMigPrefix(absl::string_view name);

// The canonical spelling: prefix stripped, lower case.
std::string CanonicalProfileName(absl::string_view name);

// Parses a canonical or raw name; nullopt if it is not a profile name.
std::optional<ProfileName> ParseProfileName(absl::string_view name);

// True when `a` and `b` name the same profile (prefix and case ignored).
// Allocation-free: on the slot-search hot path.
bool SameProfileName(absl::string_view a, absl::string_view b);

}  // namespace deviceshare::mig::internal

#endif  // DEVICESHARE_MIG_SRC_PROFILE_NAME_H_
