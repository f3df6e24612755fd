#include "defrag/plan_world.h"

#include <utility>

namespace deviceshare::defrag::internal {

PlanWorld::PlanWorld(const DecisionPath& path, ClusterState& state)
    : path_(path), state_(state) {}

PlanWorld::~PlanWorld() { UndoTo(0); }

void PlanWorld::SetTargets(const std::vector<PodRequest>& targets) {
  targets_ = &targets;
  target_cycles_.clear();
  refusals_.clear();
  for (const PodRequest& target : targets) {
    absl::StatusOr<PodCycle> cycle = path_.PreFilter(target, &state_);
    if (cycle.ok()) {
      target_cycles_.push_back(*std::move(cycle));
      refusals_.emplace_back();
    } else {
      target_cycles_.push_back(std::nullopt);
      refusals_.emplace_back(cycle.status().message());
    }
  }
}

const PodCycle* PlanWorld::TargetCycle(size_t target) const {
  const std::optional<PodCycle>& cycle = target_cycles_[target];
  return cycle.has_value() ? &*cycle : nullptr;
}

const PodCycle* PlanWorld::CycleOf(const PodRequest& request) {
  auto [it, inserted] = cycles_.try_emplace(request.uid);
  if (inserted) {
    absl::StatusOr<PodCycle> cycle = path_.PreFilter(request, &state_);
    if (cycle.ok()) it->second = *std::move(cycle);
  }
  return it->second.has_value() ? &*it->second : nullptr;
}

std::optional<NodeVerdict> PlanWorld::BestNodeExcept(
    const PodCycle& cycle, const std::string& except) const {
  std::optional<NodeVerdict> best = path_.Search(cycle, state_);
  if (!best.has_value() || best->node != except) return best;
  // The policy's first choice is the node the pod leaves: the best of
  // the others is the choice without it.
  best.reset();
  for (const NodeState* node : state_.nodes_by_name()) {
    if (node->name() == except) continue;
    NodeVerdict verdict = path_.Filter(cycle, *node, /*explain=*/false);
    if (!verdict.fit.fits()) continue;
    if (!best.has_value() || BetterVerdict(verdict, *best)) {
      best = std::move(verdict);
    }
  }
  return best;
}

std::optional<Move> PlanWorld::TryMove(const std::string& uid) {
  ++moves_tried_;
  const PodRecord* record = state_.FindPod(uid);
  if (record == nullptr || !record->on_ledger) return std::nullopt;
  auto known = request_of_.find(uid);
  if (known == request_of_.end()) {
    requests_.push_back(record->request);
    known = request_of_.emplace(uid, &requests_.back()).first;
  }
  const PodRequest* request = known->second;
  PodAllocation original = record->allocation;
  state_.RemovePod(uid);
  const PodCycle* cycle = CycleOf(*request);
  std::optional<NodeVerdict> destination =
      cycle == nullptr ? std::nullopt
                       : BestNodeExcept(*cycle, original.node_name);
  if (!destination.has_value() ||
      !state_.AddPod(*request, destination->fit.allocation).ok()) {
    // Put back where it was: the room it left is still there.
    (void)state_.AddPod(*request, original);
    return std::nullopt;
  }
  Move move{uid, request->Key(), original.node_name, destination->node};
  undo_.push_back({uid, request, std::move(original)});
  return move;
}

std::optional<std::string> PlanWorld::PlaceTarget(size_t target) {
  const PodCycle* cycle = TargetCycle(target);
  if (cycle == nullptr) return std::nullopt;
  std::optional<NodeVerdict> verdict = path_.Search(*cycle, state_);
  if (!verdict.has_value()) return std::nullopt;
  const PodRequest& request = (*targets_)[target];
  if (!state_.AddPod(request, verdict->fit.allocation, &verdict->claims).ok()) {
    return std::nullopt;
  }
  undo_.push_back({request.uid, &request, std::nullopt});
  return verdict->node;
}

void PlanWorld::UndoTo(size_t mark) {
  while (undo_.size() > mark) {
    Change change = std::move(undo_.back());
    undo_.pop_back();
    state_.RemovePod(change.uid);
    if (change.original.has_value()) {
      (void)state_.AddPod(*change.request, *change.original);
    }
  }
}

}  // namespace deviceshare::defrag::internal
