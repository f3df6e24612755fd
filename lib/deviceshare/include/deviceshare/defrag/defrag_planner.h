// File: defrag/defrag_planner.h
//
// DefragPlanner: the fewest moves that make pending pods placeable. A move
// evicts a bound pod and places it again on another node, where the
// decision path's policy puts it (its best node, its current one left
// out), exactly as a controller recreating the pod and the scheduler
// placing it would. A plan is a sequence of moves, in the order they must
// happen: each move's destination is chosen on the cluster as the earlier
// moves left it, so a move whose destination needs room an earlier move
// frees comes after that move. The plan makes the targets placeable: after
// the moves, each target in turn is placed by DecisionPath::Search.
//
// Rules:
//   - only the pods the query lists may move, and of those only the ones
//     marked movable; a pod with DRA claims never moves (its claims would
//     need allocating again);
//   - a pod moves at most once in a plan, and never to the node it leaves;
//     a pod the policy places nowhere else cannot move;
//   - a disruption group never loses more pods in one plan than its
//     disruptions left (a PodDisruptionBudget's disruptionsAllowed);
//   - a move is not a preemption: the pod runs again elsewhere, so any
//     priority may move. Priority only breaks ties: the greedy step ranks
//     a node's set by VictimSearch's order (fewest pods, then the lower
//     highest priority) and moves a set's pods lowest priority first; of
//     the plans of the fewest moves the exact search finds, the one whose
//     highest moved priority is lower wins (then the fewer of the highest,
//     then the uids, for a deterministic answer).
//
// The search:
//   - greedy, always: targets in query order; a target that fits as is is
//     placed; otherwise, per node, VictimSearch (preemption/victim_search.h,
//     every listed movable pod a candidate, the target above every
//     priority) names the fewest pods to move off that node; nodes are
//     tried best set first, each victim re-placed by the policy elsewhere,
//     until the target is placed. A target no node helps is unplaceable,
//     with the reason.
//   - exact, when the instance is small (at most `exact_candidates`
//     movable pods): iterative deepening on the number of moves, from 0 up
//     to one less than the greedy plan's (or `max_moves` when the greedy
//     plan leaves a target unplaceable), over every ordered sequence of
//     distinct movable pods (so chains, a pod moved to make room for
//     another move, are found). The first depth with a plan is the fewest
//     moves; every sequence of that depth is weighed by the priority rule.
//     Without it, the greedy plan stands.
//   - bounded by DefragBudget (counts, so that answers are deterministic);
//     when the budget runs out the best plan found is returned with
//     complete = false.
//
//   - a target that fits no node even with every pod that may move gone
//     from it is unplaceable whatever moves (moves never take a pod that
//     may not move off a node, nor free room where they put a pod): the
//     exact search leaves it out.
//
// `complete`: the search finished. When every target is placeable the
// moves are a fewest-moves plan; otherwise no plan of at most max_moves
// moves places every target that some plan might place, and the moves are
// the greedy plan for the targets it could place.
//
// Plan works on `state` and leaves it holding the same pods with the same
// allocations (node versions change; a target's DRA claims keep the
// allocations its trial placements made, as after a pod's deletion). Errors
// (InvalidArgument naming the field and value) are for bad input only: a listed
// pod the state does not hold, a uid listed twice, a disruption group without
// an entry, a negative budget. A target the path refuses (PreFilter) is
// unplaceable with the path's message; "no plan" is a verdict.
//
// Thread safety: DefragPlanner is immutable; Plan changes `state`, so one
// Plan at a time per state.
#ifndef DEVICESHARE_DEFRAG_DEFRAG_PLANNER_H_
#define DEVICESHARE_DEFRAG_DEFRAG_PLANNER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "deviceshare/backend/backend_set.h"
#include "deviceshare/model/pod_request.h"
#include "deviceshare/scheduler/cluster_state.h"
#include "deviceshare/scheduler/decision_path.h"

namespace deviceshare::defrag {

// A pod bound in the state, as the host knows it (Kubernetes keeps
// priority, the opt-out annotation and disruption budgets; the state does
// not).
struct BoundPod {
  std::string uid;
  int32_t priority = 0;
  // False: the pod never moves (deviceshare.io/movable: "false").
  bool movable = true;
  // The PodDisruptionBudget group the pod counts against; "" for none.
  std::string disruption_group;
};

struct DefragBudget {
  // The most moves a plan may have; the exact search looks no deeper.
  int32_t max_moves = 8;
  // The exact search runs only with at most this many movable pods.
  int32_t exact_candidates = 24;
  // Moves tried by the exact search (a pod evicted and re-placed).
  int64_t exact_steps = 200000;
  // Nodes the greedy step tries per target, best victim set first.
  int32_t greedy_nodes = 16;
  // VictimSearch's budget per node (the greedy step).
  int64_t victim_filter_calls = 20000;
};

struct DefragQuery {
  // The pending pods to make placeable, in the order they will be placed.
  std::vector<PodRequest> targets;
  // The pods that may move; a pod the state holds that is not listed
  // never moves.
  std::vector<BoundPod> pods;
  // Disruptions each group may still take.
  std::map<std::string, int32_t, std::less<>> disruptions_left;
  DefragBudget budget;
};

struct Move {
  std::string uid;
  std::string pod;  // "namespace/name"
  std::string from;
  std::string to;
};

// Where a target goes once the moves are done.
struct TargetPlacement {
  std::string pod;  // "namespace/name"
  std::string node;
  // The moves of the plan done before the target is placed (the first
  // after_moves of `moves`): the greedy plan places each target as soon
  // as its own moves are done; the exact one after all of them.
  int32_t after_moves = 0;
};

struct Unplaceable {
  std::string pod;  // "namespace/name"
  std::string reason;
};

struct DefragPlan {
  std::vector<Move> moves;                  // in the order they must happen
  std::vector<TargetPlacement> placements;  // targets, in query order
  std::vector<Unplaceable> unplaceable;     // targets, in query order
  bool complete = false;
  // Whether the exact search ran (and over how many movable pods).
  bool exact = false;
  int64_t movable_pods = 0;
  int64_t exact_steps = 0;
};

// `count` targets that each ask one whole GPU (every MiB, 100 % of the
// SMs): a plan that places them all leaves `count` GPUs that nothing
// shares. Named "whole-gpu-<i>" in namespace "defrag".
std::vector<PodRequest> WholeGpuTargets(int32_t count);

class DefragPlanner {
 public:
  // Both must outlive the planner; `backends` is the set the path uses.
  DefragPlanner(const DecisionPath* path, const BackendSet* backends);

  absl::StatusOr<DefragPlan> Plan(ClusterState& state,
                                  const DefragQuery& query) const;

 private:
  const DecisionPath* path_;
  const BackendSet* backends_;
};

}  // namespace deviceshare::defrag

#endif  // DEVICESHARE_DEFRAG_DEFRAG_PLANNER_H_
