// File: simulate/simulate.h
//
// `deviceshare-scheduler simulate` as a library call: options in, a
// SimulationReport out (JSON and table renderings: json_report.h,
// table_report.h). Exactly one input kind per run:
//   --cluster FILE --pods FILE            (cluster_loader.h, pod_loader.h)
//   --trace-nodes CSV --trace-pods CSV    (trace_loader.h)
//   --synthetic-nodes N --gpus-per-node G --synthetic-pods P (synthetic.h)
// The config (--config, else defaults) is loaded first, then the policy
// flags override it. --seed shuffles the pods of a cluster or trace run
// (Fisher-Yates, std::mt19937_64) and seeds the synthetic generator
// (default 1); --limit-pods keeps the first N pods after ordering.
//
// Errors: InvalidArgument for bad options; the loaders' errors (naming
// file, document or line, and field) for bad inputs.
#ifndef DEVICESHARE_SIMULATE_SIMULATE_H_
#define DEVICESHARE_SIMULATE_SIMULATE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "deviceshare/config/scheduler_config.h"
#include "deviceshare/simulate/simulation.h"
#include "deviceshare/simulate/summary.h"
#include "deviceshare/simulate/workload.h"

namespace deviceshare::simulate {

enum class InputKind { kCluster, kTrace, kSynthetic };

struct SimulateOptions {
  std::string cluster_path;
  std::string pods_path;
  std::string trace_nodes_path;
  std::string trace_pods_path;
  std::optional<int64_t> synthetic_nodes;
  std::optional<int64_t> gpus_per_node;
  std::optional<int64_t> synthetic_pods;
  std::string config_path;
  // Policy names (registered ones; main checks): override the config's.
  std::optional<std::string> node_policy;
  std::optional<std::string> gpu_policy;
  std::optional<uint64_t> seed;
  std::optional<int64_t> limit_pods;
  size_t max_reason_examples = 10;
  // Count every node's reason code for unschedulable pods.
  bool reason_counts = true;
  // Run the workload through DRA (ConvertToDra in simulate/dra_workload.h).
  bool dra = false;
  // A pod that fits nowhere preempts pods of lower priority
  // (simulate/preemptor.h); priorities come from the pods file.
  bool preemption = false;
};

inline constexpr uint64_t kDefaultSyntheticSeed = 1;

struct SimulationReport {
  InputKind input = InputKind::kCluster;
  Config config;  // as used: file + flags
  RunResult result;
  Summary summary;
  std::vector<std::string> notes;
};

// Which input the options name; InvalidArgument naming the flags when they
// name none, more than one, or an incomplete one.
absl::StatusOr<InputKind> CheckOptions(const SimulateOptions& options);

// The config file (or defaults) with the policy flags applied.
absl::StatusOr<Config> LoadConfig(const SimulateOptions& options);

// The nodes and pods, ordered, shuffled and limited as the options say.
absl::StatusOr<Workload> LoadWorkload(const SimulateOptions& options,
                                      const Config& config);

// Everything: options -> report. `progress` as in RunOptions.
absl::StatusOr<SimulationReport> Simulate(
    const SimulateOptions& options,
    std::function<void(size_t, size_t)> progress = {});

// Shuffles `pods` with std::mt19937_64(seed), the same on every platform.
void ShufflePods(std::vector<PodRequest>& pods, uint64_t seed);

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_SIMULATE_H_
