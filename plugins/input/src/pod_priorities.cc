#include "deviceshare/input/pod_priorities.h"

#include <utility>

#include "absl/container/flat_hash_set.h"

namespace deviceshare::input {
namespace {

using Json = nlohmann::json;

constexpr const char* kPriorityFields[] = {"priority", "priorityClassName",
                                           "preemptionPolicy"};

}  // namespace

absl::Status PriorityCollector::AddClass(const Json& object, size_t document,
                                         YamlDocumentErrors& errors) {
  absl::Status added = classes_.Add(object);
  if (!added.ok()) return errors.At(document, added);
  ++classes_read_;
  return absl::OkStatus();
}

void PriorityCollector::AddPod(const Json& pod, const std::string& uid,
                               size_t document) {
  auto spec = pod.find("spec");
  if (spec == pod.end() || !spec->is_object()) return;
  Json fields = Json::object();
  for (const char* field : kPriorityFields) {
    auto it = spec->find(field);
    if (it != spec->end() && !it->is_null()) fields["spec"][field] = *it;
  }
  if (fields.empty()) return;
  if (auto metadata = pod.find("metadata"); metadata != pod.end()) {
    fields["metadata"] = *metadata;
  }
  kept_.push_back({uid, document, std::move(fields)});
}

absl::StatusOr<PodPriorityMap> PriorityCollector::Resolve(
    const std::vector<std::string>& uids, YamlDocumentErrors& errors) const {
  PodPriorityMap priorities;
  absl::flat_hash_set<std::string> resolved;
  for (const KeptPod& pod : kept_) {
    absl::StatusOr<int32_t> priority = PodPriority(pod.fields, classes_);
    if (!priority.ok()) return errors.At(pod.document, priority.status());
    absl::StatusOr<bool> preempts = PodPreempts(pod.fields, classes_);
    if (!preempts.ok()) return errors.At(pod.document, preempts.status());
    resolved.insert(pod.uid);
    if (*priority != 0 || !*preempts) {
      priorities[pod.uid] = {*priority, *preempts};
    }
  }
  const PriorityClass* global_default = classes_.global_default();
  if (global_default == nullptr ||
      (global_default->value == 0 && global_default->preempts)) {
    return priorities;
  }
  for (const std::string& uid : uids) {
    if (resolved.contains(uid)) continue;
    priorities[uid] = {global_default->value, global_default->preempts};
  }
  return priorities;
}

}  // namespace deviceshare::input
