// The exact search: iterative deepening on the number of moves. At depth
// d every ordered sequence of d distinct movable pods is tried (order
// matters: a move's destination depends on the moves before it); a
// sequence after which every target is placed ends the deepening, and the
// rest of depth d is weighed for the priority rule.
#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>

#include "defrag/plan_search.h"

namespace deviceshare::defrag::internal {
namespace {

// The priority rule's key of a sequence: its highest priority, how many
// pods have it, then the uids sorted. Smaller is better.
using PlanKey = std::tuple<int32_t, int64_t, std::vector<std::string>>;

class Exact {
 public:
  Exact(PlanWorld& world, const SearchInput& in)
      : world_(world),
        in_(in),
        left_(in.disruptions_left),
        used_(in.candidates.size(), false),
        start_(world.moves_tried()) {}

  ExactResult Run(int32_t max_depth) {
    for (int32_t depth = 0; depth <= max_depth; ++depth) {
      Deepen(depth);
      if (result_.found || result_.out_of_budget) break;
    }
    result_.steps = world_.moves_tried() - start_;
    return result_;
  }

 private:
  void Deepen(int32_t left) {
    if (left == 0) {
      Leaf();
      return;
    }
    for (size_t i = 0; i < in_.candidates.size(); ++i) {
      const MovableCandidate& c = in_.candidates[i];
      if (used_[i] || !GroupHasRoom(c.group)) continue;
      if (world_.moves_tried() - start_ >= in_.budget.exact_steps) {
        result_.out_of_budget = true;
        return;
      }
      const size_t mark = world_.mark();
      if (!world_.TryMove(c.uid).has_value()) continue;
      used_[i] = true;
      if (!c.group.empty()) --left_[c.group];
      sequence_.push_back(i);
      Deepen(left - 1);
      sequence_.pop_back();
      if (!c.group.empty()) ++left_[c.group];
      used_[i] = false;
      world_.UndoTo(mark);
      if (result_.out_of_budget) return;
    }
  }

  bool GroupHasRoom(const std::string& group) const {
    if (group.empty()) return true;
    auto left = left_.find(group);
    return left != left_.end() && left->second > 0;
  }

  // Whether every target with a cycle is placed after the sequence.
  void Leaf() {
    const size_t mark = world_.mark();
    bool all = true;
    for (size_t t = 0; t < in_.targets && all; ++t) {
      if (world_.TargetCycle(t) == nullptr || in_.hopeless[t]) continue;
      all = world_.PlaceTarget(t).has_value();
    }
    world_.UndoTo(mark);
    if (!all) return;
    PlanKey key = KeyOf();
    if (result_.found && !(key < best_)) return;
    best_ = std::move(key);
    result_.found = true;
    result_.sequence.clear();
    for (size_t i : sequence_) {
      result_.sequence.push_back(in_.candidates[i].uid);
    }
  }

  PlanKey KeyOf() const {
    int32_t highest = std::numeric_limits<int32_t>::lowest();
    int64_t at_highest = 0;
    std::vector<std::string> uids;
    for (size_t i : sequence_) {
      const MovableCandidate& c = in_.candidates[i];
      if (c.priority > highest) {
        highest = c.priority;
        at_highest = 0;
      }
      if (c.priority == highest) ++at_highest;
      uids.push_back(c.uid);
    }
    std::sort(uids.begin(), uids.end());
    return {highest, at_highest, std::move(uids)};
  }

  PlanWorld& world_;
  const SearchInput& in_;
  std::map<std::string, int32_t, std::less<>> left_;
  std::vector<bool> used_;
  const int64_t start_;
  std::vector<size_t> sequence_;
  PlanKey best_;
  ExactResult result_;
};

}  // namespace

ExactResult ExactPlan(PlanWorld& world, const SearchInput& input,
                      int32_t max_depth) {
  return Exact(world, input).Run(max_depth);
}

}  // namespace deviceshare::defrag::internal
