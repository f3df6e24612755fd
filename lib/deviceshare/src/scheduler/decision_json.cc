#include "deviceshare/scheduler/decision_json.h"

#include "deviceshare/backend/container_edits.h"
#include "deviceshare/model/mig_slot.h"
#include "deviceshare/model/sharing_mode.h"
#include "deviceshare/status_macros.h"

namespace deviceshare {

using OrderedJson = nlohmann::ordered_json;

OrderedJson DeviceGrantJson(const DeviceGrant& grant) {
  OrderedJson device;
  device["uuid"] = grant.uuid;
  device["mode"] = std::string(SharingModeName(grant.mode));
  device["memory_mib"] = grant.memory_mib;
  device["cores"] = grant.cores;
  // The core names no backend: a grant that names a partition is a MIG
  // instance, whichever backend made it.
  if (grant.has_partition()) {
    device["mig_profile"] = grant.mig.profile;
    device["mig_start"] = grant.mig.start;
    device["mig_slices"] = grant.mig.size;
    device["mig_action"] = MigActionName(grant.mig_action);
    if (!grant.mig.group.empty()) {
      device["mig_group"] = grant.mig.group;
      device["mig_position"] = grant.mig.position;
    }
  }
  return device;
}

OrderedJson ContainerDecisionJson(
    absl::string_view name, absl::Span<const DeviceGrant> devices,
    absl::Span<const std::pair<std::string, std::string>> env) {
  OrderedJson grants = OrderedJson::array();
  for (const DeviceGrant& grant : devices) {
    grants.push_back(DeviceGrantJson(grant));
  }
  OrderedJson variables = OrderedJson::object();
  for (const auto& [variable, value] : env) variables[variable] = value;
  OrderedJson out;
  out["name"] = std::string(name);
  out["devices"] = std::move(grants);
  out["env"] = std::move(variables);
  return out;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>>
PlacedContainerEnv(const Scheduler& scheduler, const PodRequest& request,
                   const PodAllocation& allocation, size_t c) {
  const ContainerAllocation& container = allocation.containers[c];
  EditOptions options;
  options.pod_uid = request.uid;
  options.container_name = container.name;
  if (c < request.containers.size()) {
    options.task_priority = request.containers[c].task_priority;
  }
  DS_ASSIGN_OR_RETURN(ContainerEdits edits,
                      scheduler.Edits(allocation, c, options));
  return std::move(edits.env);
}

absl::StatusOr<OrderedJson> PlacedContainersJson(
    const Scheduler& scheduler, const PodRequest& request,
    const PodAllocation& allocation) {
  OrderedJson containers = OrderedJson::array();
  for (size_t c = 0; c < allocation.containers.size(); ++c) {
    const ContainerAllocation& container = allocation.containers[c];
    DS_ASSIGN_OR_RETURN(auto env,
                        PlacedContainerEnv(scheduler, request, allocation, c));
    containers.push_back(
        ContainerDecisionJson(container.name, container.devices, env));
  }
  return containers;
}

}  // namespace deviceshare
