// The node score bound of fgd and fragaware (NodeScoreBoundByFrag), which
// lets the search skip nodes: the GPU milli a placement can take
// (MostMilliTaken) worked out by hand, and the bound checked against the
// score of every placement the share backends offer on random nodes.
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/policy/fgd/fgd_policy.h"
#include "deviceshare/policy/policy_registry.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using testing::GpuContainer;
using testing::MakeConfig;
using testing::MakeNode;
using testing::MakePod;

// Two 80 GiB GPUs: GPU 0 idle (1000 milli left), GPU 1 with 40 GiB of
// memory held (500 left).
NodeState HalfHeldNode() {
  NodeState node(MakeNode("a", 2));
  ContainerShare held;
  held.memory_mib = 40960;
  EXPECT_OK(node.AddPodToGpu(1, "resident", {held}));
  return node;
}

// 8 GiB and 20 % of the SMs: GPU 0 keeps min(800 by cores, 900 by memory),
// losing 200; GPU 1 keeps min(500, 800, 400), losing 100. Charged up to a
// whole GPU, the worst loses all of its 1000.
TEST(FgdNodeBoundTest, AShareTakesWhatItsWorstGpuLoses) {
  const NodeState node = HalfHeldNode();
  const PodRequest share = MakePod("p", {GpuContainer("c", 1, 8192, 20)});
  EXPECT_EQ(fgd::MostMilliTaken(share, node, GrantCharges::kAsAsked), 200);
  EXPECT_EQ(fgd::MostMilliTaken(share, node, GrantCharges::kUpToWholeGpu),
            1000);
}

// A quarter of each card's memory on two GPUs: 250 from either, twice.
TEST(FgdNodeBoundTest, EachGpuAskedIsOneGrant) {
  const NodeState node = HalfHeldNode();
  ContainerRequest quarter = GpuContainer("c", 2, 0, 0);
  quarter.memory_percent = 25;
  EXPECT_EQ(fgd::MostMilliTaken(MakePod("p", {quarter}), node,
                                GrantCharges::kAsAsked),
            500);
}

// The init container's grant counts as well as the app's: 16 GiB and 10 %
// lose GPU 0 200 (by memory, 800 left) and GPU 1 200 (300 left); the app's
// 8 GiB and 20 % lose 200 at most.
TEST(FgdNodeBoundTest, InitContainersGrantsCount) {
  const NodeState node = HalfHeldNode();
  ContainerRequest init = GpuContainer("init", 1, 16384, 10);
  init.is_init = true;
  const PodRequest pod = MakePod("p", {init, GpuContainer("app", 1, 8192, 20)});
  EXPECT_EQ(fgd::MostMilliTaken(pod, node, GrantCharges::kAsAsked), 400);
}

TEST(FgdNodeBoundTest, WholeGpusNoGpuAndBadCounts) {
  const NodeState node = HalfHeldNode();
  EXPECT_EQ(fgd::MostMilliTaken(MakePod("w", {GpuContainer("c", 1, 0, 100)}),
                                node, GrantCharges::kAsAsked),
            1000);
  EXPECT_EQ(fgd::MostMilliTaken(MakePod("cpu", {ContainerRequest{}}), node,
                                GrantCharges::kAsAsked),
            0);
  EXPECT_EQ(fgd::MostMilliTaken(MakePod("bad", {GpuContainer("c", -1, 1, 0)}),
                                node, GrantCharges::kAsAsked),
            std::nullopt);
}

// A workload with shares counted by CPU (fragaware's), whole GPUs, a pinned
// model and a CPU-only shape.
std::vector<WorkloadShape> MixedWorkload() {
  return {
      WorkloadShape{
          .cpu_milli = 4000, .gpu_milli = 250, .gpu_count = 1, .share = 0.3},
      WorkloadShape{
          .cpu_milli = 8000, .gpu_milli = 500, .gpu_count = 1, .share = 0.2},
      WorkloadShape{
          .cpu_milli = 8000, .gpu_milli = 1000, .gpu_count = 2, .share = 0.2},
      WorkloadShape{
          .cpu_milli = 2000, .gpu_milli = 0, .gpu_count = 0, .share = 0.1},
      WorkloadShape{.cpu_milli = 1000,
                    .gpu_milli = 100,
                    .gpu_count = 1,
                    .models = {"H100"},
                    .share = 0.2},
  };
}

