// File: hami_mig_profiles.h (internal to deviceshare_core)
//
// The `migProfiles` member of one device in HAMi's node registration
// (HAMi >= 2.10, pkg/device/devices.go MigProfile), both directions:
//
//   "migProfiles":[{"name":"1g.5gb","memoryMB":5120,"core":14,
//                   "sliceCount":1,"placements":[{"start":6,"size":1}]}]
//
// HAMi's struct has no omitempty on these five members, so every profile
// carries all five and a profile without placements has "placements":null;
// its InstanceCount is tagged `json:"-"`, so instanceCount is neither
// written nor read (RegisteredMigProfile::instance_count stays 0).
//
// Read as Go's encoding/json reads it, in two steps. What Go's decoder
// refuses refuses the registration (HAMi's scheduler could not decode the
// node either): migProfiles not a list, an entry or placement not an
// object, a name not a string, memoryMB or core not an int32, sliceCount,
// start or size not a uint32 (a string, a fraction, a sign, out of range).
// Where Go is lenient so is this: absent members and null are zero values,
// unknown members are ignored. Then what Go accepts but no NVML report can
// hold -- a name not `<N>g.<M>gb`, a name twice (the later one), a negative
// number, a placement of size 0 or past memory slice 32, placements of one
// profile with different sizes -- leaves that profile out: the node is
// served with the others, as HAMi serves it, and the reason, naming field
// and value, goes to Gpu::mig_profiles_left_out.
#ifndef DEVICESHARE_SRC_CODEC_HAMI_MIG_PROFILES_H_
#define DEVICESHARE_SRC_CODEC_HAMI_MIG_PROFILES_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "deviceshare/model/gpu.h"
#include "nlohmann/json.hpp"

namespace deviceshare::wire {

// Sets gpu.mig_profiles and gpu.mig_profiles_left_out from a registration
// entry's "migProfiles" member (absent or null: none). InvalidArgument for
// what Go refuses; `where` names the entry in errors and reasons.
absl::Status ReadHamiMigProfiles(const nlohmann::json& entry,
                                 absl::string_view where, Gpu& gpu);

// The "migProfiles" value for `profiles`, in their order.
nlohmann::ordered_json HamiMigProfilesJson(
    const std::vector<RegisteredMigProfile>& profiles);

}  // namespace deviceshare::wire

#endif  // DEVICESHARE_SRC_CODEC_HAMI_MIG_PROFILES_H_
