// Search visits only the first node of each set of twins in a bucket
// (scheduler/bucket_twins.h: untouched nodes whose inventories differ only
// in names and uuids). What twins are, which nodes a bucket lists, and
// that Schedule() still chooses what a full scan chooses on clusters made
// mostly of twins, under policies bounded by node state (fragaware, fgd)
// and by utilisation (binpack).
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/scheduler/bucket_twins.h"
#include "deviceshare/scheduler/cluster_state.h"
#include "deviceshare/scheduler/decision_path.h"
#include "deviceshare/scheduler/scheduler.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::GpuContainer;
using ::deviceshare::testing::MakeConfig;
using ::deviceshare::testing::MakeNode;
using ::deviceshare::testing::MakePod;

TEST(BucketTwinsTest, InventoriesEqualButForNamesAndUuidsAreTwins) {
  const NodeState a(MakeNode("a", 4, 81920, 10, true));
  const NodeState b(MakeNode("b", 4, 81920, 10, true));
  EXPECT_EQ(TwinKeyOf(a), TwinKeyOf(b));
  NodeInventory other_numa = MakeNode("c", 4, 81920, 10, true);
  other_numa.gpus[3].numa_node = 0;
  EXPECT_NE(TwinKeyOf(a), TwinKeyOf(NodeState(other_numa)));
  NodeInventory more_cpu = MakeNode("d", 4, 81920, 10, true);
  more_cpu.cpu_milli = 64000;
  EXPECT_NE(TwinKeyOf(a), TwinKeyOf(NodeState(more_cpu)));
  NodeInventory other_split = MakeNode("e", 4, 81920, 5, true);
  EXPECT_NE(TwinKeyOf(a), TwinKeyOf(NodeState(other_split)));
}

TEST(BucketTwinsTest, PairScoresNameTheirPeerByPosition) {
  auto with_pair = [](const std::string& name, size_t peer, int32_t score) {
    NodeInventory inventory = MakeNode(name, 3);
    inventory.gpus[0].pair_scores.push_back(
        GpuPairScore{inventory.gpus[peer].uuid, score});
    return NodeState(inventory);
  };
  EXPECT_EQ(TwinKeyOf(with_pair("a", 1, 50)), TwinKeyOf(with_pair("b", 1, 50)));
  EXPECT_NE(TwinKeyOf(with_pair("a", 1, 50)), TwinKeyOf(with_pair("b", 2, 50)));
  EXPECT_NE(TwinKeyOf(with_pair("a", 1, 50)), TwinKeyOf(with_pair("b", 1, 60)));
}

TEST(BucketTwinsTest, HostUseOrAPodTouchesANode) {
  NodeState node(MakeNode("a", 2));
  EXPECT_TRUE(Untouched(node));
  node.AddHostUsage(1000, 0);
  EXPECT_FALSE(Untouched(node));
  node.SubtractHostUsage(1000, 0);
  EXPECT_TRUE(Untouched(node));
  ASSERT_OK(node.AddPodToGpu(1, "uid-p", {ContainerShare{.memory_mib = 1}}));
  EXPECT_FALSE(Untouched(node));
}

class BucketTwinsStateTest : public ::testing::Test {
 protected:
  BucketTwinsStateTest() {
    BackendRegistry registry;
    EXPECT_OK(RegisterBuiltinBackends(registry));
    backends_ =
        std::make_unique<BackendSet>(*BackendSet::Create(registry, Config{}));
    state_ = std::make_unique<ClusterState>(backends_.get());
  }

  // The names of the nodes Visit lists, over every bucket.
  std::set<std::string> Visited() {
    std::set<std::string> names;
    for (const auto& [shape, group] : state_->shape_groups()) {
      for (const auto& [key, bucket] : group.buckets) {
        for (uint32_t at : twins_.Visit(*state_, bucket)->positions) {
          names.insert(bucket.nodes[at].node->name());
        }
      }
    }
    return names;
  }

  std::unique_ptr<BackendSet> backends_;
  std::unique_ptr<ClusterState> state_;
  BucketTwins twins_;
};

TEST_F(BucketTwinsStateTest, ListsTheFirstOfEachTwinClassByName) {
  for (const std::string name : {"n3", "n1", "n2", "n0"}) {
    ASSERT_OK(state_->UpsertNode(MakeNode(name, 4)));
  }
  NodeInventory other = MakeNode("n5", 4);
  other.gpus[0].numa_node = 1;
  ASSERT_OK(state_->UpsertNode(other));
  ASSERT_OK(state_->UpsertNode(MakeNode("n4", 2)));
  EXPECT_EQ(Visited(), (std::set<std::string>{"n0", "n4", "n5"}));

  // A pod on n0 (small enough to leave it in its bucket): n0 is no longer
  // a twin, and n1 leads the others.
  PodRequest pod = MakePod("p", {GpuContainer("c", 1, 1, 0)});
  NodeFit fit = backends_->all().front()->Filter(pod, *state_->FindNode("n0"),
                                                 PlacementOptions{});
  ASSERT_TRUE(fit.fits()) << fit.message;
  ASSERT_OK(state_->AddPod(pod, fit.allocation));
  EXPECT_EQ(Visited(), (std::set<std::string>{"n0", "n1", "n4", "n5"}));

  // Gone again: n0 leads its twins once more; a node registered again
  // with the same inventory stays a twin.
  state_->RemovePod(pod.uid);
  ASSERT_OK(state_->UpsertNode(MakeNode("n2", 4)));
  EXPECT_EQ(Visited(), (std::set<std::string>{"n0", "n4", "n5"}));
  state_->RemoveNode("n0");
  EXPECT_EQ(Visited(), (std::set<std::string>{"n1", "n4", "n5"}));
}

