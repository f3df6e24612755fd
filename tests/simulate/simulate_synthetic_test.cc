// Tests of the synthetic cluster and workload: deterministic for a seed,
// the documented shapes and mix, and a small end-to-end run.
#include <string>

#include "deviceshare/simulate/json_report.h"
#include "deviceshare/simulate/simulate.h"
#include "deviceshare/simulate/synthetic.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace deviceshare::simulate {
namespace {

using ::testing::SizeIs;

TEST(SyntheticTest, NodesAreA100sInTwoNumaHalves) {
  auto nodes = SyntheticNodes(3, 8, DeviceConfig());
  ASSERT_OK(nodes);
  ASSERT_THAT(*nodes, SizeIs(3));
  const NodeInventory& node = (*nodes)[2];
  EXPECT_EQ(node.name, "node-00002");
  EXPECT_EQ(node.cpu_milli, 128000);
  EXPECT_EQ(node.memory_mib, 1048576);
  ASSERT_THAT(node.gpus, SizeIs(8));
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(node.gpus[i].numa_node, i < 4 ? 0 : 1);
    EXPECT_EQ(node.gpus[i].memory_mib, 81920);
    EXPECT_EQ(node.gpus[i].split_count, 10);
    EXPECT_EQ(node.gpus[i].model, kSyntheticGpuModel);
  }
  EXPECT_OK(ValidateInventory(node));
}

TEST(SyntheticTest, PodsAreDeterministicPerSeed) {
  EXPECT_EQ(SyntheticPods(500, 8, 42), SyntheticPods(500, 8, 42));
  EXPECT_NE(SyntheticPods(500, 8, 42), SyntheticPods(500, 8, 43));
  // A longer run starts with the same pods.
  std::vector<PodRequest> longer = SyntheticPods(600, 8, 42);
  longer.resize(500);
  EXPECT_EQ(longer, SyntheticPods(500, 8, 42));
}

TEST(SyntheticTest, MixMatchesTheDocumentedShares) {
  const std::vector<PodRequest> pods = SyntheticPods(10000, 8, 1);
  int fractional = 0, whole = 0, multi = 0;
  for (const PodRequest& pod : pods) {
    ASSERT_THAT(pod.containers, SizeIs(1));
    const ContainerRequest& c = pod.containers[0];
    if (c.gpu_count == 1 && c.cores < 100) {
      ++fractional;
      EXPECT_GE(c.memory_mib, 2048);
      EXPECT_LE(c.memory_mib, 40960);
      EXPECT_EQ(c.memory_mib % 2048, 0);
      EXPECT_LE(c.cores, 60);
      EXPECT_EQ(c.cores % 10, 0);
    } else if (c.gpu_count == 1) {
      ++whole;
    } else {
      ++multi;
      EXPECT_TRUE(c.gpu_count == 2 || c.gpu_count == 4 || c.gpu_count == 8);
      EXPECT_EQ(c.cores, 100);
    }
  }
  EXPECT_NEAR(fractional, 7000, 300);
  EXPECT_NEAR(whole, 2000, 300);
  EXPECT_NEAR(multi, 1000, 300);
  // Never more GPUs than a node has.
  for (const PodRequest& pod : SyntheticPods(2000, 4, 1)) {
    EXPECT_LE(pod.containers[0].gpu_count, 4);
  }
}

TEST(SyntheticTest, SmallRunIsReproducible) {
  SimulateOptions options;
  options.synthetic_nodes = 10;
  options.gpus_per_node = 8;
  options.synthetic_pods = 200;
  options.seed = 5;
  auto a = Simulate(options);
  auto b = Simulate(options);
  ASSERT_OK(a);
  ASSERT_OK(b);
  nlohmann::ordered_json ja = ReportJson(*a), jb = ReportJson(*b);
  EXPECT_EQ(ja["placements"], jb["placements"]);
  EXPECT_EQ(ja["unschedulable"], jb["unschedulable"]);
  EXPECT_EQ(ja["summary"]["pods"], 200);
  EXPECT_EQ(ja["summary"]["gpus"], 80);
  EXPECT_EQ(ja["summary"]["gpu_memory_allocated_pct"],
            jb["summary"]["gpu_memory_allocated_pct"]);
  EXPECT_GT(ja["summary"]["placed"].get<int>(), 0);
}

}  // namespace
}  // namespace deviceshare::simulate
