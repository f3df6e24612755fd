#include "deviceshare/simulate/simulate.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/config/config_parser.h"
#include "deviceshare/input/cluster_loader.h"
#include "deviceshare/input/input_file.h"
#include "deviceshare/input/pod_loader.h"
#include "deviceshare/simulate/dra_workload.h"
#include "deviceshare/simulate/synthetic.h"
#include "deviceshare/simulate/trace_loader.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::simulate {

using input::InFile;
using input::LoadClusterYaml;
using input::LoadedCluster;
using input::LoadedPods;
using input::LoadPodObjectsYaml;
using input::ReadInputFile;

namespace {

absl::Status BadOptions(absl::string_view message) {
  return absl::InvalidArgumentError(message);
}

absl::Status RequireRange(absl::string_view flag, int64_t value, int64_t min,
                          int64_t max) {
  if (value >= min && value <= max) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: %d is outside [%d, %d]", flag, value, min, max));
}

// The share of the GPUs' SMs a pod asks for, in percent of one GPU, as the
// ledger charges it: max(largest init container, sum of app containers).
int64_t CoresAsked(const PodRequest& pod) {
  int64_t init = 0, app = 0;
  for (const ContainerRequest& c : pod.containers) {
    const int64_t cores = int64_t{c.gpu_count} * c.cores;
    if (c.is_init) {
      init = std::max(init, cores);
    } else {
      app += cores;
    }
  }
  return std::max(init, app);
}

// The pods file's PodDisruptionBudgets over the workload's pods, pending
// and running (--preemption).
absl::Status GroupBudgets(const std::string& file, const LoadedPods& pods,
                          Workload& workload) {
  std::vector<BudgetPod> budget_pods;
  auto add = [&](const PodRequest& pod) {
    auto labels = pods.pod_labels.find(pod.uid);
    budget_pods.push_back(
        {pod.uid, pod.namespace_name,
         labels == pods.pod_labels.end() ? nullptr : &labels->second});
  };
  for (const PodRequest& pod : workload.pods) add(pod);
  for (const input::RecordedPod& pod : workload.running) add(pod.request);
  absl::StatusOr<BudgetGroups> groups =
      GroupPodsByBudget(pods.disruption_budgets, budget_pods);
  if (!groups.ok()) return InFile(file, groups.status());
  workload.budgets = *std::move(groups);
  workload.notes.push_back(absl::StrFormat(
      "disruption budgets: %d PodDisruptionBudget objects select %d pods; "
      "preemption keeps within them where it can",
      pods.disruption_budgets.size(), workload.budgets.group_of.size()));
  return absl::OkStatus();
}

absl::Status LoadClusterInput(const SimulateOptions& options,
                              const Config& config, Workload& workload) {
  DS_ASSIGN_OR_RETURN(std::string cluster_text,
                      ReadInputFile("--cluster", options.cluster_path));
  DS_ASSIGN_OR_RETURN(
      LoadedCluster cluster,
      LoadClusterYaml(cluster_text, options.cluster_path, config.device));
  DS_ASSIGN_OR_RETURN(std::string pods_text,
                      ReadInputFile("--pods", options.pods_path));
  // --limit-pods N without --seed keeps the first N pending pods of the
  // file, so the loader need not read the others (200,000 of them took
  // 3 GB); every other object still counts. With --seed the N are drawn
  // from all of them: LoadWorkload cuts after the shuffle.
  const size_t pending_limit = options.limit_pods && !options.seed
                                   ? static_cast<size_t>(*options.limit_pods)
                                   : SIZE_MAX;
  DS_ASSIGN_OR_RETURN(
      LoadedPods pods,
      LoadPodObjectsYaml(pods_text, options.pods_path, config.device,
                         /*resolve_priorities=*/options.preemption,
                         pending_limit));
  std::string().swap(pods_text);  // no longer needed: free it
  if (pods.pending_past_limit > 0) {
    workload.notes.push_back(absl::StrFormat(
        "--limit-pods: the first %d of %d pending pods; the other %d were "
        "counted, not read",
        pods.pods.size(), pods.pods.size() + pods.pending_past_limit,
        pods.pending_past_limit));
  }
  workload.pods = std::move(pods.pods);
  workload.running = std::move(pods.running);
  if (!workload.running.empty()) {
    workload.notes.push_back(absl::StrCat(
        workload.running.size(),
        " pods carry an allocation record: they are charged where it puts "
        "them, not scheduled"));
  }
  if (pods.finished > 0) {
    workload.notes.push_back(absl::StrCat(
        pods.finished,
        " pods have finished (status.phase Succeeded or Failed): they hold "
        "no GPU and are neither charged nor scheduled"));
  }
  if (pods.bound_without_record > 0) {
    workload.notes.push_back(absl::StrCat(
        pods.bound_without_record,
        " pods are bound to a node (spec.nodeName) without an allocation "
        "record: they hold no GPU and are not scheduled again"));
  }
  if (options.preemption) {
    workload.notes.push_back(absl::StrFormat(
        "priorities: %d PriorityClass objects read, %d pods at a priority "
        "other than 0 (spec.priority, else spec.priorityClassName, else the "
        "global default class)",
        pods.priority_classes, pods.priorities.size()));
  }
  workload.priorities = std::move(pods.priorities);
  if (!pods.disruption_budgets.empty()) {
    DS_RETURN_IF_ERROR(GroupBudgets(options.pods_path, pods, workload));
  }
  workload.claims = std::move(pods.claims);
  workload.quotas = std::move(pods.quotas);
  workload.nodes = std::move(cluster.nodes);
  workload.slices = std::move(cluster.slices);
  workload.classes = std::move(cluster.classes);
  for (std::string& note : cluster.notes) {
    workload.notes.push_back(std::move(note));
  }
  DS_RETURN_IF_ERROR(PublishDraNodes(cluster.dra_nodes, config, workload));
  if (workload.classes.empty() && !workload.slices.empty()) {
    workload.classes = DefaultDeviceClasses();
    workload.notes.push_back(
        "DeviceClasses: the cluster file names none, so those of "
        "deploy/dra/deviceclasses.yaml (gpu.deviceshare.io, "
        "hami-core., mps., mig.gpu.deviceshare.io) are used");
  }
  CreateTemplateClaims(pods.templates, workload);
  return absl::OkStatus();
}

absl::Status LoadTraceInput(const SimulateOptions& options,
                            const Config& config, Workload& workload) {
  DS_ASSIGN_OR_RETURN(std::string nodes_text,
                      ReadInputFile("--trace-nodes", options.trace_nodes_path));
  DS_ASSIGN_OR_RETURN(
      TraceNodes nodes,
      LoadTraceNodes(nodes_text, options.trace_nodes_path, config.device));
  DS_ASSIGN_OR_RETURN(std::string pods_text,
                      ReadInputFile("--trace-pods", options.trace_pods_path));
  DS_ASSIGN_OR_RETURN(std::vector<TracePod> pods,
                      LoadTracePods(pods_text, options.trace_pods_path));
  workload.nodes = std::move(nodes.nodes);
  workload.pods.reserve(pods.size());
  for (const TracePod& pod : pods) {
    workload.pods.push_back(TracePodRequest(pod));
  }
  for (std::string& note : nodes.notes) {
    workload.notes.push_back(std::move(note));
  }
  for (std::string& note : TraceMappingNotes()) {
    workload.notes.push_back(std::move(note));
  }
  if (!options.seed) {
    workload.notes.push_back(
        "trace pods are replayed in creation_time order (stable), with no "
        "departures");
  }
  return absl::OkStatus();
}

absl::Status LoadSyntheticInput(const SimulateOptions& options,
                                const Config& config, Workload& workload) {
  DS_ASSIGN_OR_RETURN(workload.nodes,
                      SyntheticNodes(*options.synthetic_nodes,
                                     *options.gpus_per_node, config.device));
  const uint64_t seed = options.seed.value_or(kDefaultSyntheticSeed);
  workload.pods =
      SyntheticPods(*options.synthetic_pods, *options.gpus_per_node, seed);
  workload.notes.push_back(SyntheticMixDescription());
  workload.notes.push_back(absl::StrCat("synthetic seed ", seed));
  return absl::OkStatus();
}

}  // namespace

