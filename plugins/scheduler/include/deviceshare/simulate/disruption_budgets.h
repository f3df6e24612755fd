// File: simulate/disruption_budgets.h
//
// PodDisruptionBudgets (policy/v1) for simulate's --preemption: which
// budget each pod counts against and how many of its pods must stay up.
//
// A budget selects the pods of its namespace whose metadata.labels match
// spec.selector (kube::SelectorMatches: a missing selector selects none).
// How many must stay healthy, as the disruption controller computes it
// with `expected` = the budget's pods in the input (pending and running:
// the replicas their controllers want):
//   minAvailable N        -> N
//   minAvailable P%       -> ceil(P x expected / 100)
//   maxUnavailable N      -> expected - N (at least 0)
//   maxUnavailable P%     -> expected - ceil(P x expected / 100)
//   neither               -> 0 (nothing protected)
// disruptionsAllowed is then, at any moment, the budget's pods placed
// (healthy) less that figure, at least 0; the preemptor counts it.
//
// A pod several budgets select counts against the first by
// namespace/name only (the victim search knows one group per pod; the
// eviction API refuses such a pod anyway).
//
// Errors: InvalidArgument naming the budget and the field: no
// metadata.name, both minAvailable and maxUnavailable, a value that is
// not a non-negative whole number or "N%", a bad selector.
//
// Thread safety: a pure function.
#ifndef DEVICESHARE_SIMULATE_DISRUPTION_BUDGETS_H_
#define DEVICESHARE_SIMULATE_DISRUPTION_BUDGETS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace deviceshare::simulate {

struct BudgetGroups {
  // Pod uid -> "namespace/name" of its budget; pods no budget selects are
  // not listed.
  std::map<std::string, std::string, std::less<>> group_of;
  // Budget "namespace/name" -> pods that must stay healthy.
  std::map<std::string, int32_t, std::less<>> min_healthy;
};

// A pod as the budgets see it.
struct BudgetPod {
  std::string uid;
  std::string namespace_name;
  const nlohmann::json* labels = nullptr;  // null: none
};

absl::StatusOr<BudgetGroups> GroupPodsByBudget(
    const std::vector<nlohmann::json>& budgets,
    const std::vector<BudgetPod>& pods);

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_DISRUPTION_BUDGETS_H_
