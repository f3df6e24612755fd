// Schedule() skips nodes by bound (scheduler.cc). Its choice must be the
// one a full scan makes: the highest score over every node, ties to the
// smaller name. Checked against Filter() over all nodes, pod by pod, on
// random mixed clusters and workloads under both policies.
#include <random>

#include "absl/strings/str_cat.h"
#include "deviceshare/builtin_backends.h"
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

class SchedulePruningTest
    : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(SchedulePruningTest, ChoosesWhatAFullScanChooses) {
  auto [node_policy, gpu_policy] = GetParam();
  BackendRegistry registry;
  ASSERT_OK(RegisterBuiltinBackends(registry));
  auto scheduler =
      Scheduler::Create(MakeConfig(node_policy, gpu_policy), registry);
  ASSERT_OK(scheduler);
  std::mt19937_64 rng(99);
  auto uniform = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  for (int n = 0; n < 24; ++n) {
    NodeInventory node = MakeNode(absl::StrCat("node-", n), 1 << uniform(0, 3),
                                  uniform(1, 3) * 16384, uniform(2, 10), true);
    node.cpu_milli = uniform(0, 1) ? 0 : 64000;
    // Mixed card sizes on some nodes: bounds must hold for percent requests.
    if (uniform(0, 2) == 0) {
      for (Gpu& gpu : node.gpus) gpu.memory_mib = uniform(1, 4) * 8192;
    }
    ASSERT_OK((*scheduler)->UpsertNode(node));
  }
  int placed = 0;
  int unplaced = 0;
  std::vector<std::string> live;
  for (int i = 0; i < 1500; ++i) {
    ContainerRequest app =
        GpuContainer("app", uniform(1, 3) == 1 ? 2 : 1, uniform(1, 20) * 1024,
                     uniform(0, 10) == 0 ? 100 : uniform(0, 5) * 10);
    if (uniform(0, 4) == 0) {
      app.memory_mib = 0;
      app.memory_percent = uniform(1, 10) * 10;
    }
    std::vector<ContainerRequest> containers = {app};
    if (uniform(0, 5) == 0) {
      ContainerRequest init =
          GpuContainer("init", 1, uniform(1, 30) * 1024, 20);
      init.is_init = true;
      containers.insert(containers.begin(), init);
    }
    PodRequest pod = MakePod(absl::StrCat("p", i), containers);
    pod.cpu_milli = uniform(0, 8000);
    if (uniform(0, 6) == 0) pod.numa_bind = true;
    if (uniform(0, 5) == 0) {
      pod.node_policy = uniform(0, 1) ? "binpack" : "spread";
    }

    const NodeVerdict* expected = nullptr;
    std::vector<NodeVerdict> verdicts = (*scheduler)->FilterFreshForTest(pod);
    for (const NodeVerdict& v : verdicts) {
      if (!v.fit.fits()) continue;
      if (expected == nullptr || v.score > expected->score) expected = &v;
    }
    auto outcome = (*scheduler)->Schedule(pod);
    ASSERT_OK(outcome);
    if (expected == nullptr) {
      ASSERT_FALSE(outcome->allocation.has_value()) << pod.name;
      EXPECT_EQ(outcome->reasons.size(), verdicts.size());
      // Every node explained, with the text Filter() gives, and counted.
      std::map<std::string, int64_t> counts;
      for (const NodeVerdict& v : verdicts) {
        EXPECT_EQ(outcome->reasons.at(v.node), v.fit.message);
        ++counts[std::string(ReasonCodeName(v.fit.code))];
      }
      EXPECT_EQ(outcome->reason_counts, counts);
      ++unplaced;
    } else {
      ASSERT_TRUE(outcome->allocation.has_value()) << pod.name;
      ASSERT_EQ(outcome->allocation->node_name, expected->node) << pod.name;
      EXPECT_EQ(outcome->score, expected->score);
      EXPECT_EQ(*outcome->allocation, expected->fit.allocation);
      live.push_back(pod.uid);
      ++placed;
    }
    if (!live.empty() && uniform(0, 2) == 0) {
      size_t k = uniform(0, live.size() - 1);
      (*scheduler)->Release(live[k]);
      live[k] = live.back();
      live.pop_back();
    }
  }
  EXPECT_GT(placed, 300);
  EXPECT_GT(unplaced, 10);
}

INSTANTIATE_TEST_SUITE_P(
    Policies, SchedulePruningTest,
    ::testing::Combine(::testing::Values("binpack", "spread"),
                       ::testing::Values("binpack", "spread")));

}  // namespace
}  // namespace deviceshare
