#include "deviceshare/defrag/defrag_planner.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "defrag/plan_search.h"
#include "defrag/plan_world.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::defrag {
namespace {

using internal::ExactPlan;
using internal::ExactResult;
using internal::GreedyPlan;
using internal::MovableCandidate;
using internal::PlanWorld;
using internal::SearchInput;

absl::Status CheckBudget(const DefragBudget& budget) {
  if (budget.max_moves < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("budget.max_moves: ", budget.max_moves, " is negative"));
  }
  if (budget.exact_candidates < 0 || budget.exact_steps < 0 ||
      budget.greedy_nodes < 0 || budget.victim_filter_calls < 0) {
    return absl::InvalidArgumentError(
        "budget: exact_candidates, exact_steps, greedy_nodes and "
        "victim_filter_calls must not be negative");
  }
  return absl::OkStatus();
}

// The pods that may move, by (priority, uid): listed, movable, on a
// ledger, without claims, of a group with a disruption left.
absl::StatusOr<std::vector<MovableCandidate>> Candidates(
    const ClusterState& state, const DefragQuery& query) {
  std::vector<MovableCandidate> candidates;
  absl::flat_hash_set<std::string> seen;
  for (const BoundPod& pod : query.pods) {
    if (pod.uid.empty()) {
      return absl::InvalidArgumentError("pods: a uid is empty");
    }
    if (!seen.insert(pod.uid).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("pods: uid \"", pod.uid, "\" is listed twice"));
    }
    const PodRecord* record = state.FindPod(pod.uid);
    if (record == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pods: uid \"", pod.uid, "\" is not bound in the cluster state"));
    }
    auto left = query.disruptions_left.find(pod.disruption_group);
    if (!pod.disruption_group.empty() && left == query.disruptions_left.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("disruptions_left: no entry for group \"",
                       pod.disruption_group, "\" of pod ", pod.uid));
    }
    if (!pod.movable || !record->on_ledger || record->request.HasClaims() ||
        !record->claim_keys.empty() ||
        (!pod.disruption_group.empty() && left->second <= 0)) {
      continue;
    }
    candidates.push_back({pod.uid, pod.priority, pod.disruption_group,
                          record->allocation.node_name});
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const MovableCandidate& a, const MovableCandidate& b) {
              return std::pair(a.priority, a.uid) <
                     std::pair(b.priority, b.uid);
            });
  return candidates;
}

constexpr char kHopeless[] =
    "fits no node, not even with every pod that may move moved off it";

// The plan of an exact sequence: its moves replayed, then the targets.
DefragPlan ReplaySequence(PlanWorld& world, const SearchInput& input,
                          const ExactResult& exact) {
  DefragPlan plan;
  for (const std::string& uid : exact.sequence) {
    std::optional<Move> move = world.TryMove(uid);
    if (move.has_value()) plan.moves.push_back(*std::move(move));
  }
  const int32_t after = static_cast<int32_t>(plan.moves.size());
  for (size_t t = 0; t < world.target_count(); ++t) {
    if (!world.TargetRefusal(t).empty()) {
      plan.unplaceable.push_back({world.TargetKey(t), world.TargetRefusal(t)});
    } else if (input.hopeless[t]) {
      plan.unplaceable.push_back({world.TargetKey(t), kHopeless});
    } else if (std::optional<std::string> node = world.PlaceTarget(t)) {
      plan.placements.push_back({world.TargetKey(t), *node, after});
    } else {
      plan.unplaceable.push_back({world.TargetKey(t), "fits no node"});
    }
  }
  world.UndoTo(0);
  return plan;
}