// Schedule() under the parameter's policy against Filter() over every
// node (BetterVerdict), pod by pod, on a cluster of few node kinds with
// names interleaved, pods of every size coming and going, some bound to a
// NUMA node or a model, some naming GPU uuids (which turn twins off).
class SearchTwinsTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::unique_ptr<Scheduler> NewScheduler() {
    Config config = MakeConfig(GetParam(), GetParam());
    if (GetParam() == "fgd") {
      config.scheduler.typical_workload = {
          WorkloadShape{.gpu_milli = 500, .gpu_count = 1, .share = 0.5},
          WorkloadShape{.gpu_milli = 1000, .gpu_count = 1, .share = 0.3},
          WorkloadShape{.cpu_milli = 4000,
                        .gpu_milli = 1000,
                        .gpu_count = 4,
                        .share = 0.2},
      };
    }
    BackendRegistry registry;
    EXPECT_OK(RegisterBuiltinBackends(registry));
    auto scheduler = Scheduler::Create(config, registry);
    EXPECT_OK(scheduler);
    return scheduler.ok() ? *std::move(scheduler) : nullptr;
  }
};

TEST_P(SearchTwinsTest, ChoosesWhatAFullScanChooses) {
  std::unique_ptr<Scheduler> scheduler = NewScheduler();
  ASSERT_NE(scheduler, nullptr);
  std::mt19937_64 rng(2026);
  auto uniform = [&rng](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  // Kinds 0-2 share a shape (so a bucket), told apart by NUMA layout, host
  // CPU and model only.
  for (int n = 0; n < 40; ++n) {
    const std::string name = absl::StrCat("node-", n);
    NodeInventory node = MakeNode(name, 8, 81920, 10, n % 4 != 1);
    if (n % 4 == 1) node.cpu_milli = 48000;
    if (n % 4 == 2) {
      for (Gpu& gpu : node.gpus) gpu.model = "NVIDIA H100 80GB HBM3";
    }
    if (n % 4 == 3) node = MakeNode(name, 4, 40960);
    ASSERT_OK(scheduler->UpsertNode(node));
  }
  int placed = 0;
  int with_uuids = 0;
  std::vector<std::string> live;
  for (int i = 0; i < 700; ++i) {
    const int gpus = uniform(0, 5) == 0 ? 1 << uniform(1, 3) : 1;
    const bool whole = gpus > 1 || uniform(0, 3) == 0;
    PodRequest pod =
        MakePod(absl::StrCat("p", i),
                {GpuContainer("c", gpus, whole ? 0 : uniform(1, 20) * 2048,
                              whole ? 100 : uniform(0, 6) * 10)});
    pod.cpu_milli = uniform(0, 8) * 1000;
    if (uniform(0, 5) == 0) pod.numa_bind = true;
    if (uniform(0, 5) == 0) pod.use_models = {"H100"};
    if (uniform(0, 9) == 0) {
      const int n = uniform(0, 39);
      pod.use_uuids = {absl::StrCat("GPU-node-", n, "-0")};
      ++with_uuids;
    }
    std::optional<NodeVerdict> expected;
    for (NodeVerdict& v : scheduler->FilterFreshForTest(pod)) {
      if (v.fit.fits() && (!expected || BetterVerdict(v, *expected))) {
        expected = std::move(v);
      }
    }
    absl::StatusOr<Decision> outcome = scheduler->Schedule(pod);
    ASSERT_OK(outcome);
    ASSERT_EQ(outcome->allocation.has_value(), expected.has_value()) << i;
    if (expected) {
      ASSERT_EQ(outcome->allocation->node_name, expected->node) << i;
      EXPECT_EQ(outcome->score, expected->score) << i;
      EXPECT_EQ(*outcome->allocation, expected->fit.allocation) << i;
      live.push_back(pod.uid);
      ++placed;
    }
    if (!live.empty() && uniform(0, 2) == 0) {
      const size_t k = uniform(0, static_cast<int>(live.size()) - 1);
      scheduler->Release(live[k]);
      live[k] = live.back();
      live.pop_back();
    }
  }
  EXPECT_GT(placed, 300);
  EXPECT_GT(with_uuids, 30);
}

INSTANTIATE_TEST_SUITE_P(Policies, SearchTwinsTest,
                         ::testing::Values("fragaware", "fgd", "binpack"));

}  // namespace
}  // namespace deviceshare
