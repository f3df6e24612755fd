// File: k8s/pod_priority.h
//
// A pod's scheduling priority as Kubernetes gives it: PriorityClass
// objects (scheduling.k8s.io/v1) and the pod's spec.priority,
// spec.priorityClassName and spec.preemptionPolicy, read from JSON trees.
//
// PriorityClasses: name -> class, always holding the two classes the API
// server creates itself (system-cluster-critical 2000000000,
// system-node-critical 2000001000). Add() reads one PriorityClass object
// and checks what the API server's validation checks:
//   - metadata.name is set; `value` is a whole number in int32 range and at
//     most 1000000000 (HighestUserDefinablePriority) unless the name is a
//     system class's;
//   - a name starting "system-" is one of the two system classes, restated
//     with its value and globalDefault false (then Add changes nothing);
//   - `globalDefault` is a boolean; at most one class is the global default;
//   - `preemptionPolicy` is PreemptLowerPriority (the default) or Never;
//   - a name is defined once.
// Errors are InvalidArgument naming the class, the field and the value;
// after an error the classes are as before the call.
//
// PodPriority(pod, classes): spec.priority when set (what admission wrote
// on a live pod; it wins, as the scheduler reads only that field); else
// spec.priorityClassName's value (an unknown name is InvalidArgument
// naming it: the API server's priority admission refuses such a pod);
// else the global default class's value; else 0.
//
// PodPreempts(pod, classes): whether the pod may preempt others
// (kube-scheduler's PodEligibleToPreemptOthers, first rule):
// spec.preemptionPolicy when set, else its class's (priorityClassName,
// else the global default), else PreemptLowerPriority. Never -> false.
//
// Thread safety: PriorityClasses is a value type; the functions are pure.
#ifndef DEVICESHARE_K8S_POD_PRIORITY_H_
#define DEVICESHARE_K8S_POD_PRIORITY_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json_fwd.hpp"

namespace deviceshare {

// scheduling.HighestUserDefinablePriority and the system classes' values.
inline constexpr int32_t kHighestUserDefinablePriority = 1000000000;
inline constexpr int32_t kSystemClusterCriticalPriority = 2000000000;
inline constexpr int32_t kSystemNodeCriticalPriority = 2000001000;

struct PriorityClass {
  std::string name;
  int32_t value = 0;
  bool global_default = false;
  // preemptionPolicy: false for Never.
  bool preempts = true;

  bool operator==(const PriorityClass& other) const = default;
};

class PriorityClasses {
 public:
  // The two system classes only.
  PriorityClasses();

  // Reads one PriorityClass object (its kind is not checked).
  absl::Status Add(const nlohmann::json& object);

  // nullptr when no class has that name.
  const PriorityClass* Find(absl::string_view name) const;
  // nullptr when no class is the global default.
  const PriorityClass* global_default() const;
  // Classes by name, the system ones included.
  const std::map<std::string, PriorityClass, std::less<>>& all() const {
    return classes_;
  }

 private:
  std::map<std::string, PriorityClass, std::less<>> classes_;
  std::optional<std::string> global_default_;
};

// Reads a PriorityClass object alone (the rules of Add that need no other
// class).
absl::StatusOr<PriorityClass> ParsePriorityClass(const nlohmann::json& object);

absl::StatusOr<int32_t> PodPriority(const nlohmann::json& pod,
                                    const PriorityClasses& classes);

absl::StatusOr<bool> PodPreempts(const nlohmann::json& pod,
                                 const PriorityClasses& classes);

}  // namespace deviceshare

#endif  // DEVICESHARE_K8S_POD_PRIORITY_H_
