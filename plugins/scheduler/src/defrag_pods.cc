#include "deviceshare/simulate/defrag_pods.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
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
};

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
    const std::string group =
        absl::StrCat(ns, "/", Text(Field(metadata, "name")));
    const json& allowed = Field(Field(budget, "status"), "disruptionsAllowed");
    result.disruptions_left[group] =
        allowed.is_number_integer() ? allowed.get<int32_t>() : 0;
    budgets.push_back({ns, group, &Field(Field(budget, "spec"), "selector")});
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
    for (const Budget& budget : budgets) {
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
  return result;
}

}  // namespace deviceshare::simulate