void ShufflePods(std::vector<PodRequest>& pods, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (size_t i = pods.size(); i > 1; --i) {
    const size_t j = static_cast<size_t>(rng() % i);
    std::swap(pods[i - 1], pods[j]);
  }
}

absl::StatusOr<InputKind> CheckOptions(const SimulateOptions& options) {
  const bool cluster =
      !options.cluster_path.empty() || !options.pods_path.empty();
  const bool trace =
      !options.trace_nodes_path.empty() || !options.trace_pods_path.empty();
  const bool synthetic = options.synthetic_nodes || options.gpus_per_node ||
                         options.synthetic_pods;
  const int kinds = int{cluster} + int{trace} + int{synthetic};
  if (kinds == 0) {
    return BadOptions(
        "no input: give --cluster and --pods, --trace-nodes and "
        "--trace-pods, or --synthetic-nodes, --gpus-per-node and "
        "--synthetic-pods");
  }
  if (kinds > 1) {
    return BadOptions(
        "--cluster/--pods, --trace-nodes/--trace-pods and --synthetic-* "
        "name different inputs; give one");
  }
  if (options.limit_pods) {
    DS_RETURN_IF_ERROR(
        RequireRange("--limit-pods", *options.limit_pods, 0, INT64_MAX));
  }
  if (cluster) {
    if (options.cluster_path.empty()) {
      return BadOptions("--pods needs --cluster");
    }
    if (options.pods_path.empty()) return BadOptions("--cluster needs --pods");
    return InputKind::kCluster;
  }
  if (trace) {
    if (options.trace_nodes_path.empty()) {
      return BadOptions("--trace-pods needs --trace-nodes");
    }
    if (options.trace_pods_path.empty()) {
      return BadOptions("--trace-nodes needs --trace-pods");
    }
    return InputKind::kTrace;
  }
  if (!options.synthetic_nodes || !options.gpus_per_node ||
      !options.synthetic_pods) {
    return BadOptions(
        "a synthetic run needs all of --synthetic-nodes, --gpus-per-node and "
        "--synthetic-pods");
  }
  DS_RETURN_IF_ERROR(
      RequireRange("--synthetic-nodes", *options.synthetic_nodes, 1, 10000000));
  DS_RETURN_IF_ERROR(
      RequireRange("--gpus-per-node", *options.gpus_per_node, 1, 1024));
  DS_RETURN_IF_ERROR(
      RequireRange("--synthetic-pods", *options.synthetic_pods, 0, 100000000));
  return InputKind::kSynthetic;
}

