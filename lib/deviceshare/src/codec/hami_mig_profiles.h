// File: hami_mig_profiles.h (internal to deviceshare_core)
//
// The `migProfiles` member of one device in HAMi's node registration
// (HAMi >= 2.10, pkg/device/devices.go MigProfile), both directions:
//
//   "migProfiles":[{"name":"1g.5gb","memoryMB":5120,"core":14,
//                   "sliceCount":1,"placements":[{"start":6,"size":1}]}]
//
// HAMi's struct has no omitempty on these five members, so every profile
// carries all five and a profile without placements has "placements":null.
// Read as Go's encoding/json reads it where that is lenient (absent members
// are zero, unknown ones such as instanceCount are ignored, null is empty);
// what no NVML report can hold is refused with the field and the value: a
// name that is not `<N>g.<M>gb`, a name twice, a negative number, a
// placement of size 0 (it would never overlap another), one past memory
// slice 32, or placements of one profile with different sizes.
#ifndef DEVICESHARE_SRC_CODEC_HAMI_MIG_PROFILES_H_
#define DEVICESHARE_SRC_CODEC_HAMI_MIG_PROFILES_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/model/gpu.h"
#include "nlohmann/json.hpp"

namespace deviceshare::wire {

// The profiles of a registration entry's "migProfiles" member (absent or
// null: none). `where` names the entry in errors.
absl::StatusOr<std::vector<RegisteredMigProfile>> ReadHamiMigProfiles(
    const nlohmann::json& entry, absl::string_view where);

// The "migProfiles" value for `profiles`, in their order.
nlohmann::ordered_json HamiMigProfilesJson(
    const std::vector<RegisteredMigProfile>& profiles);

}  // namespace deviceshare::wire

#endif  // DEVICESHARE_SRC_CODEC_HAMI_MIG_PROFILES_H_
