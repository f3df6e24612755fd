#include "deviceshare/simulate/simulation.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/scheduler/cluster_usage.h"
#include "deviceshare/scheduler/decision_json.h"
#include "deviceshare/scheduler/scheduler.h"
#include "deviceshare/simulate/dra_workload.h"
#include "deviceshare/simulate/preemptor.h"
#include "deviceshare/simulate/reason_digest.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::simulate {
namespace {

absl::StatusOr<PodPlacement> DescribePlacement(const Scheduler& scheduler,
                                               const PodRequest& request,
                                               const Decision& outcome) {
  const PodAllocation& allocation = *outcome.allocation;
  PodPlacement placement;
  placement.pod = request.Key();
  placement.node = allocation.node_name;
  placement.score = outcome.score;
  placement.mode_choice = outcome.mode_choice;
  placement.claims = outcome.claims;
  for (size_t c = 0; c < allocation.containers.size(); ++c) {
    const ContainerAllocation& container = allocation.containers[c];
    ContainerPlacement out;
    out.name = container.name;
    out.is_init = container.is_init;
    out.devices = container.devices;
    DS_ASSIGN_OR_RETURN(out.env,
                        PlacedContainerEnv(scheduler, request, allocation, c));
    placement.containers.push_back(std::move(out));
  }
  return placement;
}

absl::Status AddDraObjects(const Workload& workload, Scheduler& scheduler) {
  for (const dra::DeviceClass& cls : workload.classes) {
    scheduler.UpsertDeviceClass(cls);
  }
  for (const dra::ResourceSlice& slice : workload.slices) {
    absl::Status added = scheduler.UpsertResourceSlice(slice);
    if (!added.ok()) {
      return absl::Status(
          added.code(),
          absl::StrFormat("ResourceSlice %s: %s", slice.name, added.message()));
    }
  }
  for (const dra::ResourceClaim& claim : workload.claims) {
    absl::Status added = scheduler.UpsertResourceClaim(claim);
    if (!added.ok()) {
      return absl::Status(added.code(),
                          absl::StrFormat("ResourceClaim %s/%s: %s", claim.ns,
                                          claim.name, added.message()));
    }
  }
  return absl::OkStatus();
}

// Charges each running pod from its record, as serve does when it starts;
// one it cannot charge is listed and left out, as serve leaves it.
std::vector<PodUnaccounted> ChargeRunningPods(const Workload& workload,
                                              Scheduler& scheduler) {
  std::vector<PodUnaccounted> unaccounted;
  absl::flat_hash_set<absl::string_view> nodes;
  for (const NodeInventory& node : workload.nodes) nodes.insert(node.name);
  for (const input::RecordedPod& pod : workload.running) {
    // serve keeps such a pod until its node shows up; a cluster file's
    // nodes never change, so it would be charged nowhere, silently.
    if (!nodes.contains(pod.node)) {
      unaccounted.push_back(
          {pod.request.Key(), pod.node,
           absl::StrCat("node ", pod.node,
                        " is not in the cluster: its pods are not charged")});
      continue;
    }
    absl::StatusOr<bool> charged =
        scheduler.AddBoundPod(pod.request, pod.annotations, pod.node);
    if (!charged.ok()) {
      unaccounted.push_back({pod.request.Key(), pod.node,
                             std::string(charged.status().message())});
    }
  }
  return unaccounted;
}

// The preemptor of a run with preemption, told of the running pods that
// were charged; null without.
absl::StatusOr<std::unique_ptr<Preemptor>> MakePreemptor(
    const Workload& workload, const RunOptions& options,
    const Scheduler& scheduler) {
  if (!options.preemption) return nullptr;
  DS_ASSIGN_OR_RETURN(
      std::unique_ptr<Preemptor> preemptor,
      Preemptor::Create(scheduler.config(), &workload.priorities,
                        &workload.budgets));
  for (const input::RecordedPod& pod : workload.running) {
    if (std::optional<std::string> node = scheduler.PodNode(pod.request.uid)) {
      preemptor->Placed(pod.request, *node, std::nullopt);
    }
  }
  return preemptor;
}

// Takes the evicted pods out of the placements and records them.
void RecordEvictions(const PreemptionOutcome& preempted,
                     const PodRequest& request, RunResult& result) {
  for (const EvictedPod& victim : preempted.evicted) {
    std::erase_if(result.placements, [&victim](const PodPlacement& placed) {
      return placed.pod == victim.key;
    });
    if (victim.workload_index) result.placed[*victim.workload_index] = false;
    result.evictions.push_back({victim.key, victim.node, request.Key()});
  }
}

}  // namespace

