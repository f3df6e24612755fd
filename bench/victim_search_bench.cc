// victim_search_bench: the victim search (preemption/victim_search.h) per
// node, on random nodes of 8 GPUs x 50 pods, one table row per sharing
// mode and request: p50/p99 of the time of one Find, its Filter calls and
// search steps, the victims it chose, and how many searches found a set and
// finished inside the default budget. Not a test: timings depend on the
// machine.
//
//   victim_search_bench [nodes per row, default 300] [seed, default 1]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/hamicore/hamicore_backend.h"
#include "deviceshare/mig/mig_backend.h"
#include "deviceshare/mps/mps_backend.h"
#include "deviceshare/preemption/victim_search.h"
#include "testing/victim_world.h"

namespace deviceshare::preemption {
namespace {

constexpr int kGpus = 8;
constexpr int kPods = 50;
constexpr int32_t kPendingPriority = 10;

int Uniform(std::mt19937& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

struct Row {
  const char* name;
  SharingMode mode;
  int pending_gpus;  // hami-core and mps; MIG asks one 3g.40gb
};

struct Sample {
  double micros = 0;
  int64_t filter_calls = 0;
  int64_t steps = 0;
  size_t victims = 0;
  bool found = false;
  bool complete = false;
};

ContainerRequest Container(std::mt19937& rng, SharingMode mode, int gpus,
                           bool pending) {
  ContainerRequest container;
  container.name = "c";
  container.gpu_count = gpus;
  if (mode == mig::kMode) {
    static const char* const kProfiles[] = {"1g.10gb", "1g.10gb", "2g.20gb"};
    container.mig_profile = pending ? "3g.40gb" : kProfiles[Uniform(rng, 0, 2)];
    return container;
  }
  container.memory_mib =
      1024 * (pending ? Uniform(rng, 24, 60) : Uniform(rng, 8, 18));
  container.cores = pending ? 10 * Uniform(rng, 2, 6) : 5 * Uniform(rng, 1, 4);
  return container;
}

class Bench {
 public:
  Bench() {
    if (!world_.status().ok()) std::abort();
  }

  // A node of kGpus GPUs in `row.mode` filled with kPods pods (placed by
  // the decision path, binpack), and one Find for a pending pod that does
  // not fit as is; nullopt-like (found = false, micros 0) when it fits.
  Sample One(std::mt19937& rng, const Row& row, int n) {
    const std::string name = absl::StrCat(row.name, "-", n);
    NodeInventory inventory;
    inventory.name = name;
    for (int i = 0; i < kGpus; ++i) {
      inventory.gpus.push_back(
          deviceshare::testing::ModeGpu(name, i, row.mode));
    }
    if (!world_.state().UpsertNode(inventory).ok()) std::abort();
    VictimQuery query;
    query.priority = kPendingPriority;
    query.node = name;
    query.disruptions_left = {{"web", 2}, {"batch", 4}};
    for (int p = 0, placed = 0; placed < kPods && p < 4 * kPods; ++p) {
      PodRequest pod;
      pod.uid = absl::StrCat(name, "-p", p);
      pod.name = pod.uid;
      pod.mode = row.mode;
      pod.containers = {Container(rng, row.mode, 1, false)};
      if (!world_.Place(pod, name)) continue;
      ++placed;
      static const char* const kGroups[] = {"", "", "web", "batch"};
      query.candidates.push_back(VictimCandidate{pod.uid, Uniform(rng, 0, 12),
                                                 Uniform(rng, 0, 9) != 0,
                                                 kGroups[Uniform(rng, 0, 3)]});
    }
    PodRequest pending;
    pending.uid = absl::StrCat(name, "-pending");
    pending.mode = row.mode;
    pending.containers = {Container(rng, row.mode, row.pending_gpus, true)};
    absl::StatusOr<PodCycle> cycle =
        world_.path().PreFilter(pending, &world_.state());
    if (!cycle.ok()) std::abort();
    query.cycle = &*cycle;
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<VictimSet> set = world_.search().Find(world_.state(), query);
    const auto end = std::chrono::steady_clock::now();
    if (!set.ok()) std::abort();
    Sample sample;
    sample.micros =
        std::chrono::duration<double, std::micro>(end - start).count();
    sample.filter_calls = set->filter_calls;
    sample.steps = set->steps;
    sample.victims = set->victims.size();
    sample.found = set->found;
    sample.complete = set->complete;
    return sample;
  }

 private:
  deviceshare::testing::VictimWorld world_;
};

template <typename T>
T Percentile(std::vector<T> values, double p) {
  if (values.empty()) return T{};
  std::sort(values.begin(), values.end());
  const size_t at = static_cast<size_t>(p * (values.size() - 1) + 0.5);
  return values[at];
}

void Report(const Row& row, const std::vector<Sample>& samples) {
  std::vector<double> micros;
  std::vector<int64_t> calls;
  std::vector<int64_t> steps;
  std::vector<size_t> victims;
  int found = 0, complete = 0;
  for (const Sample& s : samples) {
    micros.push_back(s.micros);
    calls.push_back(s.filter_calls);
    steps.push_back(s.steps);
    if (s.found) {
      ++found;
      victims.push_back(s.victims);
    }
    if (s.complete) ++complete;
  }
  std::printf(
      "| %s | %zu | %.0f | %.0f | %lld / %lld | %lld / %lld | %zu / %zu | "
      "%d | %d |\n",
      row.name, samples.size(), Percentile(micros, 0.5),
      Percentile(micros, 0.99), static_cast<long long>(Percentile(calls, 0.5)),
      static_cast<long long>(Percentile(calls, 0.99)),
      static_cast<long long>(Percentile(steps, 0.5)),
      static_cast<long long>(Percentile(steps, 0.99)), Percentile(victims, 0.5),
      Percentile(victims, 0.99), found, complete);
}

}  // namespace
}  // namespace deviceshare::preemption

int main(int argc, char** argv) {
  using namespace deviceshare::preemption;
  const int nodes = argc > 1 ? std::atoi(argv[1]) : 300;
  const unsigned seed = argc > 2 ? std::atoi(argv[2]) : 1;
  const Row rows[] = {
      {"hami-core, 1 GPU", deviceshare::hamicore::kMode, 1},
      {"hami-core, 2 GPUs", deviceshare::hamicore::kMode, 2},
      {"mps, 1 GPU", deviceshare::mps::kMode, 1},
      {"mig, 3g.40gb", deviceshare::mig::kMode, 1},
  };
  std::printf(
      "victim search per node, %d GPUs x %d pods, %d nodes per row, seed "
      "%u\n\n",
      kGpus, kPods, nodes, seed);
  std::printf(
      "| pending pod | nodes | p50 (us) | p99 (us) | Filter calls p50 / p99 "
      "| steps p50 / p99 | victims p50 / p99 | found | complete |\n"
      "|---|---|---|---|---|---|---|---|---|\n");
  for (const Row& row : rows) {
    Bench bench;
    std::mt19937 rng(seed);
    std::vector<Sample> samples;
    for (int n = 0; static_cast<int>(samples.size()) < nodes && n < 4 * nodes;
         ++n) {
      Sample sample = bench.One(rng, row, n);
      // A pod that fits as is measures nothing.
      if (sample.filter_calls > 1) samples.push_back(sample);
    }
    Report(row, samples);
  }
  return 0;
}