// A random pod of the kinds the share backends take: MiB or percent
// memory, cores or none, exclusive, several GPUs, an init container.
PodRequest RandomPod(int step, std::mt19937_64& rng) {
  auto uniform = [&rng](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  ContainerRequest app =
      GpuContainer("app", uniform(1, 4) == 1 ? 2 : 1, uniform(1, 40) * 1024,
                   uniform(0, 8) == 0 ? 100 : uniform(0, 6) * 10);
  if (uniform(0, 3) == 0) {
    app.memory_mib = 0;
    app.memory_percent = uniform(0, 10) * 10;
  }
  std::vector<ContainerRequest> containers = {app};
  if (uniform(0, 4) == 0) {
    ContainerRequest init = GpuContainer("init", 1, uniform(1, 30) * 1024, 20);
    init.is_init = true;
    containers.insert(containers.begin(), init);
  }
  PodRequest pod = MakePod(absl::StrCat("p", step), containers);
  pod.cpu_milli = uniform(0, 12) * 1000;
  return pod;
}

// A node of 4 GPUs running `mode`, of one random size and SM scaling, with
// host CPU.
NodeState RandomNode(const SharingMode& mode, std::mt19937_64& rng) {
  auto uniform = [&rng](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  NodeInventory inventory = MakeNode("n", 4, uniform(2, 10) * 8192);
  const int32_t core_capacity = uniform(0, 2) == 0 ? 200 : 100;
  for (Gpu& gpu : inventory.gpus) {
    gpu.core_capacity = core_capacity;
    gpu.mode = mode;
    gpu.mps_capable = true;
  }
  if (uniform(0, 3) == 0) {
    for (Gpu& gpu : inventory.gpus) gpu.model = "NVIDIA H100 80GB HBM3";
  }
  inventory.cpu_milli = uniform(16, 64) * 1000;
  return NodeState(std::move(inventory));
}

// On random nodes partly filled by random pods, every placement a share
// backend's Filter offers (GPUs ranked by fgd, fragaware or binpack) scores
// at most the bound for the backend's grant charges under fgd and
// fragaware, and that bound is never looser than the whole-GPU one; it is
// strictly tighter on many nodes, or the test would not test it.
TEST(FgdNodeBoundTest, BoundsEveryPlacementTheShareBackendsOffer) {
  BackendRegistry registry;
  ASSERT_OK(RegisterBuiltinBackends(registry));
  Config config = MakeConfig("fgd", "fgd");
  config.scheduler.typical_workload = MixedWorkload();
  std::vector<std::unique_ptr<PlacementPolicy>> policies;
  for (const char* name : {"fgd", "fragaware", "binpack"}) {
    absl::StatusOr<std::unique_ptr<PlacementPolicy>> policy =
        BuiltinPolicies().Create(name, config);
    ASSERT_OK(policy);
    policies.push_back(*std::move(policy));
  }
  std::mt19937_64 rng(2026);
  int checked = 0;
  int tighter = 0;
  for (const char* backend_name : {"hami-core", "mps"}) {
    absl::StatusOr<std::unique_ptr<SharingBackend>> backend =
        registry.Create(backend_name, config);
    ASSERT_OK(backend);
    ASSERT_EQ((*backend)->grant_charges(), GrantCharges::kAsAsked);
    for (int round = 0; round < 40; ++round) {
      NodeState node = RandomNode((*backend)->mode(), rng);
      for (int step = 0; step < 30; ++step) {
        PodRequest pod = RandomPod(step, rng);
        pod.mode = (*backend)->mode();
        for (size_t n = 0; n < 2; ++n) {  // fgd, fragaware
          const PlacementPolicy& node_policy = *policies[n];
          const int bound =
              node_policy.NodeScoreBoundFor(pod, node, GrantCharges::kAsAsked);
          const int loose = node_policy.NodeScoreBoundFor(
              pod, node, GrantCharges::kUpToWholeGpu);
          EXPECT_LE(bound, loose) << pod.name;
          if (bound < loose) ++tighter;
          for (const auto& gpu_policy : policies) {
            PlacementOptions options{gpu_policy.get(), &node_policy, &pod};
            const NodeFit fit = (*backend)->Filter(pod, node, options);
            if (!fit.fits()) continue;
            ++checked;
            EXPECT_LE(node_policy.NodeScoreFor(pod, node, fit.allocation),
                      bound)
                << backend_name << " " << node_policy.name() << " " << pod.name;
          }
        }
        // Half the pods stay, so nodes fill up and empty again.
        std::uniform_int_distribution<int> coin(0, 1);
        if (coin(rng) == 1 && (*backend)->Allocate(pod, node, {}).ok() &&
            node.used_cpu_milli() + pod.cpu_milli <=
                node.inventory().cpu_milli) {
          node.AddHostUsage(pod.cpu_milli, 0);  // as the cluster state does
        }
        if (coin(rng) == 1 && step % 5 == 0) {
          for (const std::string& uid : node.ledger(step % 4).PodUids()) {
            (*backend)->Release(uid, node);
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 2000);
  EXPECT_GT(tighter, 500);
}

}  // namespace
}  // namespace deviceshare
