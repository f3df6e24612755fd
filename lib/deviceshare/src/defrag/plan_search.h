// File: defrag/plan_search.h (private)
//
// The two searches of DefragPlanner (defrag/defrag_planner.h): the greedy
// one, target by target through VictimSearch, and the exact one,
// iterative deepening over sequences of moves. Both run on a PlanWorld
// whose targets are set and leave it as they found it.
#ifndef DEVICESHARE_SRC_DEFRAG_PLAN_SEARCH_H_
#define DEVICESHARE_SRC_DEFRAG_PLAN_SEARCH_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "defrag/plan_world.h"
#include "deviceshare/defrag/defrag_planner.h"
#include "deviceshare/preemption/victim_search.h"

namespace deviceshare::defrag::internal {

// A pod that may move: listed, movable, bound on a ledger, without claims,
// and of a group with a disruption left (or of none).
struct MovableCandidate {
  std::string uid;
  int32_t priority = 0;
  std::string group;
  std::string node;  // where it is bound
};

// What both searches read.
struct SearchInput {
  std::vector<MovableCandidate> candidates;  // by (priority, uid)
  std::map<std::string, int32_t, std::less<>> disruptions_left;
  DefragBudget budget;
  size_t targets = 0;
  // Per target: no plan can place it (the exact search leaves it out).
  std::vector<bool> hopeless;
};

// The greedy plan. Its moves, placements and unplaceable targets; the
// state is back as it was afterwards.
DefragPlan GreedyPlan(PlanWorld& world, const preemption::VictimSearch& search,
                      const SearchInput& input);

struct ExactResult {
  bool found = false;
  bool out_of_budget = false;
  std::vector<std::string> sequence;  // uids, in move order
  int64_t steps = 0;
};

// The fewest moves (up to `max_depth`) after which every target with a
// cycle is placed, in target order; of those, the best by the priority
// rule. `found` false: no such sequence (or the budget ran out first).
ExactResult ExactPlan(PlanWorld& world, const SearchInput& input,
                      int32_t max_depth);

}  // namespace deviceshare::defrag::internal

#endif  // DEVICESHARE_SRC_DEFRAG_PLAN_SEARCH_H_
