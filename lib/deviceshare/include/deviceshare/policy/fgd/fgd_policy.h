// File: policy/fgd/fgd_policy.h
//
// fgd: FGD's placement policy (Weng et al., ATC'23; docs/reference/fgd.md
// §3), at both levels, as its simulator runs it:
//   - node level: 100 x sigmoid((F_before - F_after) / 1000), truncated,
//     where F is the node's fragmentation against the configured typical
//     workload (frag_model.h) and "after" takes the pod's CPU and GPU
//     shares off the node;
//   - GPU level: a share of one GPU goes to the GPU whose node score after
//     it is highest (the lower index on equal scores); whole GPUs are taken
//     lowest index first.
// A GPU's capacity left, in milli-GPU, is the smaller of its SM and memory
// left (1000 = all of it); none when held exclusively or out of tenant
// slots. The node's model is its first GPU's. CPU the inventory does not
// track counts as unlimited.
//
// The workload is config.scheduler.typical_workload; with none, every node
// scores 50 (nothing to weigh), which leaves the choice to the node order.
// The score cannot be bounded from utilisation; NodeScoreBoundFor bounds
// it from the node's state (NodeScoreBoundByFrag), so the search filters
// only the nodes that fit and may beat the best found.
//
// Thread safety: immutable.
#ifndef DEVICESHARE_POLICY_FGD_FGD_POLICY_H_
#define DEVICESHARE_POLICY_FGD_FGD_POLICY_H_

#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "deviceshare/config/scheduler_config.h"
#include "deviceshare/model/device_ledger.h"
#include "deviceshare/model/node_state.h"
#include "deviceshare/model/pod_allocation.h"
#include "deviceshare/policy/fgd/frag_model.h"
#include "deviceshare/policy/placement_policy.h"

namespace deviceshare {

inline constexpr char kFgdPolicyName[] = "fgd";

absl::StatusOr<std::unique_ptr<PlacementPolicy>> NewFgdPolicy(
    const Config& config);

namespace fgd {

// The milli-GPU left on a GPU with `free_cores` of `core_capacity` and
// `free_memory_mib` of `memory_capacity_mib` (rounded to the nearest milli,
// so that a share of percent p leaves exactly 1000 - 10p).
int32_t MilliLeft(int64_t free_cores, int64_t core_capacity,
                  int64_t free_memory_mib, int64_t memory_capacity_mib);
int32_t MilliLeft(const DeviceLedger& ledger);
// What the GPU of `ledger` keeps once `cores` and `memory_mib` more are
// charged to it: none for a whole GPU (cores >= its capacity).
int32_t MilliLeftAfter(const DeviceLedger& ledger, int64_t cores,
                       int64_t memory_mib);

// The node as the measure sees it; FragNodeAfter: `before` (its
// FragNodeOf) once `pod` and `placement` are on it.
FragNode FragNodeOf(const NodeState& node);
FragNode FragNodeAfter(const FragNode& before, const NodeState& node,
                       const PodRequest& pod, const PodAllocation& placement);

// int(100 x sigmoid((before - after) / 1000)).
int FgdScore(double frag_before, double frag_after);

// FGD's two levels against `workload` (id from NewWorkloadId()), shared by
// every policy that scores by the measure (fgd, fragaware): the rank of
// the GPU at `position` for a share charging it `extra` (whole GPUs:
// lowest index first), and the score of `node` once `placement` lands.
GpuRank RankGpuByFrag(uint64_t workload_id,
                      absl::Span<const WorkloadShape> workload,
                      const PodRequest& pod, const NodeState& node,
                      size_t position, const PodCharge& extra);
int NodeScoreByFrag(uint64_t workload_id,
                    absl::Span<const WorkloadShape> workload,
                    const PodRequest& pod, const NodeState& node,
                    const PodAllocation& placement);

// The most GPU milli (MilliLeft) a placement of `pod` whose grants charge
// as `charges` says can take from `node`'s GPUs: each GPU a container asks
// is one grant, and a grant takes at most what the worst GPU for it
// loses. Charged as asked, a GPU loses what MilliLeftAfter leaves it of
// the container's cores and memory on that card (MilliLeftAfter only falls
// as a charge grows); an exclusive grant, or one that may charge up to a
// whole GPU, takes all the GPU has left. nullopt for a negative GPU count.
std::optional<int64_t> MostMilliTaken(const PodRequest& pod,
                                      const NodeState& node,
                                      GrantCharges charges);

// An upper bound of NodeScoreByFrag over every placement of `pod` on
// `node` whose grants charge as `charges` says, whatever GPUs it takes:
// the measure can fall by at most FragGainBound with MostMilliTaken taken.
// 100 (no bound) for nodes the memo does not pack.
int NodeScoreBoundByFrag(uint64_t workload_id,
                         absl::Span<const WorkloadShape> workload,
                         const PodRequest& pod, const NodeState& node,
                         GrantCharges charges);

}  // namespace fgd
}  // namespace deviceshare

#endif  // DEVICESHARE_POLICY_FGD_FGD_POLICY_H_
