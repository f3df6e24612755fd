#include "deviceshare/k8s/pod_priority.h"

#include <limits>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deviceshare/json_text.h"
#include "deviceshare/status_macros.h"
#include "nlohmann/json.hpp"

namespace deviceshare {
namespace {

using Json = nlohmann::json;

constexpr absl::string_view kSystemPrefix = "system-";
constexpr absl::string_view kPreemptLowerPriority = "PreemptLowerPriority";
constexpr absl::string_view kNever = "Never";

const PriorityClass kSystemClasses[] = {
    {"system-cluster-critical", kSystemClusterCriticalPriority, false, true},
    {"system-node-critical", kSystemNodeCriticalPriority, false, true},
};

const PriorityClass* SystemClass(absl::string_view name) {
  for (const PriorityClass& system : kSystemClasses) {
    if (system.name == name) return &system;
  }
  return nullptr;
}

absl::Status Bad(absl::string_view what, absl::string_view field,
                 const Json& value, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: %s: %s %s", what, field, JsonText(value), why));
}

// A whole number in int32 range.
absl::StatusOr<int32_t> ReadInt32(absl::string_view what,
                                  absl::string_view field, const Json& value) {
  if (!value.is_number_integer()) {
    return Bad(what, field, value, "is not a whole number");
  }
  const bool in_range =
      value.is_number_unsigned()
          ? value.get<uint64_t>() <=
                static_cast<uint64_t>(std::numeric_limits<int32_t>::max())
          : value.get<int64_t>() >= std::numeric_limits<int32_t>::min() &&
                value.get<int64_t>() <= std::numeric_limits<int32_t>::max();
  if (!in_range) return Bad(what, field, value, "is outside int32");
  return static_cast<int32_t>(value.get<int64_t>());
}

// PreemptLowerPriority -> true, Never -> false.
absl::StatusOr<bool> ReadPreemptionPolicy(absl::string_view what,
                                          absl::string_view field,
                                          const Json& value) {
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    if (text == kPreemptLowerPriority) return true;
    if (text == kNever) return false;
  }
  return Bad(what, field, value, "is not PreemptLowerPriority or Never");
}

// The member of `object`, nullptr when absent or null.
const Json* Member(const Json& object, const char* name) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(name);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

absl::Status CheckSystemClass(const PriorityClass& pc) {
  const PriorityClass* system = SystemClass(pc.name);
  if (system == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "PriorityClass %s: metadata.name: names starting \"system-\" are "
        "reserved for system-cluster-critical and system-node-critical",
        pc.name));
  }
  if (pc.value != system->value || pc.global_default) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "PriorityClass %s: a system class keeps value %d and globalDefault "
        "false (got value %d, globalDefault %s)",
        pc.name, system->value, pc.value,
        pc.global_default ? "true" : "false"));
  }
  return absl::OkStatus();
}

// "pod ns/name" for errors.
std::string PodName(const Json& pod) {
  const Json* metadata = Member(pod, "metadata");
  const Json* name = metadata ? Member(*metadata, "name") : nullptr;
  const Json* ns = metadata ? Member(*metadata, "namespace") : nullptr;
  return absl::StrCat(
      "pod ", ns && ns->is_string() ? ns->get<std::string>() : "default", "/",
      name && name->is_string() ? name->get<std::string>() : "");
}

// The class spec.priorityClassName names (error when unknown), else the
// global default; nullptr when neither.
absl::StatusOr<const PriorityClass*> ClassOf(const Json& pod,
                                             const PriorityClasses& classes) {
  const Json* spec = Member(pod, "spec");
  const Json* name = spec ? Member(*spec, "priorityClassName") : nullptr;
  if (name == nullptr ||
      (name->is_string() && name->get_ref<const std::string&>().empty())) {
    return classes.global_default();
  }
  if (!name->is_string()) {
    return Bad(PodName(pod), "spec.priorityClassName", *name,
               "is not a string");
  }
  const PriorityClass* found = classes.Find(name->get<std::string>());
  if (found == nullptr) {
    return Bad(PodName(pod), "spec.priorityClassName", *name,
               "names no PriorityClass (the API server's priority admission "
               "refuses such a pod)");
  }
  return found;
}

}  // namespace

