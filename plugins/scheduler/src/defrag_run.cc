#include "deviceshare/simulate/defrag_run.h"

#include <memory>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/k8s/pod_annotations.h"
#include "deviceshare/policy/policy_registry.h"
#include "deviceshare/scheduler/cluster_state.h"
#include "deviceshare/scheduler/decision_path.h"
#include "deviceshare/simulate/dra_workload.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::simulate {
namespace {

absl::Status AddNodesAndObjects(const Workload& workload, ClusterState& state) {
  for (const NodeInventory& node : workload.nodes) {
    auto displaced = state.UpsertNode(node);
    if (!displaced.ok()) {
      return absl::Status(displaced.status().code(),
                          absl::StrFormat("node %s: %s", node.name,
                                          displaced.status().message()));
    }
  }
  for (const dra::DeviceClass& cls : workload.classes) {
    state.UpsertDeviceClass(cls);
  }
  for (const dra::ResourceSlice& slice : workload.slices) {
    DS_RETURN_IF_ERROR(state.UpsertResourceSlice(slice));
  }
  for (const dra::ResourceClaim& claim : workload.claims) {
    DS_RETURN_IF_ERROR(state.UpsertResourceClaim(claim));
  }
  for (const GpuQuota& quota : workload.quotas) state.UpsertQuota(quota);
  return absl::OkStatus();
}

// Charges each bound pod from its record; returns the uids charged and a
// note per pod that could not be.
absl::flat_hash_set<std::string> ChargeBoundPods(
    const Workload& workload, int32_t memory_factor, ClusterState& state,
    std::vector<std::string>& notes) {
  absl::flat_hash_set<std::string> charged;
  for (const input::RecordedPod& pod : workload.running) {
    std::vector<absl::Status> unread;
    absl::StatusOr<std::optional<PodAllocation>> allocation =
        AllocationFromAnnotations(pod.request, pod.annotations, pod.node,
                                  memory_factor, &unread);
    for (const absl::Status& why : unread) {
      notes.push_back(absl::StrCat("pod ", pod.request.Key(), " on ", pod.node,
                                   ": MIG record left out, its MIG GPUs "
                                   "held whole: ",
                                   why.message()));
    }
    absl::Status added =
        !allocation.ok() ? allocation.status()
        : !allocation->has_value()
            ? absl::InvalidArgumentError("no allocation record")
            : state.AddPod(pod.request, **allocation);
    if (added.ok()) {
      charged.insert(pod.request.uid);
    } else {
      notes.push_back(absl::StrCat("pod ", pod.request.Key(), " on ", pod.node,
                                   " is left out: ", added.message()));
    }
  }
  return charged;
}

}  // namespace

absl::StatusOr<DefragRun> RunDefragPlan(const DefragInputs& inputs,
                                        DefragPods pods,
                                        int32_t free_whole_gpus,
                                        const defrag::DefragBudget& budget) {
  BackendRegistry registry;
  DS_RETURN_IF_ERROR(RegisterBuiltinBackends(registry));
  DS_ASSIGN_OR_RETURN(BackendSet backends,
                      BackendSet::Create(registry, inputs.config));
  DS_ASSIGN_OR_RETURN(PolicySet policies,
                      PolicySet::Create(BuiltinPolicies(), inputs.config));
  const DecisionPath path(&inputs.config, &backends, &policies);
  uint64_t share_ids = 0;
  ClusterState state(&backends,
                     [&share_ids] { return SimulatedShareId(++share_ids); });
  DS_RETURN_IF_ERROR(AddNodesAndObjects(inputs.workload, state));

  DefragRun run;
  const absl::flat_hash_set<std::string> charged = ChargeBoundPods(
      inputs.workload, inputs.config.device.memory_factor, state, run.notes);
  defrag::DefragQuery query;
  for (defrag::BoundPod& pod : pods.pods) {
    if (charged.contains(pod.uid)) query.pods.push_back(std::move(pod));
  }
  query.disruptions_left = std::move(pods.disruptions_left);
  query.targets = free_whole_gpus > 0 ? defrag::WholeGpuTargets(free_whole_gpus)
                                      : inputs.workload.pods;
  query.budget = budget;
  run.targets = query.targets.size();
  const defrag::DefragPlanner planner(&path, &backends);
  DS_ASSIGN_OR_RETURN(run.plan, planner.Plan(state, query));
  return run;
}

}  // namespace deviceshare::simulate
