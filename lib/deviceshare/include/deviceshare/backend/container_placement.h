// File: backend/container_placement.h
//
// The container loop every backend shares: for each container in pod
// order, each eligible GPU of the node makes the backend's offer (the share
// the container would take there and its score), the GPU policy ranks the
// offers (PlacementPolicy::RankGpu: by default the score, ties to the lower
// GPU index) and picks the `gpu_count` distinct GPUs (by default the best).
// With numa-bind, all GPUs of a container come from one NUMA node: the one
// whose best `gpu_count` GPUs rank highest by the first key. Backends differ
// only in the offer (backend/fractional_share.h for shares of whole GPUs, the
// mig backend for MIG instances).
//
// Also here: the usage-independent eligibility checks every backend makes
// first, and committing / releasing an allocation's shares on the ledgers.
//
// Thread safety: pure functions, except Commit/Release which change the
// node passed in.
#ifndef DEVICESHARE_BACKEND_CONTAINER_PLACEMENT_H_
#define DEVICESHARE_BACKEND_CONTAINER_PLACEMENT_H_

#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "deviceshare/backend/fit.h"
#include "deviceshare/model/node_state.h"
#include "deviceshare/model/pod_request.h"
#include "deviceshare/model/sharing_mode.h"
#include "deviceshare/policy/placement_policy.h"

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
// share but must leave it as it found it. Called only for eligible GPUs
// that the GPU policy admits (PlacementPolicy::GpuAdmits).
// A pod rarely has more than two containers on one GPU: inline, so a
// filter allocates nothing per GPU for them.
using PendingShares = absl::InlinedVector<ContainerShare, 2>;
using GpuOfferFn = absl::FunctionRef<GpuOffer(
    const ContainerRequest& container, int32_t container_index, size_t position,
    PendingShares& pending)>;

// The container loop every backend shares: for each container in pod
// order, the eligible GPUs (CheckGpuEligible) make offers, and the
// `gpu_count` best distinct ones are taken (with numa-bind, from one NUMA
// node); when too few offer, the verdict names the most frequent reason.
// Pure, as long as `offer` is.
// With `several_per_gpu` (MIG: a GPU holds several instances), a container
// that finds fewer GPUs than it wants takes its shares one at a time, each
// from the best offer given its shares so far, so one GPU may give it
// several (HAMi re-examines a MIG GPU after each instance, device.go Fit).
NodeFit PlaceContainers(const PodRequest& request, const NodeState& node,
                        SharingMode mode, const PlacementPolicy& gpu_policy,
                        GpuOfferFn offer, bool explain,
                        bool several_per_gpu = false);

// The per-GPU checks that do not depend on usage: health, cordon, mode,
// model and uuid filters. kFits if the GPU may serve the pod at all.
GpuVerdict CheckGpuEligible(const PodRequest& request, const Gpu& gpu,
                            SharingMode mode);
// The model and uuid filters' code, for a pod that names one.
ReasonCode FilterListCode(const PodRequest& request, const Gpu& gpu);
// CheckGpuEligible's code alone, without building the text. Inline: every
// GPU of every node a decision looks at asks, and most pods name no filter.
inline ReasonCode EligibilityCode(const PodRequest& request, const Gpu& gpu,
                                  const SharingMode& mode) {
  if (!gpu.healthy) return ReasonCode::kGpuUnhealthy;
  if (gpu.cordoned) return ReasonCode::kGpuCordoned;
  if (gpu.mode != mode) return ReasonCode::kModeMismatch;
  if (!request.NamesGpuFilters()) return ReasonCode::kFits;
  return FilterListCode(request, gpu);
}

// Commits `allocation` to the ledgers of `node`: each GPU gets the pod's
// shares on it, all or nothing. Every grant and its GPU must use `mode`.
absl::Status CommitShares(const PodRequest& request,
                          const PodAllocation& allocation, SharingMode mode,
                          NodeState& node);

// Removes the pod from every ledger of `node` whose GPU runs `mode`.
void ReleaseShares(absl::string_view pod_uid, SharingMode mode,
                   NodeState& node);

}  // namespace deviceshare

#endif  // DEVICESHARE_BACKEND_CONTAINER_PLACEMENT_H_
