// File: scheduler/decision_json.h
//
// The JSON of a placed pod's devices, as hosts read it: per container the
// grants and what the node agent injects (Scheduler::Edits). One encoding
// for every host that prints a decision -- `simulate --output json` (its
// "placements") and the C API (plugins/capi) -- so a host's answer can be
// compared with simulate's byte for byte. Keys in this fixed order:
//
//   grant:     {"uuid", "mode", "memory_mib", "cores"} and, for a hardware
//              partition (DeviceGrant::has_partition: a MIG instance),
//              "mig_profile", "mig_start", "mig_slices", "mig_action", and
//              for a configMap geometry "mig_group", "mig_position".
//   container: {"name", "devices": [grant, ...], "env": {name: value}}, the
//              env in the order the backend sets it; a container without
//              GPUs has empty devices and env.
//
// Thread safety: pure functions; PlacedContainersJson reads the Scheduler
// through its thread-safe Edits().
#ifndef DEVICESHARE_SCHEDULER_DECISION_JSON_H_
#define DEVICESHARE_SCHEDULER_DECISION_JSON_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "deviceshare/model/pod_allocation.h"
#include "deviceshare/scheduler/scheduler.h"
#include "nlohmann/json.hpp"

namespace deviceshare {

nlohmann::ordered_json DeviceGrantJson(const DeviceGrant& grant);

nlohmann::ordered_json ContainerDecisionJson(
    absl::string_view name, absl::Span<const DeviceGrant> devices,
    absl::Span<const std::pair<std::string, std::string>> env);

// The env the node agent injects into container `c` of a placed pod
// `request`: what Scheduler::Edits returns for EditOptions{the pod's uid,
// the container's name and task priority} (for a container without GPUs,
// GpulessContainerEdits). Errors are Edits' (a mode not enabled).
absl::StatusOr<std::vector<std::pair<std::string, std::string>>>
PlacedContainerEnv(const Scheduler& scheduler, const PodRequest& request,
                   const PodAllocation& allocation, size_t c);

// Every container of a placed pod (init containers too, in allocation
// order), each with its PlacedContainerEnv: what simulate lists under a
// placement's "containers".
absl::StatusOr<nlohmann::ordered_json> PlacedContainersJson(
    const Scheduler& scheduler, const PodRequest& request,
    const PodAllocation& allocation);

}  // namespace deviceshare

#endif  // DEVICESHARE_SCHEDULER_DECISION_JSON_H_
