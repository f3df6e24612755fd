// File: simulate/simulation.h
//
// RunSimulation: replays a Workload through the Scheduler facade, exactly
// as the extender will drive it: one Scheduler from the config, every node
// registered with UpsertNode, the DRA objects (DeviceClasses,
// ResourceSlices, ResourceClaims) upserted, then Schedule() once per pod in
// workload order, with no departures. Share ids of DRA devices count up
// (SimulatedShareId), so runs are reproducible. Only the Schedule call is timed
// (std::chrono::steady_clock). A running pod whose record cannot be charged
// is listed as unaccounted, not an error of the run. For each placed container
// with GPUs it asks Scheduler::Edits what the node agent would inject; for each
// pod that fits nowhere it keeps a ReasonDigest. At the end it reads the GPU
// usage of the whole cluster (Scheduler::Inspect).
//
// With RunOptions::preemption, a pod that fits nowhere may preempt pods of
// lower priority (Workload::priorities) as simulate/preemptor.h says: the
// victims are deleted (not re-queued: in Kubernetes their controllers make
// new pods, which simulate does not model), they leave `placements` and
// `placed`, and `evictions` lists each with the pod it made room for. The
// preemption's time counts in that pod's decision time. Without it the
// loop is as before: no priority is looked at.
#ifndef DEVICESHARE_SIMULATE_SIMULATION_H_
#define DEVICESHARE_SIMULATE_SIMULATION_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "deviceshare/config/scheduler_config.h"
#include "deviceshare/model/pod_allocation.h"
#include "deviceshare/scheduler/cluster_usage.h"
#include "deviceshare/scheduler/decision.h"
#include "deviceshare/simulate/reason_digest.h"
#include "deviceshare/simulate/workload.h"

namespace deviceshare::simulate {

struct ContainerPlacement {
  std::string name;
  bool is_init = false;
  std::vector<DeviceGrant> devices;  // empty: the container uses no GPU
  // What the node agent injects (Scheduler::Edits); empty without GPUs.
  std::vector<std::pair<std::string, std::string>> env;
};

struct PodPlacement {
  std::string pod;  // "namespace/name"
  std::string node;
  int score = 0;
  std::vector<ContainerPlacement> containers;
  // Why this sharing mode, when the pod named none and several backends
  // were asked (Decision::mode_choice); empty otherwise.
  std::string mode_choice;
  // The pod's DRA claims with the devices allocated to them.
  std::vector<ClaimDecision> claims;
};

struct PodUnschedulable {
  std::string pod;
  ReasonDigest reasons;
};

// A pod with an allocation record that could not be charged (a record that
// names no GPU of its node, an entry that cannot be read): as HAMi's
// scheduler and serve do, it is left out and the run goes on.
struct PodUnaccounted {
  std::string pod;  // "namespace/name"
  std::string node;
  std::string reason;
};

struct RunOptions {
  // Examples kept per unschedulable pod (see ReasonDigest).
  size_t max_reason_examples = 10;
  // Count every node's reason code for unschedulable pods.
  bool reason_counts = true;
  // Called after each decision with (pods done, pods total), outside the
  // timed section.
  std::function<void(size_t, size_t)> progress;
  // A pod that fits nowhere preempts pods of lower priority (--preemption).
  bool preemption = false;
};

// A pod deleted to make room for another.
struct PodEviction {
  std::string pod;  // "namespace/name"
  std::string node;
  std::string for_pod;  // the pod placed in its stead
};

struct RunResult {
  std::vector<PodPlacement> placements;         // in decision order
  std::vector<PodUnschedulable> unschedulable;  // in decision order
  std::vector<PodUnaccounted> unaccounted;      // running pods, file order
  // Per workload pod: placed at the end of the run (an evicted pod is
  // not).
  std::vector<bool> placed;
  std::vector<int64_t> decision_ns;  // per workload pod
  ClusterUsage usage;                // the cluster's GPU totals after the run
  // RunOptions::preemption, and what it evicted, in eviction order.
  bool preemption = false;
  std::vector<PodEviction> evictions;
};

absl::StatusOr<RunResult> RunSimulation(const Config& config,
                                        const Workload& workload,
                                        const RunOptions& options);

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_SIMULATION_H_
