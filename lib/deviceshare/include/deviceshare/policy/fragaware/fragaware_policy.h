// File: policy/fragaware/fragaware_policy.h
//
// fragaware: fragmentation-aware placement for a live scheduler, at node
// and GPU level. It scores as FGD does (policy/fgd: a node's fragmentation
// is the GPU capacity the typical workload could not use; a pod goes where
// that grows least, 100 x sigmoid((F_before - F_after) / 1000)), with what
// FGD's simulator cannot do in a cluster:
//   - the workload is learned online from the pods the scheduler sees
//     (workload_estimate.h: every shape, rare ones included), so no trace
//     is needed; config scheduler.typicalWorkload fixes it instead;
//   - each shape weighs its share of the pods divided by the part of a
//     GPU it takes of each GPU it asks (FGD: the share alone), which the
//     trace replays favour;
//   - a single share counts how many of its pods the node's CPU holds
//     (WorkloadShape::counted_by_cpu; not a share named in MiB only, whose
//     size is not known): GPUs its pods' CPU cannot reach are capacity it
//     cannot use, so CPU-hungry shares go where CPU is to spare and
//     CPU-light ones where it is not;
//   - a pod asking a share of one GPU goes where it is part of a filling
//     its sizes make (fill_plan.h: 810 + 160, 470 + 470, 650 + 320, ...,
//     planned from the same learned mix) before anywhere else, if the
//     filling is then complete or the node keeps the least CPU and host
//     memory a pod of a size that would complete it was seen to ask: at
//     node level a planned placement scores 51..100 (the measure's score +
//     25), an unplanned one 0..50 (score - 25), clamped; at GPU level a
//     planned GPU ranks first. Sizes the plan never placed are scored by
//     the measure alone;
//   - model-pinned pods are shapes of their own (use-gputype and trace
//     gpu_spec): a node of another model counts all its idle GPU as lost to
//     them, so pinned capacity is kept for the pods that need it;
//   - MIG GPUs count stranded slices (mig_slices.h): on a node with a GPU
//     that registered MIG profiles, such a GPU's idle capacity is its free
//     memory slices, and what a shape cannot use is the free slices outside
//     every free placement of the profile it takes (the one its pods name,
//     learned per shape, else the smallest whose memory holds its share,
//     as HAMi picks from a registered catalogue); an instance that strands
//     fewer slices scores higher, at node and GPU level (the backend's offer
//     score breaks a tie between MIG GPUs). Nodes without such GPUs are
//     measured exactly as fgd's;
//   - scheduler.nodesToScore bounds the nodes scored per decision (the
//     fullest that fit first) for clusters where scoring every node is too
//     slow; 0, the default, scores every node that fits and may beat the
//     best found (the score is bounded from the node's state as fgd's is).
// A GPU's capacity left, in milli-GPU, is the smaller of its SM and memory
// left; whole GPUs are taken lowest index first; a share goes to the GPU
// whose node score after it is highest.
//
// Thread safety: safe to share; the learned estimate is synchronised.
#ifndef DEVICESHARE_POLICY_FRAGAWARE_FRAGAWARE_POLICY_H_
#define DEVICESHARE_POLICY_FRAGAWARE_FRAGAWARE_POLICY_H_

#include <memory>

#include "absl/status/statusor.h"
#include "deviceshare/config/scheduler_config.h"
#include "deviceshare/policy/placement_policy.h"

namespace deviceshare {

inline constexpr char kFragawarePolicyName[] = "fragaware";

absl::StatusOr<std::unique_ptr<PlacementPolicy>> NewFragawarePolicy(
    const Config& config);

}  // namespace deviceshare

#endif  // DEVICESHARE_POLICY_FRAGAWARE_FRAGAWARE_POLICY_H_
