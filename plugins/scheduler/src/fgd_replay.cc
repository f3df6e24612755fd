#include "deviceshare/simulate/fgd_replay.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deviceshare/policy/fgd/typical_pods.h"
#include "deviceshare/simulate/simulation.h"
#include "deviceshare/simulate/workload.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::simulate {
namespace {

// Uniform in [0, n) up to a modulo bias below 2^-50 for the sizes here;
// the same on every platform (std distributions are not).
size_t Draw(std::mt19937_64& rng, size_t n) {
  return static_cast<size_t>(rng() % static_cast<uint64_t>(n));
}

template <typename T>
void Shuffle(std::vector<T>& items, std::mt19937_64& rng) {
  for (size_t i = items.size(); i > 1; --i) {
    std::swap(items[i - 1], items[Draw(rng, i)]);
  }
}

// The milli of one GPU of the pod, which FGD's tuning compares with the
// room left (not the pod's whole request).
int64_t PerGpuMilli(const TracePod& pod) {
  return pod.num_gpu >= 1 ? std::min<int64_t>(pod.gpu_milli, 1000) : 0;
}

int64_t TotalMilli(absl::Span<const TracePod> pods) {
  int64_t total = 0;
  for (const TracePod& pod : pods) total += TracePodGpuMilli(pod);
  return total;
}

}  // namespace

std::vector<uint64_t> FgdSeeds() {
  std::vector<uint64_t> seeds(10);
  std::iota(seeds.begin(), seeds.end(), uint64_t{42});
  return seeds;
}

WorkloadShape TracePodShape(const TracePod& pod) {
  WorkloadShape shape;
  shape.cpu_milli = pod.cpu_milli;
  shape.gpu_milli = static_cast<int32_t>(PerGpuMilli(pod));
  shape.gpu_count = static_cast<int32_t>(pod.num_gpu);
  if (pod.num_gpu >= 1) {
    for (const std::string& model : pod.gpu_spec) {
      shape.models.push_back(TraceGpuModelName(model));
    }
  }
  return shape;
}

std::vector<WorkloadShape> TraceTypicalWorkload(
    absl::Span<const TracePod> pods) {
  std::vector<WorkloadShape> shapes;
  shapes.reserve(pods.size());
  for (const TracePod& pod : pods) shapes.push_back(TracePodShape(pod));
  return fgd::TypicalPodsOf(shapes);
}

int64_t ClusterGpuMilli(absl::Span<const NodeInventory> nodes) {
  int64_t milli = 0;
  for (const NodeInventory& node : nodes) {
    milli += 1000 * static_cast<int64_t>(node.gpus.size());
  }
  return milli;
}

std::vector<TracePod> ReplayPodStream(std::vector<TracePod> pods,
                                      int64_t cluster_milli, double inflate,
                                      std::mt19937_64& rng) {
  std::sort(pods.begin(), pods.end(), [](const TracePod& a, const TracePod& b) {
    return a.name < b.name;
  });
  const std::vector<TracePod> trace = pods;
  Shuffle(pods, rng);
  const double target = inflate * static_cast<double>(cluster_milli);
  int64_t total = TotalMilli(pods);
  if (trace.empty()) return pods;
  if (static_cast<double>(total) < target) {
    for (size_t i = 0;; ++i) {
      const TracePod& drawn = trace[Draw(rng, trace.size())];
      if (static_cast<double>(total + PerGpuMilli(drawn)) > target) break;
      TracePod copy = drawn;
      copy.name = absl::StrCat(drawn.name, "-tuned-", i);
      total += TracePodGpuMilli(copy);
      pods.push_back(std::move(copy));
    }
  } else {
    while (static_cast<double>(total) > target && !pods.empty()) {
      const size_t at = Draw(rng, pods.size());
      total -= TracePodGpuMilli(pods[at]);
      pods.erase(pods.begin() + static_cast<ptrdiff_t>(at));
    }
  }
  return pods;
}

