// File: simulate/fgd_replay.h
//
// The trace replay protocol of FGD ("Beware of Fragmentation", Weng et al.,
// USENIX ATC'23; docs/reference/fgd.md §1), run through the Scheduler
// facade (RunSimulation), so that a policy's packing quality is measured on
// the path the extender takes. Per seed:
//   1. the trace's pods sorted by name, then shuffled (Fisher-Yates,
//      std::mt19937_64 seeded with the seed);
//   2. tuned to `inflate` x the cluster's GPUs (1.3 in FGD's runs): pods of
//      the trace drawn uniformly with replacement are appended (named
//      "<name>-tuned-<i>") until the first draw whose per-GPU milli would
//      pass the target, as FGD's simulator checks it; a trace above the
//      target loses pods drawn at random until it is not;
//   3. the nodes, sorted by name, renamed "<dddd>-<name>" with a seeded
//      permutation: the scheduler breaks score ties by the smaller node
//      name, so ties go by a seeded random node order, as there;
//   4. every pod scheduled once in stream order, no departures, no retry.
// The metric: after each attempt, arrived = the GPU milli of every pod
// attempted so far (placed or not) and allocated = that of the placed ones,
// both as % of the cluster's GPUs. A run's curve has one value per integer
// arrived % (rounded): the mean allocated % over the attempts in that
// bucket, or over the buckets beside it when it has none.
//
// The random draws are ours (std::mt19937_64), not Go's math/rand, so a
// seed gives the same kind of stream as FGD's, not the same stream: compare
// means over seeds.
//
// Thread safety: plain functions; runs share nothing.
#ifndef DEVICESHARE_SIMULATE_FGD_REPLAY_H_
#define DEVICESHARE_SIMULATE_FGD_REPLAY_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "deviceshare/config/scheduler_config.h"
#include "deviceshare/model/node_inventory.h"
#include "deviceshare/model/workload_shape.h"
#include "deviceshare/simulate/trace_loader.h"

namespace deviceshare::simulate {

// FGD's setting: seeds 42..51, arrivals up to 130 % of the GPUs.
inline constexpr double kFgdInflate = 1.3;
std::vector<uint64_t> FgdSeeds();

// Step 1 and 2: the stream of one seed. `cluster_milli`: 1000 per GPU.
std::vector<TracePod> ReplayPodStream(std::vector<TracePod> pods,
                                      int64_t cluster_milli, double inflate,
                                      std::mt19937_64& rng);

// Step 3, with the same generator after step 2.
std::vector<NodeInventory> ReplayNodeOrder(std::vector<NodeInventory> nodes,
                                           std::mt19937_64& rng);

// One scheduling attempt as the metric sees it.
struct PodAttempt {
  int64_t gpu_milli = 0;  // TracePodGpuMilli
  bool placed = false;
};

// Allocated % per arrived % (index), NaN where neither the bucket nor its
// neighbours saw an attempt. Sized to the last arrived % reached + 1.
std::vector<double> AllocationCurve(absl::Span<const PodAttempt> attempts,
                                    int64_t cluster_milli);

struct ReplayRun {
  uint64_t seed = 0;
  size_t pods = 0;  // attempted
  size_t placed = 0;
  double schedule_seconds = 0;            // summed decision time
  std::vector<double> allocated_percent;  // AllocationCurve
};

// One seed of one policy: `config` chooses the policies. `nodes` and
// `pods` as loaded (trace_loader.h).
absl::StatusOr<ReplayRun> ReplayOnce(const Config& config,
                                     absl::Span<const NodeInventory> nodes,
                                     absl::Span<const TracePod> pods,
                                     uint64_t seed,
                                     double inflate = kFgdInflate);

// A trace pod as a shape of FGD's typical workload: CPU, per-GPU milli,
// GPU count and models ("Alibaba[T4]", as the trace's nodes name them).
WorkloadShape TracePodShape(const TracePod& pod);
// FGD's typical workload of a trace (policy/fgd/typical_pods.h), computed
// from the trace as loaded, before tuning.
std::vector<WorkloadShape> TraceTypicalWorkload(
    absl::Span<const TracePod> pods);

// The GPU milli of the cluster: 1000 per GPU.
int64_t ClusterGpuMilli(absl::Span<const NodeInventory> nodes);

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_FGD_REPLAY_H_
