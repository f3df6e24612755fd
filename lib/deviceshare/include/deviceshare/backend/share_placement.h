// File: backend/share_placement.h
//
// The placement search shared by backends that hand out a share of a whole
// GPU (hami-core, and mps later): for each container in pod order, pick
// `gpu_count` distinct GPUs that
//   - are healthy, run `mode`, pass the pod's model and uuid filters, and
//   - can take the container beside everything already on them and beside
//     the pod's own earlier containers (DeviceLedger::CheckPod),
// ranked by the GPU policy (policy/gpu_score.h), ties to the lower GPU
// index. With numa-bind, all GPUs of a container come from one NUMA node:
// the one whose best `gpu_count` GPUs score highest.
//
// Init containers are checked with the rest: the ledger charges a pod
// max(init, sum of app) per GPU, so an init container does not add to the
// app containers' memory.
#ifndef DEVICESHARE_BACKEND_SHARE_PLACEMENT_H_
#define DEVICESHARE_BACKEND_SHARE_PLACEMENT_H_

#include <vector>

#include "absl/functional/function_ref.h"
#include "deviceshare/backend/fit.h"
#include "deviceshare/model/node_state.h"
#include "deviceshare/model/pod_request.h"
#include "deviceshare/model/sharing_mode.h"
#include "deviceshare/policy/policy_kind.h"

namespace deviceshare {

// What one GPU offers one container: the share the container would take
// there (a MIG share carries its slot) and its rank among the GPUs, or the
// verdict that says why not.
struct GpuOffer {
  GpuVerdict verdict;
  ContainerShare share;
  MigAction mig_action = MigAction::kNone;
  int score = 0;  // higher is better; ties go to the lower GPU index
};

// Makes GPU `position`'s offer to `container` (index `container_index` in
// the request), beside `pending`: the pod's shares already on that GPU from
// its earlier containers. The offer may append to `pending` to check a
// share but must leave it as it found it. Called only for eligible GPUs.
using GpuOfferFn = absl::FunctionRef<GpuOffer(
    const ContainerRequest& container, int32_t container_index, size_t position,
    std::vector<ContainerShare>& pending)>;

// The container loop every backend shares: for each container in pod
// order, the eligible GPUs (CheckGpuEligible) make offers, and the
// `gpu_count` best distinct ones are taken (with numa-bind, from one NUMA
// node); when too few offer, the verdict names the most frequent reason.
// Pure, as long as `offer` is.
NodeFit PlaceContainers(const PodRequest& request, const NodeState& node,
                        SharingMode mode, GpuOfferFn offer, bool explain);

// Pure. The returned allocation's grants carry `mode`, uuid and gpu_index.
// Without `explain`, a failure carries its code only (no message, no GPU
// verdicts): the same code, at a fraction of the cost.
NodeFit PlaceShares(const PodRequest& request, const NodeState& node,
                    SharingMode mode, PolicyKind gpu_policy,
                    bool explain = true);

// The per-GPU checks that do not depend on usage: health, mode, model and
// uuid filters. kFits if the GPU may serve the pod at all.
GpuVerdict CheckGpuEligible(const PodRequest& request, const Gpu& gpu,
                            SharingMode mode);
// Its code alone, without building the text.
ReasonCode EligibilityCode(const PodRequest& request, const Gpu& gpu,
                           SharingMode mode);

// Necessary condition for PlaceShares to fit: each GPU container, taken
// alone, finds `gpu_count` eligible GPUs with room for it. O(GPUs x
// containers), no allocation.
bool MaySharesFit(const PodRequest& request, const NodeState& node,
                  SharingMode mode);

// MaySharesFit from the headroom alone: every GPU container needs one GPU
// with its memory (on the node's smallest card, for percent requests) and
// its cores (at least 1 %: a 0-core tenant needs some SM share left).
bool MaySharesFitHeadroom(const PodRequest& request, const NodeShape& shape,
                          const GpuHeadroom& headroom);

// Upper bound of NodeScore(policy, node, placement) for any placement
// PlaceShares can return: binpack charges every container on the largest
// card, spread charges only the app containers on the smallest card.
int ShareScoreUpperBound(PolicyKind node_policy, const PodRequest& request,
                         const NodeState& node);

// Upper bound of ShareScoreUpperBound over the nodes of `shape` whose
// utilisation is `utilisation_percent`: per dimension, the utilisation
// after a placement rises by at most the rounded-up percent of the charge.
int ShareShapeScoreBound(PolicyKind node_policy, const PodRequest& request,
                         const NodeShape& shape, int utilisation_percent);

// Commits `allocation` to the ledgers of `node`: each GPU gets the pod's
// shares on it, all or nothing. Every grant and its GPU must use `mode`.
absl::Status CommitShares(const PodRequest& request,
                          const PodAllocation& allocation, SharingMode mode,
                          NodeState& node);

// Removes the pod from every ledger of `node` whose GPU runs `mode`.
void ReleaseShares(absl::string_view pod_uid, SharingMode mode,
                   NodeState& node);

}  // namespace deviceshare

#endif  // DEVICESHARE_BACKEND_SHARE_PLACEMENT_H_
