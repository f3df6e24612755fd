// File: answer_json.h
//
// The C API's answers as JSON text, in the shapes deviceshare.h documents:
// a decision (its containers in the shape of simulate's placements,
// scheduler/decision_json.h), the filter step's verdicts, the cluster's
// GPU usage. Keys are in a fixed order.
#ifndef DEVICESHARE_CAPI_ANSWER_JSON_H_
#define DEVICESHARE_CAPI_ANSWER_JSON_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "deviceshare/model/pod_request.h"
#include "deviceshare/scheduler/decision.h"
#include "deviceshare/scheduler/scheduler.h"

namespace deviceshare::capi {

// {"placed": true, "pod", "node", "score", "mode", "mode_choice",
//  "containers", "annotations", "claims"} or {"placed": false, "pod",
//  "reasons", "reason_counts"}. Errors are Scheduler::Edits'.
absl::StatusOr<std::string> DecisionJson(const Scheduler& scheduler,
                                         const PodRequest& request,
                                         const Decision& decision);

// [{"node", "fits", "code", "reason", "score"}, ...] in the given order;
// "reason" is empty for a node that fits.
std::string VerdictsJson(const std::vector<NodeVerdict>& verdicts);

// {"nodes", "pods", "gpus", "gpus_idle", "memory_capacity_mib",
//  "memory_used_mib", "core_capacity", "cores_used"}: annotated GPUs and
//  DRA devices together (MIG partitions of DRA devices not counted).
std::string UsageJson(const Scheduler& scheduler);

}  // namespace deviceshare::capi

#endif  // DEVICESHARE_CAPI_ANSWER_JSON_H_
