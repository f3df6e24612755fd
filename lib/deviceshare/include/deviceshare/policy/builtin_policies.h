// File: policy/builtin_policies.h
//
// The policies of the core library, for RegisterBuiltinPolicies
// (policy/policy_registry.h) and for hosts that want one directly.
//   binpack  fill the fullest node / GPU first: keeps whole GPUs and nodes
//            free for the large pods that come later;
//   spread   use the emptiest node / GPU first: least interference.
// Both score a candidate by its utilisation after the placement
// (policy/scoring.h): binpack = utilisation, spread = 100 - utilisation.
#ifndef DEVICESHARE_POLICY_BUILTIN_POLICIES_H_
#define DEVICESHARE_POLICY_BUILTIN_POLICIES_H_

#include <memory>

#include "absl/status/statusor.h"
#include "deviceshare/config/scheduler_config.h"
#include "deviceshare/policy/placement_policy.h"

namespace deviceshare {

inline constexpr char kBinpackPolicyName[] = "binpack";
inline constexpr char kSpreadPolicyName[] = "spread";
// HAMi's mutex: a GPU that any pod uses takes no other; among idle GPUs as
// spread (device.go Fit step 7; a node is scored as spread).
inline constexpr char kMutexPolicyName[] = "mutex";

absl::StatusOr<std::unique_ptr<PlacementPolicy>> NewBinpackPolicy(
    const Config& config);
absl::StatusOr<std::unique_ptr<PlacementPolicy>> NewSpreadPolicy(
    const Config& config);
absl::StatusOr<std::unique_ptr<PlacementPolicy>> NewMutexPolicy(
    const Config& config);

// Shared immutable instances (the defaults of PlacementOptions).
const PlacementPolicy& BinpackPolicy();
const PlacementPolicy& SpreadPolicy();

}  // namespace deviceshare

#endif  // DEVICESHARE_POLICY_BUILTIN_POLICIES_H_