absl::StatusOr<PriorityClass> ParsePriorityClass(const Json& object) {
  if (!object.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("PriorityClass: a ",
                                                   object.type_name(),
                                                   ", want an "
                                                   "object"));
  }
  PriorityClass pc;
  const Json* metadata = Member(object, "metadata");
  const Json* name = metadata ? Member(*metadata, "name") : nullptr;
  if (name == nullptr || !name->is_string() ||
      name->get_ref<const std::string&>().empty()) {
    return absl::InvalidArgumentError(
        "PriorityClass: metadata.name is missing");
  }
  pc.name = name->get<std::string>();
  const std::string what = absl::StrCat("PriorityClass ", pc.name);
  const Json* value = Member(object, "value");
  if (value == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": value is missing"));
  }
  DS_ASSIGN_OR_RETURN(pc.value, ReadInt32(what, "value", *value));
  if (const Json* global = Member(object, "globalDefault")) {
    if (!global->is_boolean()) {
      return Bad(what, "globalDefault", *global, "is not true or false");
    }
    pc.global_default = global->get<bool>();
  }
  if (const Json* policy = Member(object, "preemptionPolicy")) {
    DS_ASSIGN_OR_RETURN(
        pc.preempts, ReadPreemptionPolicy(what, "preemptionPolicy", *policy));
  }
  if (absl::StartsWith(pc.name, kSystemPrefix)) {
    DS_RETURN_IF_ERROR(CheckSystemClass(pc));
  } else if (pc.value > kHighestUserDefinablePriority) {
    return Bad(what, "value", *value,
               absl::StrCat("is above ", kHighestUserDefinablePriority,
                            ", the highest a user-defined class may have"));
  }
  return pc;
}

PriorityClasses::PriorityClasses() {
  for (const PriorityClass& system : kSystemClasses) {
    classes_.emplace(system.name, system);
  }
}

absl::Status PriorityClasses::Add(const Json& object) {
  DS_ASSIGN_OR_RETURN(PriorityClass pc, ParsePriorityClass(object));
  if (SystemClass(pc.name) != nullptr) return absl::OkStatus();
  if (classes_.contains(pc.name)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("PriorityClass %s is defined twice", pc.name));
  }
  if (pc.global_default && global_default_) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "PriorityClass %s: globalDefault: true, but PriorityClass %s is "
        "already the global default",
        pc.name, *global_default_));
  }
  if (pc.global_default) global_default_ = pc.name;
  std::string name = pc.name;
  classes_.emplace(std::move(name), std::move(pc));
  return absl::OkStatus();
}

const PriorityClass* PriorityClasses::Find(absl::string_view name) const {
  auto it = classes_.find(name);
  return it == classes_.end() ? nullptr : &it->second;
}

const PriorityClass* PriorityClasses::global_default() const {
  return global_default_ ? Find(*global_default_) : nullptr;
}

absl::StatusOr<int32_t> PodPriority(const Json& pod,
                                    const PriorityClasses& classes) {
  const Json* spec = Member(pod, "spec");
  if (const Json* priority = spec ? Member(*spec, "priority") : nullptr) {
    return ReadInt32(PodName(pod), "spec.priority", *priority);
  }
  DS_ASSIGN_OR_RETURN(const PriorityClass* pc, ClassOf(pod, classes));
  return pc == nullptr ? 0 : pc->value;
}

absl::StatusOr<bool> PodPreempts(const Json& pod,
                                 const PriorityClasses& classes) {
  const Json* spec = Member(pod, "spec");
  if (const Json* policy = spec ? Member(*spec, "preemptionPolicy") : nullptr) {
    return ReadPreemptionPolicy(PodName(pod), "spec.preemptionPolicy", *policy);
  }
  DS_ASSIGN_OR_RETURN(const PriorityClass* pc, ClassOf(pod, classes));
  return pc == nullptr || pc->preempts;
}

}  // namespace deviceshare