std::vector<NodeInventory> ReplayNodeOrder(std::vector<NodeInventory> nodes,
                                           std::mt19937_64& rng) {
  std::sort(nodes.begin(), nodes.end(),
            [](const NodeInventory& a, const NodeInventory& b) {
              return a.name < b.name;
            });
  std::vector<size_t> rank(nodes.size());
  std::iota(rank.begin(), rank.end(), size_t{0});
  Shuffle(rank, rng);
  for (size_t i = 0; i < nodes.size(); ++i) {
    nodes[i].name = absl::StrFormat("%04d-%s", rank[i], nodes[i].name);
  }
  return nodes;
}

std::vector<double> AllocationCurve(absl::Span<const PodAttempt> attempts,
                                    int64_t cluster_milli) {
  if (attempts.empty() || cluster_milli <= 0) return {};
  const double capacity = static_cast<double>(cluster_milli);
  std::vector<double> sum;
  std::vector<int64_t> count;
  int64_t arrived = 0;
  int64_t allocated = 0;
  for (const PodAttempt& attempt : attempts) {
    arrived += attempt.gpu_milli;
    if (attempt.placed) allocated += attempt.gpu_milli;
    const auto bucket =
        static_cast<size_t>(std::lround(arrived / capacity * 100.0));
    if (bucket >= sum.size()) {
      sum.resize(bucket + 1, 0.0);
      count.resize(bucket + 1, 0);
    }
    sum[bucket] += allocated / capacity * 100.0;
    ++count[bucket];
  }
  std::vector<double> curve(sum.size(),
                            std::numeric_limits<double>::quiet_NaN());
  for (size_t x = 0; x < sum.size(); ++x) {
    if (count[x] > 0) {
      curve[x] = sum[x] / static_cast<double>(count[x]);
      continue;
    }
    double near_sum = 0;
    int64_t near_count = 0;
    // x - 1 wraps around to a huge index for x == 0, which is skipped.
    for (size_t y : {x - 1, x + 1}) {
      if (y < sum.size()) {
        near_sum += sum[y];
        near_count += count[y];
      }
    }
    if (near_count > 0) curve[x] = near_sum / static_cast<double>(near_count);
  }
  return curve;
}

absl::StatusOr<ReplayRun> ReplayOnce(const Config& config,
                                     absl::Span<const NodeInventory> nodes,
                                     absl::Span<const TracePod> pods,
                                     uint64_t seed, double inflate) {
  const int64_t cluster_milli = ClusterGpuMilli(nodes);
  std::mt19937_64 rng(seed);
  const std::vector<TracePod> stream =
      ReplayPodStream(std::vector<TracePod>(pods.begin(), pods.end()),
                      cluster_milli, inflate, rng);
  Workload workload;
  workload.nodes = ReplayNodeOrder(
      std::vector<NodeInventory>(nodes.begin(), nodes.end()), rng);
  workload.pods.reserve(stream.size());
  for (const TracePod& pod : stream) {
    workload.pods.push_back(TracePodRequest(pod));
  }
  RunOptions options;
  options.reason_counts = false;
  options.max_reason_examples = 0;
  DS_ASSIGN_OR_RETURN(RunResult result,
                      RunSimulation(config, workload, options));
  ReplayRun run;
  run.seed = seed;
  run.pods = stream.size();
  std::vector<PodAttempt> attempts(stream.size());
  for (size_t i = 0; i < stream.size(); ++i) {
    attempts[i] = PodAttempt{TracePodGpuMilli(stream[i]), result.placed[i]};
    if (result.placed[i]) ++run.placed;
    run.schedule_seconds += static_cast<double>(result.decision_ns[i]) * 1e-9;
  }
  run.allocated_percent = AllocationCurve(attempts, cluster_milli);
  return run;
}

}  // namespace deviceshare::simulate
