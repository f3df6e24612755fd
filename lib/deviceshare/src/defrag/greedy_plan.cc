// The greedy search: for each target that fits nowhere, the nodes ranked
// by the victim set VictimSearch finds there (fewest pods, then the lowest
// highest priority, then the least share freed), each set's pods re-placed
// by the policy elsewhere, until the target fits.
#include <algorithm>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "defrag/plan_search.h"

namespace deviceshare::defrag::internal {
namespace {

using preemption::VictimCandidate;
using preemption::VictimQuery;
using preemption::VictimSearch;
using preemption::VictimSet;
using preemption::VictimSetKey;

// The target outranks every pod: a move is not a preemption, so any
// priority may move; VictimSearch's order still prefers the lowest.
constexpr int32_t kTargetPriority = std::numeric_limits<int32_t>::max();

struct NodeOption {
  std::string node;
  VictimSetKey key;
};

class Greedy {
 public:
  Greedy(PlanWorld& world, const VictimSearch& search, const SearchInput& in)
      : world_(world), search_(search), in_(in), left_(in.disruptions_left) {
    for (const MovableCandidate& c : in_.candidates) by_uid_[c.uid] = &c;
  }

  DefragPlan Run() {
    DefragPlan plan;
    for (size_t t = 0; t < in_.targets; ++t) Place(t, plan);
    world_.UndoTo(0);
    return plan;
  }

 private:
  void Place(size_t target, DefragPlan& plan) {
    const std::string pod = world_.TargetKey(target);
    if (!world_.TargetRefusal(target).empty()) {
      plan.unplaceable.push_back({pod, world_.TargetRefusal(target)});
      return;
    }
    if (std::optional<std::string> node = world_.PlaceTarget(target)) {
      plan.placements.push_back(
          {pod, *node, static_cast<int32_t>(plan.moves.size())});
      return;
    }
    std::vector<NodeOption> options = RankNodes(target);
    if (options.empty()) {
      plan.unplaceable.push_back(
          {pod,
           "fits no node, not even with every pod that may move moved "
           "off it"});
      return;
    }
    const size_t tries = std::min(
        options.size(),
        static_cast<size_t>(std::max(in_.budget.greedy_nodes, int32_t{1})));
    for (size_t i = 0; i < tries; ++i) {
      if (TryNode(target, options[i], plan)) return;
    }
    plan.unplaceable.push_back(
        {pod, absl::StrCat("moving pods does not make room: of the ", tries,
                           tries == 1 ? " node" : " nodes",
                           " tried (best: ", options[0].key.count,
                           options[0].key.count == 1 ? " pod" : " pods",
                           " off ", options[0].node,
                           "), the pods to move fit nowhere else, or the "
                           "target still fits nowhere after they move")});
  }

  // Moves the set's pods (lowest priority first) and places the target;
  // undoes the moves when that fails.
  bool TryNode(size_t target, const NodeOption& option, DefragPlan& plan) {
    const size_t mark = world_.mark();
    const size_t moves = plan.moves.size();
    for (const std::string& uid : option.key.uids) {
      std::optional<Move> move = world_.TryMove(uid);
      if (!move.has_value()) {
        plan.moves.resize(moves);
        world_.UndoTo(mark);
        return false;
      }
      plan.moves.push_back(*std::move(move));
    }
    std::optional<std::string> node = world_.PlaceTarget(target);
    if (!node.has_value()) {
      plan.moves.resize(moves);
      world_.UndoTo(mark);
      return false;
    }
    for (size_t m = moves; m < plan.moves.size(); ++m) {
      moved_.insert(plan.moves[m].uid);
      const std::string& group = by_uid_.at(plan.moves[m].uid)->group;
      if (!group.empty()) --left_[group];
    }
    plan.placements.push_back({world_.TargetKey(target), *node,
                               static_cast<int32_t>(plan.moves.size())});
    return true;
  }

  // Moves still allowed by max_moves.
  size_t Room() const {
    const size_t most = static_cast<size_t>(in_.budget.max_moves);
    return moved_.size() >= most ? 0 : most - moved_.size();
  }

  std::vector<NodeOption> RankNodes(size_t target) {
    std::map<std::string, std::vector<VictimCandidate>> by_node;
    for (const MovableCandidate& c : in_.candidates) {
      if (moved_.contains(c.uid)) continue;
      auto left = left_.find(c.group);
      if (!c.group.empty() && (left == left_.end() || left->second <= 0)) {
        continue;
      }
      by_node[c.node].push_back(
          {c.uid, std::min(c.priority, kTargetPriority - 1), true, c.group});
    }
    std::vector<NodeOption> options;
    for (auto& [node, candidates] : by_node) {
      VictimQuery query;
      query.cycle = world_.TargetCycle(target);
      query.priority = kTargetPriority;
      query.node = node;
      query.candidates = std::move(candidates);
      query.disruptions_left = left_;
      query.budget.filter_calls = in_.budget.victim_filter_calls;
      absl::StatusOr<VictimSet> set = search_.Find(world_.state(), query);
      if (!set.ok() || !set->found || set->victims.empty()) continue;
      if (set->victims.size() > Room()) continue;
      VictimSetKey key{static_cast<int64_t>(set->victims.size()),
                       set->max_priority, set->freed_milli, set->victims};
      options.push_back({node, std::move(key)});
    }
    std::sort(options.begin(), options.end(),
              [](const NodeOption& a, const NodeOption& b) {
                if (a.key.BetterThan(b.key)) return true;
                if (b.key.BetterThan(a.key)) return false;
                return a.node < b.node;
              });
    for (NodeOption& option : options) SortByPriority(option.key.uids);
    return options;
  }

  void SortByPriority(std::vector<std::string>& uids) const {
    std::sort(uids.begin(), uids.end(),
              [&](const std::string& a, const std::string& b) {
                return std::pair(by_uid_.at(a)->priority, a) <
                       std::pair(by_uid_.at(b)->priority, b);
              });
  }

  PlanWorld& world_;
  const VictimSearch& search_;
  const SearchInput& in_;
  std::map<std::string, int32_t, std::less<>> left_;
  absl::flat_hash_set<std::string> moved_;
  absl::flat_hash_map<std::string, const MovableCandidate*> by_uid_;
};

}  // namespace

DefragPlan GreedyPlan(PlanWorld& world, const VictimSearch& search,
                      const SearchInput& input) {
  return Greedy(world, search, input).Run();
}

}  // namespace deviceshare::defrag::internal
