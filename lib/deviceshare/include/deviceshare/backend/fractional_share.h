// File: backend/fractional_share.h
//
// The placement search of backends that hand out a fraction of a whole GPU
// (hami-core, mps): a container's share of a GPU is its memory on that
// card and its SM percent; a GPU offers it when the ledger can take it
// beside everything already there and beside the pod's own earlier
// containers (DeviceLedger::CheckPod), ranked by the GPU policy. The
// container loop is PlaceContainers (backend/container_placement.h).
//
// Init containers are checked with the rest: the ledger charges a pod
// max(init, sum of app) per GPU, so an init container does not add to the
// app containers' memory.
//
// Also here: the cheap necessary fit tests and score bounds the scheduler
// uses to skip nodes (see SharingBackend::MayFit and ScoreUpperBound).
#ifndef DEVICESHARE_BACKEND_FRACTIONAL_SHARE_H_
#define DEVICESHARE_BACKEND_FRACTIONAL_SHARE_H_

#include "deviceshare/backend/fit.h"
#include "deviceshare/model/device_ledger.h"
#include "deviceshare/model/node_state.h"
#include "deviceshare/model/pod_request.h"
#include "deviceshare/model/sharing_mode.h"
#include "deviceshare/policy/placement_policy.h"

namespace deviceshare {

// A cap a backend puts on the tenants of a GPU of its mode, below the split
// count (the MPS server takes at most 48 clients); when it is reached the
// GPU says `code`, e.g. "MpsClientsExhausted clients=48 max=48 want=1".
struct TenantLimit {
  int32_t max_tenants = 0;  // 0: no cap beyond the split count
  ReasonCode code = ReasonCode::kSplitExhausted;
  const char* noun = "tenants";  // in the verdict's detail
};

// kFits unless `limit` applies to the GPU of `ledger` (it is below the
// split count) and `want_slots` more tenants would pass it. Inline: every
// GPU of every filtered node asks.
inline ReasonCode TenantLimitCode(const TenantLimit& limit,
                                  const DeviceLedger& ledger,
                                  int32_t want_slots) {
  if (limit.max_tenants <= 0 || limit.max_tenants >= ledger.slot_capacity() ||
      ledger.used_slots() + want_slots <= limit.max_tenants) {
    return ReasonCode::kFits;
  }
  return limit.code;
}

// Pure. The returned allocation's grants carry `mode`, uuid and gpu_index.
// Without `explain`, a failure carries its code only (no message, no GPU
// verdicts): the same code, at a fraction of the cost.
NodeFit PlaceShares(const PodRequest& request, const NodeState& node,
                    SharingMode mode, const PlacementPolicy& gpu_policy,
                    bool explain = true, const TenantLimit& limit = {});

// PlaceShares(explain=false)'s code alone, without building the failure's
// NodeFit when a pre-check finds it.
ReasonCode PlaceSharesCode(const PodRequest& request, const NodeState& node,
                           SharingMode mode, const PlacementPolicy& gpu_policy,
                           const TenantLimit& limit = {});

// SharingBackend::BlockedCode for the share backends without a tenant
// limit: when every GPU of `node` (all of them in `mode`) refuses any share
// that is not MIG before its memory and cores are compared, the code
// PlaceShares gives a pod for which SharesBlockedCodeApplies: the GPUs'
// codes tallied as QuietSingleContainerCode does. kFits otherwise.
ReasonCode SharesBlockedCode(const NodeState& node, SharingMode mode);
// The pod accepts `mode`, names no model or uuid, and has exactly one GPU
// container (what QuietSingleContainerCode answers), and no claims.
bool SharesBlockedCodeApplies(const PodRequest& request, SharingMode mode);

// Necessary condition for PlaceShares to fit: each GPU container, taken
// alone, finds `gpu_count` eligible GPUs with room for it. O(GPUs x
// containers), no allocation.
bool MaySharesFit(const PodRequest& request, const NodeState& node,
                  SharingMode mode, const TenantLimit& limit = {});

// MaySharesFit from the headroom alone: every GPU container needs one GPU
// with its memory (on the node's smallest card, for percent requests) and
// its cores (at least 1 %: a 0-core tenant needs some SM share left), both
// on that GPU as far as GpuHeadroom::MemoryWithCores tells.
bool MaySharesFitHeadroom(const PodRequest& request, const NodeShape& shape,
                          const GpuHeadroom& headroom);

// Upper bound of node_policy.NodeScore(node, placement) for any placement
// PlaceShares can return: the utilisation after it lies between the node's
// with only the app containers charged on its smallest card and the
// node's with every container charged on its largest card.
int ShareScoreUpperBound(const PlacementPolicy& node_policy,
                         const PodRequest& request, const NodeState& node);

// Upper bound of ShareScoreUpperBound over the nodes of `shape` whose
// utilisation is `utilisation_percent`: per dimension, the utilisation
// after a placement rises by at most the rounded-up percent of the charge.
int ShareShapeScoreBound(const PlacementPolicy& node_policy,
                         const PodRequest& request, const NodeShape& shape,
                         int utilisation_percent);

}  // namespace deviceshare

#endif  // DEVICESHARE_BACKEND_FRACTIONAL_SHARE_H_
