// File: input/pod_priorities.h
//
// The pods file's priorities (simulate's `--pods`): PriorityClass objects
// (scheduling.k8s.io/v1) may stand anywhere in the file, before or after
// the pods that name them, so a pod's priority fields are kept as read and
// resolved once the whole file is read (k8s/pod_priority.h: spec.priority,
// else spec.priorityClassName's value, else the global default class's,
// else 0; spec.preemptionPolicy likewise).
//
// Errors: a bad PriorityClass (Add) and a pod naming an unknown class
// (Resolve) are InvalidArgument, located at the object's document.
//
// Thread safety: one thread at a time.
#ifndef DEVICESHARE_INPUT_POD_PRIORITIES_H_
#define DEVICESHARE_INPUT_POD_PRIORITIES_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "deviceshare/input/yaml_document_lines.h"
#include "deviceshare/k8s/pod_priority.h"
#include "nlohmann/json.hpp"

namespace deviceshare::input {

struct PodPriorityInfo {
  int32_t priority = 0;
  // spec.preemptionPolicy (or its class's) is not Never.
  bool preempts = true;

  bool operator==(const PodPriorityInfo& other) const = default;
};

// By pod uid; a pod not listed has priority 0 and may preempt.
using PodPriorityMap = std::map<std::string, PodPriorityInfo, std::less<>>;

class PriorityCollector {
 public:
  // A PriorityClass object of document `document` (1-based).
  absl::Status AddClass(const nlohmann::json& object, size_t document,
                        YamlDocumentErrors& errors);
  // A pod (pending or running) with its uid; kept only when it has
  // priority fields.
  void AddPod(const nlohmann::json& pod, const std::string& uid,
              size_t document);
  // Every pod's priority; `uids`: every pod added, for the global default.
  absl::StatusOr<PodPriorityMap> Resolve(const std::vector<std::string>& uids,
                                         YamlDocumentErrors& errors) const;
  // PriorityClass objects read.
  int classes_read() const { return classes_read_; }

 private:
  struct KeptPod {
    std::string uid;
    size_t document = 0;
    nlohmann::json fields;  // metadata name/namespace and the spec fields
  };
  PriorityClasses classes_;
  std::vector<KeptPod> kept_;
  int classes_read_ = 0;
};

}  // namespace deviceshare::input

#endif  // DEVICESHARE_INPUT_POD_PRIORITIES_H_
