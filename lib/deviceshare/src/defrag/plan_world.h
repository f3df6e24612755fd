// File: defrag/plan_world.h (private)
//
// PlanWorld: the cluster state a plan is tried on, with every change it
// made undoable in reverse order: a move (the pod evicted, then placed by
// the decision path on its best node other than the one it left) and a
// target placed by DecisionPath::Search. The destructor undoes whatever is
// left, so the caller's state ends as it began (same pods, same
// allocations).
//
// Thread safety: none; it changes the state it was given.
#ifndef DEVICESHARE_SRC_DEFRAG_PLAN_WORLD_H_
#define DEVICESHARE_SRC_DEFRAG_PLAN_WORLD_H_

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "deviceshare/defrag/defrag_planner.h"
#include "deviceshare/model/pod_allocation.h"
#include "deviceshare/model/pod_request.h"
#include "deviceshare/scheduler/cluster_state.h"
#include "deviceshare/scheduler/decision.h"
#include "deviceshare/scheduler/decision_path.h"
#include "deviceshare/scheduler/pod_cycle.h"

namespace deviceshare::defrag::internal {

class PlanWorld {
 public:
  PlanWorld(const DecisionPath& path, ClusterState& state);
  ~PlanWorld();

  PlanWorld(const PlanWorld&) = delete;
  PlanWorld& operator=(const PlanWorld&) = delete;

  const ClusterState& state() const { return state_; }

  // Makes the targets' cycles (PreFilter); a target the path refuses gets
  // no cycle and its message as the reason.
  void SetTargets(const std::vector<PodRequest>& targets);
  // The target's PreFilter message, or "" when it has a cycle.
  const std::string& TargetRefusal(size_t target) const {
    return refusals_[target];
  }
  const PodCycle* TargetCycle(size_t target) const;
  size_t target_count() const { return target_cycles_.size(); }
  std::string TargetKey(size_t target) const {
    return (*targets_)[target].Key();
  }

  // Evicts the bound pod `uid` and places it where the policy puts it,
  // its current node left out. nullopt (nothing changed) when it fits
  // nowhere else.
  std::optional<Move> TryMove(const std::string& uid);
  // Places target `target` by DecisionPath::Search; nullopt (nothing
  // changed) when it fits nowhere.
  std::optional<std::string> PlaceTarget(size_t target);

  // Changes made so far; UndoTo(mark) undoes the later ones.
  size_t mark() const { return undo_.size(); }
  void UndoTo(size_t mark);
  // Moves tried (evictions attempted), for the budget.
  int64_t moves_tried() const { return moves_tried_; }

 private:
  struct Change {
    std::string uid;
    const PodRequest* request = nullptr;  // kept in requests_
    // For a move: the allocation to restore; unset for a target.
    std::optional<PodAllocation> original;
  };

  // The best node for the cycle's pod other than `except`.
  std::optional<NodeVerdict> BestNodeExcept(const PodCycle& cycle,
                                            const std::string& except) const;
  const PodCycle* CycleOf(const PodRequest& request);

  const DecisionPath& path_;
  ClusterState& state_;
  std::vector<std::optional<PodCycle>> target_cycles_;
  std::vector<std::string> refusals_;
  const std::vector<PodRequest>* targets_ = nullptr;
  // The requests of moved pods (stable addresses: cycles point at them).
  std::deque<PodRequest> requests_;
  absl::flat_hash_map<std::string, const PodRequest*> request_of_;
  absl::flat_hash_map<std::string, std::optional<PodCycle>> cycles_;
  std::vector<Change> undo_;
  int64_t moves_tried_ = 0;
};

}  // namespace deviceshare::defrag::internal

#endif  // DEVICESHARE_SRC_DEFRAG_PLAN_WORLD_H_
