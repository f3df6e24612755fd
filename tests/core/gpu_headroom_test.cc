// GpuHeadroom's memory frontier by free cores: a share needs its memory and
// its cores on one GPU, and a node whose memory sits on one GPU and whose
// cores sit on another must be ruled out from the headroom alone.
#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "deviceshare/backend/fractional_share.h"
#include "deviceshare/model/node_state.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::GpuContainer;
using ::deviceshare::testing::MakeNode;
using ::deviceshare::testing::MakePod;

TEST(GpuHeadroomTest, KeepsTheMostMemoryPerLevelOfFreeCores) {
  GpuHeadroom headroom;
  headroom.AddGpu(/*free_memory_mib=*/70000, /*free_cores=*/0);
  headroom.AddGpu(4000, 100);
  headroom.AddGpu(20000, 35);
  EXPECT_EQ(headroom.memory_mib, 70000);
  EXPECT_EQ(headroom.cores, 100);
  // At least 1 % free: the 0-core GPU does not count.
  EXPECT_EQ(headroom.MemoryWithCores(1), 20000);
  EXPECT_EQ(headroom.MemoryWithCores(30), 20000);
  EXPECT_EQ(headroom.MemoryWithCores(40), 4000);
  EXPECT_EQ(headroom.MemoryWithCores(100), 4000);
  // Between levels the bound is the lower level's: 35 counts for 31..39.
  EXPECT_EQ(headroom.MemoryWithCores(39), 20000);
}

TEST(GpuHeadroomTest, WidensEachFigureOnItsOwn) {
  GpuHeadroom a;
  a.AddGpu(70000, 0);
  GpuHeadroom b;
  b.AddGpu(4000, 100);
  ++b.idle_gpus;
  GpuHeadroom widest = a;
  widest.Widen(b);
  EXPECT_EQ(widest.memory_mib, 70000);
  EXPECT_EQ(widest.cores, 100);
  EXPECT_EQ(widest.idle_gpus, 1);
  EXPECT_EQ(widest.MemoryWithCores(100), 4000);
  EXPECT_TRUE(a.HoldsAMaximumOf(widest));
  EXPECT_TRUE(b.HoldsAMaximumOf(widest));
  GpuHeadroom small;
  small.AddGpu(1000, 0);
  EXPECT_FALSE(small.HoldsAMaximumOf(widest));
}

// Memory free on GPU 0, cores free on GPU 1: the two maxima alone would
// let a 10 GiB, 20 % share through.
TEST(GpuHeadroomTest, RulesOutMemoryAndCoresOnDifferentGpus) {
  NodeState node(MakeNode("n1", 2, 81920));
  ASSERT_OK(node.AddPodToGpu(
      0, "uid-a", {ContainerShare{.memory_mib = 1000, .cores = 100 - 1}}));
  ASSERT_OK(node.AddPodToGpu(0, "uid-b",
                             {ContainerShare{.memory_mib = 1, .cores = 1}}));
  ASSERT_OK(node.AddPodToGpu(
      1, "uid-c", {ContainerShare{.memory_mib = 80000, .cores = 0}}));
  const PodRequest pod = MakePod("p", {GpuContainer("c", 1, 10240, 20)});
  const GpuHeadroom headroom = node.headroom();
  EXPECT_GE(headroom.memory_mib, 10240);
  EXPECT_GE(headroom.cores, 20);
  EXPECT_FALSE(MaySharesFitHeadroom(pod, node.shape(), headroom));
  EXPECT_FALSE(MaySharesFit(pod, node, kDefaultSharingMode));
}

// Over random nodes: never rules out a node where the share fits GPU by
// GPU (MaySharesFit), and for cores in whole tens (or none) it says what
// MaySharesFit says for a one-GPU share on a node of healthy, open GPUs.
TEST(GpuHeadroomTest, AgreesWithTheGpusOnRandomNodes) {
  std::mt19937_64 rng(5);
  auto uniform = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  int ruled_out = 0;
  for (int n = 0; n < 300; ++n) {
    NodeState node(MakeNode("n", uniform(1, 8), 81920, 100));
    for (size_t g = 0; g < node.gpu_count(); ++g) {
      for (int p = uniform(0, 3); p > 0; --p) {
        ContainerShare share{.memory_mib = uniform(0, 30) * 1024,
                             .cores = uniform(0, 4) * 10};
        (void)node.AddPodToGpu(g, absl::StrCat("uid-", g, "-", p), {share});
      }
    }
    for (int k = 0; k < 20; ++k) {
      const int cores = uniform(0, 10) * 10 - (uniform(0, 3) == 0 ? 5 : 0);
      const PodRequest pod = MakePod(
          "p",
          {GpuContainer("c", 1, uniform(1, 80) * 1024, std::max(0, cores))});
      const bool fits = MaySharesFit(pod, node, kDefaultSharingMode);
      const bool may = MaySharesFitHeadroom(pod, node.shape(), node.headroom());
      if (fits) EXPECT_TRUE(may) << "ruled out but fits";
      if (pod.containers[0].cores % 10 == 0 && pod.containers[0].cores < 100) {
        EXPECT_EQ(may, fits) << "cores " << pod.containers[0].cores;
      }
      if (!may) ++ruled_out;
    }
  }
  EXPECT_GT(ruled_out, 100);
}

}  // namespace
}  // namespace deviceshare
