#include "deviceshare/simulate/disruption_budgets.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "deviceshare/json_text.h"
#include "deviceshare/kube/label_selector.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::simulate {
namespace {

using Json = nlohmann::json;

// minAvailable / maxUnavailable: a whole number or a percentage.
struct IntOrPercent {
  int64_t value = 0;
  bool percent = false;

  // The count it stands for among `expected` pods, rounded up as the
  // disruption controller rounds.
  int64_t Of(int64_t expected) const {
    return percent ? (value * expected + 99) / 100 : value;
  }
};

struct Budget {
  std::string key;  // namespace/name
  std::string namespace_name;
  Json selector;  // null: selects none
  std::optional<IntOrPercent> min_available;
  std::optional<IntOrPercent> max_unavailable;
};

std::string Text(const Json& object, const char* member) {
  auto it = object.find(member);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

absl::StatusOr<IntOrPercent> ReadIntOrPercent(const std::string& what,
                                              const char* field,
                                              const Json& value) {
  // The API server's ranges: an int32 of at least 0, or 0% to 100%.
  IntOrPercent out;
  if (value.is_number_integer() && value.get<int64_t>() >= 0 &&
      value.get<int64_t>() <= INT32_MAX) {
    out.value = value.get<int64_t>();
    return out;
  }
  if (value.is_string()) {
    absl::string_view text = value.get_ref<const std::string&>();
    if (absl::ConsumeSuffix(&text, "%") && absl::SimpleAtoi(text, &out.value) &&
        out.value >= 0 && out.value <= 100) {
      out.percent = true;
      return out;
    }
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "PodDisruptionBudget %s: spec.%s: %s is not a whole number from 0 to "
      "2147483647 or a percentage from 0%% to 100%%",
      what, field, JsonText(value)));
}

absl::StatusOr<Budget> ReadBudget(const Json& object) {
  Budget budget;
  const Json metadata = object.value("metadata", Json::object());
  const std::string name =
      metadata.is_object() ? Text(metadata, "name") : std::string();
  if (name.empty()) {
    return absl::InvalidArgumentError(
        "PodDisruptionBudget: metadata.name is missing");
  }
  budget.namespace_name = Text(metadata, "namespace");
  if (budget.namespace_name.empty()) budget.namespace_name = "default";
  budget.key = absl::StrCat(budget.namespace_name, "/", name);
  Json spec = object.value("spec", Json::object());
  if (spec.is_null()) spec = Json::object();
  if (!spec.is_object()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "PodDisruptionBudget %s: spec is not a mapping", budget.key));
  }
  budget.selector = spec.value("selector", Json());
  if (auto it = spec.find("minAvailable"); it != spec.end() && !it->is_null()) {
    DS_ASSIGN_OR_RETURN(budget.min_available,
                        ReadIntOrPercent(budget.key, "minAvailable", *it));
  }
  if (auto it = spec.find("maxUnavailable");
      it != spec.end() && !it->is_null()) {
    DS_ASSIGN_OR_RETURN(budget.max_unavailable,
                        ReadIntOrPercent(budget.key, "maxUnavailable", *it));
  }
  if (budget.min_available && budget.max_unavailable) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "PodDisruptionBudget %s: spec.minAvailable and spec.maxUnavailable "
        "are both set (the API server allows one)",
        budget.key));
  }
  return budget;
}

int32_t MinHealthy(const Budget& budget, int64_t expected) {
  int64_t healthy = 0;
  if (budget.min_available) {
    healthy = budget.min_available->Of(expected);
  } else if (budget.max_unavailable) {
    healthy = expected - budget.max_unavailable->Of(expected);
  }
  return static_cast<int32_t>(std::clamp<int64_t>(healthy, 0, INT32_MAX));
}

}  // namespace

absl::StatusOr<BudgetGroups> GroupPodsByBudget(
    const std::vector<Json>& objects, const std::vector<BudgetPod>& pods) {
  std::vector<Budget> budgets;
  for (const Json& object : objects) {
    DS_ASSIGN_OR_RETURN(Budget budget, ReadBudget(object));
    budgets.push_back(std::move(budget));
  }
  std::sort(budgets.begin(), budgets.end(),
            [](const Budget& a, const Budget& b) { return a.key < b.key; });
  BudgetGroups groups;
  for (const Budget& budget : budgets) {
    if (!groups.min_healthy.emplace(budget.key, 0).second) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "PodDisruptionBudget %s is defined twice", budget.key));
    }
    int64_t expected = 0;
    for (const BudgetPod& pod : pods) {
      if (pod.namespace_name != budget.namespace_name) continue;
      absl::StatusOr<bool> selected = kube::SelectorMatches(
          budget.selector, pod.labels != nullptr ? *pod.labels : Json());
      if (!selected.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("PodDisruptionBudget ", budget.key,
                         ": spec.selector: ", selected.status().message()));
      }
      if (!*selected) continue;
      ++expected;
      groups.group_of.emplace(pod.uid, budget.key);  // the first budget wins
    }
    groups.min_healthy[budget.key] = MinHealthy(budget, expected);
  }
  return groups;
}

}  // namespace deviceshare::simulate