absl::StatusOr<RunResult> RunSimulation(const Config& config,
                                        const Workload& workload,
                                        const RunOptions& options) {
  BackendRegistry registry;
  DS_RETURN_IF_ERROR(RegisterBuiltinBackends(registry));
  auto share_ids = std::make_shared<std::atomic<uint64_t>>(0);
  DS_ASSIGN_OR_RETURN(std::unique_ptr<Scheduler> scheduler,
                      Scheduler::Create(config, registry, BuiltinPolicies(),
                                        nullptr, [share_ids] {
                                          return SimulatedShareId(++*share_ids);
                                        }));
  for (const NodeInventory& node : workload.nodes) {
    auto displaced = scheduler->UpsertNode(node);
    if (!displaced.ok()) {
      return absl::Status(displaced.status().code(),
                          absl::StrFormat("node %s: %s", node.name,
                                          displaced.status().message()));
    }
  }
  DS_RETURN_IF_ERROR(AddDraObjects(workload, *scheduler));
  for (const GpuQuota& quota : workload.quotas) scheduler->UpsertQuota(quota);
  std::vector<PodUnaccounted> unaccounted =
      ChargeRunningPods(workload, *scheduler);
  ScheduleOptions schedule_options;
  schedule_options.max_explained_nodes = options.max_reason_examples;
  schedule_options.count_reasons = options.reason_counts;
  DS_ASSIGN_OR_RETURN(std::unique_ptr<Preemptor> preemptor,
                      MakePreemptor(workload, options, *scheduler));
  RunResult result;
  result.preemption = options.preemption;
  result.unaccounted = std::move(unaccounted);
  const size_t total = workload.pods.size();
  result.placed.reserve(total);
  result.decision_ns.reserve(total);
  for (size_t p = 0; p < total; ++p) {
    const PodRequest& request = workload.pods[p];
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<Decision> outcome =
        scheduler->Schedule(request, schedule_options);
    absl::StatusOr<std::optional<PreemptionOutcome>> preempted = std::nullopt;
    if (preemptor != nullptr && outcome.ok() && !outcome->allocation) {
      preempted = preemptor->Preempt(*scheduler, request, *outcome);
    }
    const auto stop = std::chrono::steady_clock::now();
    result.decision_ns.push_back(
        std::chrono::duration_cast<std::chrono::nanoseconds>(stop - start)
            .count());
    if (absl::IsInvalidArgument(outcome.status())) {
      // The pod, not the run: HAMi's filter leaves such a pod pending.
      result.placed.push_back(false);
      result.unschedulable.push_back(
          {request.Key(), RefusedDigest(outcome.status().message())});
      if (options.progress) options.progress(p + 1, total);
      continue;
    }
    if (!outcome.ok()) {
      return absl::Status(outcome.status().code(),
                          absl::StrFormat("pod %s: %s", request.Key(),
                                          outcome.status().message()));
    }
    if (!preempted.ok()) {
      return absl::Status(preempted.status().code(),
                          absl::StrFormat("pod %s: %s", request.Key(),
                                          preempted.status().message()));
    }
    if (*preempted) {
      RecordEvictions(**preempted, request, result);
      *outcome = std::move((*preempted)->decision);
    }
    result.placed.push_back(outcome->allocation.has_value());
    if (outcome->allocation) {
      DS_ASSIGN_OR_RETURN(PodPlacement placement,
                          DescribePlacement(*scheduler, request, *outcome));
      if (preemptor != nullptr) preemptor->Placed(request, placement.node, p);
      result.placements.push_back(std::move(placement));
    } else {
      result.unschedulable.push_back({request.Key(), DigestReasons(*outcome)});
    }
    if (options.progress) options.progress(p + 1, total);
  }
  result.usage = ReadClusterUsage(*scheduler);
  return result;
}

}  // namespace deviceshare::simulate
