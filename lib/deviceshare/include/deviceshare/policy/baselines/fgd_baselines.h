// File: policy/baselines/fgd_baselines.h
//
// Two of the baselines FGD is measured against (docs/reference/fgd.md §3),
// as its simulator scores them, so that `simulate --replay fgd` can set them
// beside fgd and our own policies. GPU capacity is in milli-GPU as in
// policy/fgd (fgd::MilliLeft); CPU the inventory does not track counts as
// neither left nor asked.
//
// bestfit: node score int(100 x (1 - [0.5 (cpu_left - cpu_asked) / 128000
//   + 0.5 (gpu_left - gpu_asked) / 8000])), where gpu_* are milli summed over
//   the node's GPUs (FGD's MaxSpecCpu and MaxSpecGpu; clamped to 0..100 for
//   nodes bigger than those).
// packing: a pod that fits on GPUs already in use scores
//   max(100 - sum over the GPUs it takes of (their percent left) / 10, 50);
//   one that needs k fully free GPUs of a used node max(50 - k, 33); on a
//   node with every GPU free max(33 - free GPUs, free GPUs). The GPUs it
//   would take are the tightest that fit. A pod asking no GPU scores 0.
// Both take, at the GPU level, the tightest GPU that fits (the lower index
// on equal room), which also puts whole GPUs lowest index first.
//
// Neither score is bounded by utilisation: the scheduler evaluates every
// node that fits.
//
// Thread safety: immutable.
#ifndef DEVICESHARE_POLICY_BASELINES_FGD_BASELINES_H_
#define DEVICESHARE_POLICY_BASELINES_FGD_BASELINES_H_

#include <memory>

#include "absl/status/statusor.h"
#include "deviceshare/config/scheduler_config.h"
#include "deviceshare/policy/placement_policy.h"

namespace deviceshare {

inline constexpr char kBestfitPolicyName[] = "bestfit";
inline constexpr char kPackingPolicyName[] = "packing";

absl::StatusOr<std::unique_ptr<PlacementPolicy>> NewBestfitPolicy(
    const Config& config);
absl::StatusOr<std::unique_ptr<PlacementPolicy>> NewPackingPolicy(
    const Config& config);

}  // namespace deviceshare

#endif  // DEVICESHARE_POLICY_BASELINES_FGD_BASELINES_H_
