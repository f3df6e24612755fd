// File: extender/reservation.h
//
// A reservation: a pod that the extender has put on a node's ledgers but
// that the API server does not show bound yet. The ledger charge itself
// lives in the Scheduler; this is the bookkeeping that decides when the
// charge may be dropped. A value type.
#ifndef DEVICESHARE_EXTENDER_RESERVATION_H_
#define DEVICESHARE_EXTENDER_RESERVATION_H_

#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "deviceshare/extender/node_ranking.h"
#include "deviceshare/model/pod_allocation.h"
#include "deviceshare/model/pod_request.h"
#include "deviceshare/scheduler/decision.h"

namespace deviceshare::extender {

enum class ReservationState {
  // /filter placed the pod on its best node. Expires at `deadline` unless
  // a /bind takes it over: kube-scheduler may bind elsewhere, or never.
  kFiltered,
  // /bind is writing the record and creating the Binding. Never expires;
  // the bind ends it either way.
  kBinding,
  // The Binding was created. Kept until a watch event shows the pod bound,
  // so that an older event (the pod before the patch) cannot release it.
  kBound,
  // Read back from a pod's annotations while the pod is unbound: a bind of
  // an earlier run (or another replica) that may never have completed.
  // Expires at `deadline` unless the pod shows up bound.
  kRecorded,
};

absl::string_view ReservationStateName(ReservationState state);

struct Reservation {
  ReservationState state = ReservationState::kFiltered;
  std::string node;
  absl::Time deadline = absl::InfiniteFuture();
  PodRequest request;
  PodAllocation allocation;
  // The pod's ResourceClaims with their allocations, as the reservation
  // made them (what /bind writes to the claims' status).
  std::vector<ClaimDecision> claims;
  // The nodes /filter found fit, best first, kept for the /prioritize call
  // that follows.
  NodeRanking priorities;
  // The pod was deleted while a bind was in flight; the bind must undo.
  bool deleted = false;
};

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_RESERVATION_H_
