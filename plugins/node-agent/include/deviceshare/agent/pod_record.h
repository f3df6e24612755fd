// File: agent/pod_record.h
//
// PodRecord: what the node agent needs of one Pod bound to its node: who it
// is, where it is in its life, and the allocation record the scheduler
// wrote on it (either dialect, k8s/pod_annotations.h). A value type.
#ifndef DEVICESHARE_AGENT_POD_RECORD_H_
#define DEVICESHARE_AGENT_POD_RECORD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "deviceshare/config/device_config.h"
#include "deviceshare/model/pod_allocation.h"
#include "deviceshare/model/pod_request.h"
#include "nlohmann/json.hpp"

namespace deviceshare::agent {

struct PodRecord {
  std::string uid;
  std::string key;                   // "namespace/name"
  std::string phase;                 // status.phase
  std::string bind_phase;            // "allocating", "success", "failed" or ""
  Dialect dialect = Dialect::kHami;  // of the record
  // When the scheduler decided (vgpu-time, else bind-time; unix seconds; 0
  // when neither is readable). Kubelet admits pods in about this order.
  int64_t decided_at = 0;
  PodAllocation allocation;  // containers in pod order; GPU-less are empty
  // Per container in pod order: nvidia.com/priority (CUDA_TASK_PRIORITY).
  std::vector<std::optional<int32_t>> task_priorities;

  // Finished pods hold nothing any more.
  bool finished() const { return phase == "Succeeded" || phase == "Failed"; }
};

// The record of `pod` if it carries an allocation for `node_name` (the pod's
// spec.nodeName, or the record's node annotation when not bound yet);
// nullopt for a pod without one or bound elsewhere. A record that cannot be
// read is InvalidArgument naming the pod and the annotation.
absl::StatusOr<std::optional<PodRecord>> ParsePodRecord(
    const nlohmann::json& pod, const std::string& node_name,
    const DeviceConfig& config);

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_POD_RECORD_H_
