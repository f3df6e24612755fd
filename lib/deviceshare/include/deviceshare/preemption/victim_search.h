// File: preemption/victim_search.h
//
// VictimSearch: which pods to evict from one node so that a pending pod
// fits there. Given the pending pod (its PodCycle and priority), the node
// and the pods bound on it that may be evicted (priority, evictable, the
// disruption group each belongs to and how many disruptions each group has
// left), it returns the best victim set by the order of
// preemption/victim_order.h: fewest victims, then the lowest highest
// priority, then the least share freed beyond the pod's need.
//
// Rules:
//   - only pods of strictly lower priority than the pending pod, marked
//     evictable, are ever victims; a pod the query does not list is never
//     one;
//   - a set that takes more pods of a disruption group than the group has
//     disruptions left is never chosen;
//   - the fit test is the decision path's own: a copy of the node, the
//     victims released from it as ClusterState::RemovePod releases a pod
//     (every backend's Release, then the pod's host CPU and memory), then
//     DecisionPath::Filter with the pending pod's cycle. Nothing here
//     re-implements a backend's fit.
//
// The search (exact, bounded):
//   - Candidates that cannot matter are dropped first: a candidate only
//     matters if it holds a share on a GPU the pod could take (a GPU of a
//     mode one of the cycle's backends serves, healthy, not cordoned, past
//     the pod's model and uuid filters), or holds host CPU or memory the
//     pod is short of. So a set never frees only shares the pod cannot use.
//   - If the pod does not fit even with every remaining candidate gone, no
//     set helps (found = false). This assumes what the backends guarantee
//     today: releasing shares never turns a fit into a misfit.
//   - Otherwise sets are tried by increasing size, 1, 2, ...; the first
//     size that has a fitting set is the fewest victims, and every set of
//     that size is weighed for the rest of the order (branches that cannot
//     beat the best so far are cut). A minimal set never holds a victim it
//     could do without, so every victim frees something the pod needs: for
//     MIG that is a slot of the placement that needs the fewest evictions.
//   - Before Filter, a set must pass cheap necessary conditions: for a pod
//     whose GPUs come from one container asking k of them (and that is not
//     short of host resources), the victims sit on at most k GPUs (k = 1:
//     all share one); on GPUs without MIG instances, each container finds
//     as many usable GPUs with room for its share as it asks.
//   - The work is bounded by VictimBudget (Filter calls and search steps,
//     counts so that results are deterministic). When either runs out
//     the best set found so far is returned with complete = false.
//
// DRA: a pending pod's claims are filtered against the cluster's DRA state
// as it is; victims' claims are not released by the search.
//
// Errors (InvalidArgument / NotFound, naming the field and value) are for
// bad input only: a null cycle, a node the state does not know, a
// candidate uid that is empty, listed twice, the pending pod itself, or no
// pod bound on that node, a disruption group without an entry, a negative
// budget. "No set helps" is a verdict.
//
// Thread safety: VictimSearch is immutable; Find is const and may run on
// many threads while nobody changes the ClusterState.
#ifndef DEVICESHARE_PREEMPTION_VICTIM_SEARCH_H_
#define DEVICESHARE_PREEMPTION_VICTIM_SEARCH_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "deviceshare/backend/backend_set.h"
#include "deviceshare/preemption/victim_order.h"
#include "deviceshare/scheduler/cluster_state.h"
#include "deviceshare/scheduler/decision.h"
#include "deviceshare/scheduler/decision_path.h"
#include "deviceshare/scheduler/pod_cycle.h"

namespace deviceshare::preemption {

// A pod bound on the node, as the host knows it (Kubernetes keeps priority
// and disruption budgets; the cluster state does not).
struct VictimCandidate {
  std::string uid;
  int32_t priority = 0;
  // False for a pod that must not be evicted (a mirror or critical pod, or
  // one the host protects).
  bool evictable = true;
  // The PodDisruptionBudget group the pod counts against; "" for none
  // (no limit).
  std::string disruption_group;
};

// How much work one search may do. Counts, not time, so that the same
// query always gives the same answer.
struct VictimBudget {
  // DecisionPath::Filter calls, including the check without victims and
  // the one with every candidate gone.
  int64_t filter_calls = 20000;
  // Steps of the search: a candidate added to a partial set, whether the
  // set is then cut, checked cheaply or filtered.
  int64_t steps = 2000000;
};

struct VictimQuery {
  // The pending pod's cycle (DecisionPath::PreFilter); not owned.
  const PodCycle* cycle = nullptr;
  int32_t priority = 0;  // the pending pod's
  std::string node;
  std::vector<VictimCandidate> candidates;
  // Disruptions each group may still take (a PDB's disruptionsAllowed).
  std::map<std::string, int32_t, std::less<>> disruptions_left;
  VictimBudget budget;
};

struct VictimSet {
  // A set that makes the pod fit was found (possibly empty: it fits as
  // is). False: no set helps, or the budget ran out first; see `reason`.
  bool found = false;
  // The search finished: `victims` is the best set by the order, or no
  // set exists. False: the budget ran out; `victims`, if found, is the
  // best set seen.
  bool complete = false;
  std::vector<std::string> victims;  // uids, sorted
  // VictimSetKey::max_priority of the set.
  int32_t max_priority = std::numeric_limits<int32_t>::lowest();
  // ShareMilli summed over the victims' shares on the node ...
  int64_t freed_milli = 0;
  // ... less what the pod takes there (its allocation's charge, in the
  // same unit): the share freed beyond the need. Negative when the node
  // already had part of the room.
  int64_t excess_milli = 0;
  // The pending pod's verdict on the node without the victims: its
  // allocation when found.
  NodeVerdict verdict;
  std::string reason;  // why not, when !found
  int64_t filter_calls = 0;
  int64_t steps = 0;
};

class VictimSearch {
 public:
  // Both must outlive the search; `backends` is the set the path uses.
  VictimSearch(const DecisionPath* path, const BackendSet* backends);

  absl::StatusOr<VictimSet> Find(const ClusterState& state,
                                 const VictimQuery& query) const;

 private:
  const DecisionPath* path_;
  const BackendSet* backends_;
};

}  // namespace deviceshare::preemption

#endif  // DEVICESHARE_PREEMPTION_VICTIM_SEARCH_H_
