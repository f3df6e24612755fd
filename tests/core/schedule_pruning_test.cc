// Schedule() skips nodes by bound (scheduler.cc). Its choice must be the
// one a full scan makes: the highest score over every node, ties to the
// smaller name. Checked against Filter() over all nodes, pod by pod, on
// random mixed clusters and workloads under both policies.
#include <algorithm>
#include <map>
#include <memory>
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

// A scheduler under the parameter's node and GPU policies, and a seeded
// source of uniform integers.
class SchedulePruningTest
    : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {
 protected:
  std::unique_ptr<Scheduler> NewScheduler() {
    auto [node_policy, gpu_policy] = GetParam();
    BackendRegistry registry;
    EXPECT_OK(RegisterBuiltinBackends(registry));
    auto scheduler =
        Scheduler::Create(MakeConfig(node_policy, gpu_policy), registry);
    EXPECT_OK(scheduler);
    return scheduler.ok() ? *std::move(scheduler) : nullptr;
  }
  int Uniform(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng_);
  }
  void Seed(uint64_t seed) { rng_.seed(seed); }

 private:
  std::mt19937_64 rng_;
};

TEST_P(SchedulePruningTest, ChoosesWhatAFullScanChooses) {
  std::unique_ptr<Scheduler> scheduler = NewScheduler();
  ASSERT_NE(scheduler, nullptr);
  Seed(99);
  auto uniform = [&](int lo, int hi) { return Uniform(lo, hi); };
  for (int n = 0; n < 24; ++n) {
    NodeInventory node = MakeNode(absl::StrCat("node-", n), 1 << uniform(0, 3),
                                  uniform(1, 3) * 16384, uniform(2, 10), true);
    node.cpu_milli = uniform(0, 1) ? 0 : 64000;
    // Mixed card sizes on some nodes: bounds must hold for percent requests.
    if (uniform(0, 2) == 0) {
      for (Gpu& gpu : node.gpus) gpu.memory_mib = uniform(1, 4) * 8192;
    }
    ASSERT_OK(scheduler->UpsertNode(node));
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
    std::vector<NodeVerdict> verdicts = scheduler->FilterFreshForTest(pod);
    for (const NodeVerdict& v : verdicts) {
      if (!v.fit.fits()) continue;
      if (expected == nullptr || v.score > expected->score) expected = &v;
    }
    auto outcome = scheduler->Schedule(pod);
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
      scheduler->Release(live[k]);
      live[k] = live.back();
      live.pop_back();
    }
  }
  EXPECT_GT(placed, 300);
  EXPECT_GT(unplaced, 10);
}

// A pod that fits nowhere is explained from bucket tallies remembered per
// GPU shape (bucket_tally.h) wherever its buckets did not change. Its
// counts and the nodes chosen for a full reason must be those of a full
// scan: every code's first node by name, then nodes by name, up to the
// budget. Few GPU shapes, so tallies are reused, by pods that ask for
// other CPU and memory too (some nodes short of either); pods come and go,
// so some tallies are stale.
TEST_P(SchedulePruningTest, ExplainsFailuresAsAFullScanDoes) {
  std::unique_ptr<Scheduler> scheduler = NewScheduler();
  ASSERT_NE(scheduler, nullptr);
  Seed(7);
  auto uniform = [&](int lo, int hi) { return Uniform(lo, hi); };
  for (int n = 0; n < 60; ++n) {
    NodeInventory node = MakeNode(absl::StrCat("node-", n), 2 << uniform(0, 1),
                                  uniform(1, 2) * 16384, 4, false);
    node.cpu_milli = uniform(0, 1) ? 0 : 16000;
    node.memory_mib = uniform(0, 1) ? 0 : 65536;
    ASSERT_OK(scheduler->UpsertNode(node));
  }
  std::vector<PodRequest> shapes;
  for (int k = 0; k < 12; ++k) {
    PodRequest pod = MakePod(
        "shape", {GpuContainer("app", uniform(1, 3), uniform(1, 32) * 1024,
                               uniform(0, 10) * 10)});
    pod.cpu_milli = uniform(0, 12000);
    shapes.push_back(pod);
  }
  int failed = 0;
  std::vector<std::string> live;
  for (int i = 0; i < 1200; ++i) {
    PodRequest pod = shapes[uniform(0, shapes.size() - 1)];
    if (uniform(0, 1) == 0) pod.cpu_milli = uniform(0, 12000);
    pod.memory_mib = uniform(0, 3) * 16384;
    pod.name = absl::StrCat("p", i);
    pod.uid = absl::StrCat("uid-p", i);
    ScheduleOptions options;
    options.max_explained_nodes = uniform(0, 6);
    options.count_reasons = uniform(0, 3) != 0;
    std::vector<NodeVerdict> verdicts = scheduler->FilterFreshForTest(pod);
    const bool fits_somewhere =
        std::any_of(verdicts.begin(), verdicts.end(),
                    [](const NodeVerdict& v) { return v.fit.fits(); });
    auto outcome = scheduler->Schedule(pod, options);
    ASSERT_OK(outcome);
    ASSERT_EQ(outcome->allocation.has_value(), fits_somewhere) << pod.name;
    if (fits_somewhere) {
      live.push_back(pod.uid);
    } else {
      ++failed;
      std::map<std::string, int64_t> counts;
      std::map<ReasonCode, const NodeVerdict*> first;
      for (const NodeVerdict& v : verdicts) {  // by name
        ++counts[std::string(ReasonCodeName(v.fit.code))];
        first.emplace(v.fit.code, &v);
      }
      std::map<std::string, std::string> reasons;
      size_t budget = options.max_explained_nodes;
      auto explain = [&](const NodeVerdict& v) {
        if (budget > 0 && reasons.emplace(v.node, v.fit.message).second) {
          --budget;
        }
      };
      if (options.count_reasons) {
        for (const auto& [code, v] : first) explain(*v);
      }
      for (const NodeVerdict& v : verdicts) explain(v);
      if (!options.count_reasons) counts.clear();
      EXPECT_EQ(outcome->reason_counts, counts) << pod.name;
      EXPECT_EQ(outcome->reasons, reasons) << pod.name;
    }
    if (!live.empty() && uniform(0, 3) == 0) {
      size_t k = uniform(0, live.size() - 1);
      scheduler->Release(live[k]);
      live[k] = live.back();
      live.pop_back();
    }
  }
  EXPECT_GT(failed, 100);
  EXPECT_GT(live.size(), 50u);
}

INSTANTIATE_TEST_SUITE_P(
    Policies, SchedulePruningTest,
    ::testing::Combine(::testing::Values("binpack", "spread"),
                       ::testing::Values("binpack", "spread")));
// Bounded by node state (NodeScoreBoundFor): fragaware learns the workload
// from the pods, fgd has none (every node 50).
INSTANTIATE_TEST_SUITE_P(Fragmentation, SchedulePruningTest,
                         ::testing::Values(std::make_tuple("fragaware",
                                                           "fragaware"),
                                           std::make_tuple("fgd", "fgd")));

}  // namespace
}  // namespace deviceshare
