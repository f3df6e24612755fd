// File: policy/builtin_policies.h
//
// The policies of the core library, for RegisterBuiltinPolicies
// (policy/policy_registry.h) and for hosts that want one directly.
//   binpack  fill the fullest node / GPU first: keeps whole GPUs and nodes
//            free for the large pods that come later;
//   spread   use the emptiest node / GPU first: least interference.
//   mutex, numa, topology-aware: HAMi's GPU-level policies of those names
//            (each described below).
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
// HAMi's numa: GPUs of the highest NUMA node first, then the highest index;
// utilisation plays no part at the GPU level (a node is scored as spread).
inline constexpr char kNumaPolicyName[] = "numa";
// HAMi's topology-aware: by hami.io/node-nvidia-score pair scores, the
// best-linked set for several GPUs, the worst-linked GPU for one; GPUs
// rank, and a node is scored, as spread.
inline constexpr char kTopologyPolicyName[] = "topology-aware";

absl::StatusOr<std::unique_ptr<PlacementPolicy>> NewBinpackPolicy(
    const Config& config);
absl::StatusOr<std::unique_ptr<PlacementPolicy>> NewSpreadPolicy(
    const Config& config);
absl::StatusOr<std::unique_ptr<PlacementPolicy>> NewMutexPolicy(
    const Config& config);
absl::StatusOr<std::unique_ptr<PlacementPolicy>> NewNumaPolicy(
    const Config& config);
absl::StatusOr<std::unique_ptr<PlacementPolicy>> NewTopologyPolicy(
    const Config& config);

// Shared immutable instances (the defaults of PlacementOptions).
const PlacementPolicy& BinpackPolicy();
const PlacementPolicy& SpreadPolicy();
const PlacementPolicy& NumaPolicy();

}  // namespace deviceshare

#endif  // DEVICESHARE_POLICY_BUILTIN_POLICIES_H_
