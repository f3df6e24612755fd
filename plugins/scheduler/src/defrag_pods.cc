#include "deviceshare/simulate/defrag_pods.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "deviceshare/json_text.h"
#include "deviceshare/kube/label_selector.h"

namespace deviceshare::simulate {
namespace {

using nlohmann::json;

const json& Field(const json& object, const char* key) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

std::string Text(const json& value) {
  return value.is_string() ? value.get<std::string>() : "";
}

// The kind of the pod's controller; "" when it has none.
std::string ControllerKind(const json& pod) {
  const json& owners = Field(Field(pod, "metadata"), "ownerReferences");
  if (!owners.is_array()) return "";
  for (const json& owner : owners) {
    const json& controller = Field(owner, "controller");
    if (controller.is_boolean() && controller.get<bool>()) {
      return Text(Field(owner, "kind"));
    }
  }
  return "";
}

struct Budget {
  std::string ns;
  std::string group;  // "namespace/name"
  const json* selector;
  const json* object;
  int32_t selected = 0;  // bound pods it selects
};

// An int or a "N%" of `total`, rounded up
// (intstr.GetScaledValueFromIntOrPercent as the disruption controller calls
// it); nullopt when it reads as neither.
// An integer outside 0..2^31-1 or a percentage outside 0..100 (what the
// API server's validation allows) reads as neither.
std::optional<int32_t> Scaled(const json& value, int32_t total) {
  if (value.is_number_integer()) {
    const int64_t number = value.get<int64_t>();
    if (number < 0 || number > INT32_MAX) return std::nullopt;
    return static_cast<int32_t>(number);
  }
  int32_t percent = 0;
  const std::string text = Text(value);
  if (text.size() < 2 || text.back() != '%' ||
      !absl::SimpleAtoi(absl::string_view(text).substr(0, text.size() - 1),
                        &percent) ||
      percent < 0 || percent > 100) {
    return std::nullopt;
  }
  return static_cast<int32_t>((int64_t{percent} * total + 99) / 100);
}

// status.disruptionsAllowed, else what the disruption controller would
// compute from the spec with every selected bound pod healthy (the pods
// the budget selects are all it expects).
absl::StatusOr<int32_t> DisruptionsAllowed(const Budget& budget) {
  const json& allowed =
      Field(Field(*budget.object, "status"), "disruptionsAllowed");
  if (!allowed.is_null()) {
    // An int32 of at least 0 in the API; anything else would wrap or
    // count down, and defrag would plan on a figure the budget never gave.
    if (!allowed.is_number_integer() || allowed.get<int64_t>() < 0 ||
        allowed.get<int64_t>() > INT32_MAX) {
      return absl::InvalidArgumentError(absl::StrCat(
          "PodDisruptionBudget ", budget.group, ": status.disruptionsAllowed: ",
          JsonText(allowed), " is not a whole number from 0 to 2147483647"));
    }
    return static_cast<int32_t>(allowed.get<int64_t>());
  }
  const json& spec = Field(*budget.object, "spec");
  for (const char* key : {"minAvailable", "maxUnavailable"}) {
    const json& value = Field(spec, key);
    if (value.is_null()) continue;
    std::optional<int32_t> scaled = Scaled(value, budget.selected);
    if (!scaled.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("PodDisruptionBudget ", budget.group, ": spec.", key,
                       ": ", JsonText(value),
                       " is not a whole number from 0 to 2147483647 or a "
                       "percentage from 0% to 100%"));
    }
    return std::max(0, std::string(key) == "minAvailable"
                           ? budget.selected - *scaled
                           : *scaled);
  }
  return 0;
}

// Why the pod may not move; "" when it may.
std::string UnmovableReason(const json& pod,
                            const std::map<std::string, std::string>& notes) {
  auto movable = notes.find(kMovableAnnotation);
  if (movable != notes.end() &&
      absl::AsciiStrToLower(movable->second) == "false") {
    return absl::StrCat(kMovableAnnotation, ": \"false\"");
  }
  const std::string controller = ControllerKind(pod);
  if (controller.empty()) {
    return "no controller (metadata.ownerReferences): an evicted pod would "
           "not come back";
  }
  if (controller == "DaemonSet") {
    return "a DaemonSet's: it would come back on the same node";
  }
  return "";
}

}  // namespace

absl::StatusOr<DefragPods> DefragPodsOf(const DefragInputs& inputs) {
  DefragPods result;
  std::vector<Budget> budgets;
  for (const json& budget : inputs.budgets) {
    const json& metadata = Field(budget, "metadata");
    std::string ns = Text(Field(metadata, "namespace"));
    if (ns.empty()) ns = "default";
    budgets.push_back({ns, absl::StrCat(ns, "/", Text(Field(metadata, "name"))),
                       &Field(Field(budget, "spec"), "selector"), &budget});
  }
  for (const input::RecordedPod& running : inputs.workload.running) {
    const PodRequest& request = running.request;
    defrag::BoundPod pod;
    pod.uid = request.uid;
    auto priority = inputs.workload.priorities.find(request.uid);
    if (priority != inputs.workload.priorities.end()) {
      pod.priority = priority->second.priority;
    }
    auto object = inputs.pod_objects.find(request.uid);
    static const json kNone = json::object();
    const json& pod_object =
        object == inputs.pod_objects.end() ? kNone : object->second;
    std::string why = UnmovableReason(pod_object, running.annotations);
    const json& labels = Field(Field(pod_object, "metadata"), "labels");
    int selecting = 0;
    for (Budget& budget : budgets) {
      if (budget.ns != request.namespace_name) continue;
      absl::StatusOr<bool> matches =
          kube::SelectorMatches(*budget.selector, labels);
      if (!matches.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("PodDisruptionBudget ", budget.group,
                         ": spec.selector: ", matches.status().message()));
      }
      if (!*matches) continue;
      ++selecting;
      ++budget.selected;
      pod.disruption_group = budget.group;
    }
    if (why.empty() && selecting > 1) {
      why =
          "more than one PodDisruptionBudget selects it (the Eviction API "
          "refuses such a pod)";
    }
    if (!why.empty()) {
      pod.movable = false;
      pod.disruption_group.clear();
      ++result.unmovable[why];
    }
    result.pods.push_back(std::move(pod));
  }
  for (const Budget& budget : budgets) {
    absl::StatusOr<int32_t> allowed = DisruptionsAllowed(budget);
    if (!allowed.ok()) return allowed.status();
    result.disruptions_left[budget.group] = *allowed;
  }
  return result;
}

}  // namespace deviceshare::simulate
