// defrag_bench: one DefragPlanner::Plan on a fragmented cluster of 1,000
// nodes x 8 A100-80GB (hami-core, binpack/binpack): every GPU holds 48-72
// GiB in shares of 8-32 GiB (a fixed seed), so no GPU is free and every
// one has an 8-32 GiB gap. Targets: K whole GPUs (WholeGpuTargets), and K
// pending pods of 48 GiB; neither fits anywhere as is. Prints, per K, the
// plan's moves and placements and the wall time of Plan (median of --runs; the
// state is the same before each run, Plan leaves it as it found it). Every pod
// may move (priority 0-3, no budget), so the exact search does not run: the
// greedy plan.
//
//   defrag_bench [--nodes 1000] [--gpus 8] [--targets 1,8,32] [--runs 3]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "deviceshare/defrag/defrag_planner.h"
#include "deviceshare/hamicore/hamicore_backend.h"
#include "testing/builders.h"
#include "testing/victim_world.h"

ABSL_FLAG(int, nodes, 1000, "nodes");
ABSL_FLAG(int, gpus, 8, "GPUs per node");
ABSL_FLAG(std::string, targets, "1,8,32", "target counts");
ABSL_FLAG(int, runs, 3, "runs per row (median)");

namespace {

using deviceshare::PodRequest;
using deviceshare::defrag::DefragPlan;
using deviceshare::defrag::DefragPlanner;
using deviceshare::defrag::DefragQuery;
using deviceshare::testing::GpuContainer;
using deviceshare::testing::MakePod;
using deviceshare::testing::ModeGpu;
using deviceshare::testing::VictimWorld;

constexpr int64_t kGib = 1024;

// Binds `pod` on GPU `gpu` of `node` (its one container's share), as a
// scheduler recorded it; the request itself names no GPU, so it may move.
bool Bind(VictimWorld& world, const PodRequest& pod, const std::string& node,
          int gpu) {
  deviceshare::DeviceGrant grant = deviceshare::testing::Grant(
      absl::StrCat("GPU-", node, "-", gpu), pod.containers[0].memory_mib, 0);
  grant.mode = deviceshare::hamicore::kMode;
  deviceshare::PodAllocation allocation;
  allocation.pod_uid = pod.uid;
  allocation.pod_key = pod.Key();
  allocation.node_name = node;
  allocation.containers.push_back(
      deviceshare::testing::Container(0, false, {grant}));
  return world.state().AddPod(pod, allocation).ok();
}

// Fills every GPU of every node to 48-72 GiB with shares of 8-32 GiB;
// returns the pods bound.
std::vector<deviceshare::defrag::BoundPod> Fragment(VictimWorld& world,
                                                    int nodes, int gpus) {
  std::mt19937_64 random(20261127);
  std::vector<deviceshare::defrag::BoundPod> bound;
  for (int n = 0; n < nodes; ++n) {
    char name[16];
    std::snprintf(name, sizeof(name), "node-%04d", n);
    deviceshare::NodeInventory inventory;
    inventory.name = name;
    for (int g = 0; g < gpus; ++g) {
      inventory.gpus.push_back(
          ModeGpu(name, g, deviceshare::hamicore::kMode, 80 * kGib));
    }
    if (!world.state().UpsertNode(std::move(inventory)).ok()) continue;
    for (int g = 0; g < gpus; ++g) {
      // 48-72 GiB used of 80: 8-32 GiB free on every GPU.
      const int64_t goal = 48 + 8 * static_cast<int64_t>(random() % 4);
      int64_t used = 0;
      for (int s = 0; used < goal; ++s) {
        const int64_t gib =
            std::min(goal - used, 8 * (1 + static_cast<int64_t>(random() % 4)));
        used += gib;
        PodRequest pod = MakePod(absl::StrCat(name, "-", g, "-", s),
                                 {GpuContainer("c", 1, gib * kGib)});
        if (!Bind(world, pod, name, g)) continue;
        bound.push_back({pod.uid, static_cast<int32_t>(random() % 4)});
      }
    }
  }
  return bound;
}

std::vector<PodRequest> Pending(int count, int64_t gib) {
  std::vector<PodRequest> pods;
  for (int i = 0; i < count; ++i) {
    pods.push_back(MakePod(absl::StrCat("pending-", i),
                           {GpuContainer("c", 1, gib * kGib)}));
  }
  return pods;
}

void Row(const char* kind, int count, VictimWorld& world,
         const DefragPlanner& planner, DefragQuery query, int runs) {
  std::vector<double> seconds;
  DefragPlan plan;
  for (int r = 0; r < runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    auto result = planner.Plan(world.state(), query);
    const auto stop = std::chrono::steady_clock::now();
    if (!result.ok()) {
      std::printf("%s %d: %s\n", kind, count,
                  std::string(result.status().message()).c_str());
      return;
    }
    plan = *std::move(result);
    seconds.push_back(std::chrono::duration<double>(stop - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  std::printf("%-18s %7d %6zu %9zu %11zu %9s %10.3f\n", kind, count,
              plan.moves.size(), plan.placements.size(),
              plan.unplaceable.size(), plan.complete ? "yes" : "no",
              seconds[seconds.size() / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  VictimWorld world;
  if (!world.status().ok()) {
    std::printf("setup: %s\n", std::string(world.status().message()).c_str());
    return 1;
  }
  const int nodes = absl::GetFlag(FLAGS_nodes);
  const int gpus = absl::GetFlag(FLAGS_gpus);
  const std::vector<deviceshare::defrag::BoundPod> bound =
      Fragment(world, nodes, gpus);
  const DefragPlanner planner(&world.path(), &world.backends());
  std::printf("%d nodes x %d GPUs, %zu bound pods (all movable)\n", nodes, gpus,
              bound.size());
  std::printf("%-18s %7s %6s %9s %11s %9s %10s\n", "targets", "count", "moves",
              "placed", "unplaceable", "complete", "plan_s");
  for (absl::string_view part :
       absl::StrSplit(absl::GetFlag(FLAGS_targets), ',')) {
    int count = 0;
    if (!absl::SimpleAtoi(part, &count) || count <= 0) continue;
    DefragQuery query;
    query.pods = bound;
    query.budget.max_moves = 4 * count;
    query.targets = deviceshare::defrag::WholeGpuTargets(count);
    Row("whole GPUs", count, world, planner, query, absl::GetFlag(FLAGS_runs));
    query.targets = Pending(count, 48);
    Row("48 GiB pods", count, world, planner, query, absl::GetFlag(FLAGS_runs));
  }
  return 0;
}