absl::StatusOr<Config> LoadConfig(const SimulateOptions& options) {
  Config config;
  if (!options.config_path.empty()) {
    DS_ASSIGN_OR_RETURN(std::string text,
                        ReadInputFile("--config", options.config_path));
    auto parsed = ParseConfigYaml(text, BuiltinConfigExtensions());
    if (!parsed.ok()) return InFile(options.config_path, parsed.status());
    config = *std::move(parsed);
  }
  if (options.node_policy) config.scheduler.node_policy = *options.node_policy;
  if (options.gpu_policy) config.scheduler.gpu_policy = *options.gpu_policy;
  return config;
}

absl::StatusOr<Workload> LoadWorkload(const SimulateOptions& options,
                                      const Config& config) {
  DS_ASSIGN_OR_RETURN(InputKind kind, CheckOptions(options));
  Workload workload;
  switch (kind) {
    case InputKind::kCluster:
      DS_RETURN_IF_ERROR(LoadClusterInput(options, config, workload));
      break;
    case InputKind::kTrace:
      DS_RETURN_IF_ERROR(LoadTraceInput(options, config, workload));
      break;
    case InputKind::kSynthetic:
      DS_RETURN_IF_ERROR(LoadSyntheticInput(options, config, workload));
      break;
  }
  if (options.dra) DS_RETURN_IF_ERROR(ConvertToDra(config, workload));
  if (options.seed && kind != InputKind::kSynthetic) {
    ShufflePods(workload.pods, *options.seed);
    workload.notes.push_back(
        absl::StrCat("pods shuffled with seed ", *options.seed, " (--seed)"));
  }
  if (options.limit_pods &&
      workload.pods.size() > static_cast<size_t>(*options.limit_pods)) {
    workload.notes.push_back(
        absl::StrFormat("--limit-pods: the first %d of %d pods",
                        *options.limit_pods, workload.pods.size()));
    workload.pods.resize(static_cast<size_t>(*options.limit_pods));
  }
  return workload;
}

absl::StatusOr<SimulationReport> Simulate(
    const SimulateOptions& options,
    std::function<void(size_t, size_t)> progress) {
  SimulationReport report;
  DS_ASSIGN_OR_RETURN(report.input, CheckOptions(options));
  DS_ASSIGN_OR_RETURN(report.config, LoadConfig(options));
  for (const std::string& notice : report.config.notices) {
    report.notes.push_back(absl::StrCat(options.config_path, ": ", notice));
  }
  DS_ASSIGN_OR_RETURN(Workload workload, LoadWorkload(options, report.config));
  RunOptions run_options;
  run_options.max_reason_examples = options.max_reason_examples;
  run_options.reason_counts = options.reason_counts;
  run_options.progress = std::move(progress);
  run_options.preemption = options.preemption;
  DS_ASSIGN_OR_RETURN(report.result,
                      RunSimulation(report.config, workload, run_options));
  report.summary = Summarize(report.result);

  report.notes.push_back(absl::StrFormat(
      "policies: node %s, gpu %s; split count %d (nvidia.deviceSplitCount) "
      "unless a node registers its own",
      report.config.scheduler.node_policy, report.config.scheduler.gpu_policy,
      report.config.device.device_split_count));
  for (std::string& note : workload.notes) {
    report.notes.push_back(std::move(note));
  }
  int64_t asked = 0;
  for (const PodRequest& pod : workload.pods) asked += CoresAsked(pod);
  const int64_t capacity = report.summary.gpu_core_capacity;
  report.notes.push_back(absl::StrFormat(
      "GPU share asked by all pods (cores, per pod max(init, sum of app "
      "containers)): %.2f GPUs = %.2f%% of the cluster's %.2f; allocated: "
      "gpu_cores_allocated_pct",
      asked / 100.0,
      capacity > 0 ? 100.0 * static_cast<double>(asked) / capacity : 0.0,
      capacity / 100.0));
  bool digested = false;
  for (const PodUnschedulable& pod : report.result.unschedulable) {
    digested |=
        pod.reasons.nodes > static_cast<int64_t>(pod.reasons.examples.size());
  }
  if (digested) {
    report.notes.push_back(absl::StrFormat(
        "unschedulable pods list at most %d example node reasons (every "
        "reason code once, then by node name); reason_counts counts every "
        "node",
        options.max_reason_examples));
  }
  return report;
}

}  // namespace deviceshare::simulate