// The targets no plan can place: they fit no node as it is, and no node
// with every pod that may move gone from it (moves never take a pod that
// may not move off a node, nor free room on a node they move pods to).
std::vector<bool> Hopeless(PlanWorld& world,
                           const preemption::VictimSearch& victims,
                           const SearchInput& input) {
  std::map<std::string, std::vector<preemption::VictimCandidate>> by_node;
  for (const MovableCandidate& c : input.candidates) {
    by_node[c.node].push_back({c.uid, 0, true, c.group});
  }
  std::vector<bool> hopeless(input.targets, false);
  for (size_t t = 0; t < input.targets; ++t) {
    if (world.TargetCycle(t) == nullptr) continue;
    if (world.PlaceTarget(t).has_value()) {
      world.UndoTo(0);
      continue;
    }
    bool helps = false;
    for (const auto& [node, candidates] : by_node) {
      preemption::VictimQuery query;
      query.cycle = world.TargetCycle(t);
      query.priority = 1;
      query.node = node;
      query.candidates = candidates;
      query.disruptions_left = input.disruptions_left;
      // As is, then every candidate gone: a set exists or none does.
      query.budget.filter_calls = 2;
      absl::StatusOr<preemption::VictimSet> set =
          victims.Find(world.state(), query);
      helps = !set.ok() || set->found || !set->complete;
      if (helps) break;
    }
    hopeless[t] = !helps;
  }
  return hopeless;
}

// Whether the plan places every target the path did not refuse and some
// plan might place.
bool EveryTargetPlaced(const PlanWorld& world, const SearchInput& input,
                       const DefragPlan& plan) {
  size_t placeable = 0;
  for (size_t t = 0; t < world.target_count(); ++t) {
    placeable += world.TargetRefusal(t).empty() && !input.hopeless[t] ? 1 : 0;
  }
  return plan.placements.size() == placeable;
}

}  // namespace

std::vector<PodRequest> WholeGpuTargets(int32_t count) {
  std::vector<PodRequest> targets;
  for (int32_t i = 1; i <= count; ++i) {
    PodRequest pod;
    pod.namespace_name = "defrag";
    pod.name = absl::StrCat("whole-gpu-", i);
    pod.uid = pod.Key();
    ContainerRequest container;
    container.name = "gpu";
    container.gpu_count = 1;
    container.cores = 100;  // memory 0 and percent 0: the whole card
    pod.containers.push_back(std::move(container));
    targets.push_back(std::move(pod));
  }
  return targets;
}

DefragPlanner::DefragPlanner(const DecisionPath* path,
                             const BackendSet* backends)
    : path_(path), backends_(backends) {}

absl::StatusOr<DefragPlan> DefragPlanner::Plan(ClusterState& state,
                                               const DefragQuery& query) const {
  DS_RETURN_IF_ERROR(CheckBudget(query.budget));
  SearchInput input;
  DS_ASSIGN_OR_RETURN(input.candidates, Candidates(state, query));
  input.disruptions_left = query.disruptions_left;
  input.budget = query.budget;
  input.targets = query.targets.size();

  PlanWorld world(*path_, state);
  world.SetTargets(query.targets);
  const preemption::VictimSearch victims(path_, backends_);
  DefragPlan plan = GreedyPlan(world, victims, input);
  plan.movable_pods = static_cast<int64_t>(input.candidates.size());
  const bool small = input.candidates.size() <=
                     static_cast<size_t>(query.budget.exact_candidates);
  input.hopeless = small ? Hopeless(world, victims, input)
                         : std::vector<bool>(input.targets, false);
  const bool greedy_placed_all = EveryTargetPlaced(world, input, plan);
  const bool without_moves = greedy_placed_all && plan.moves.empty();
  plan.complete = without_moves;
  if (without_moves || !small) return plan;
  const int32_t depth = greedy_placed_all
                            ? static_cast<int32_t>(plan.moves.size()) - 1
                            : query.budget.max_moves;
  ExactResult exact = ExactPlan(world, input, depth);
  // Refused and hopeless targets stay unplaceable whatever moves; the
  // exact search placed the rest.
  DefragPlan result = exact.found ? ReplaySequence(world, input, exact) : plan;
  result.exact = true;
  result.complete = !exact.out_of_budget;
  result.movable_pods = plan.movable_pods;
  result.exact_steps = exact.steps;
  return result;
}

}  // namespace deviceshare::defrag
