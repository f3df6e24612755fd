// The FGD fragmentation measure against the figures of FGD's own unit tests
// (hkust-adsl/kubernetes-scheduler-simulator, pkg/utils/frag_test.go:
// TestNodeGpuShareFragAmountScore, TestNodeGpuShareFragAmountWithNonGpu),
// restated here as our data: the same workloads and nodes, the same sums.
#include <cstdint>
#include <vector>

#include "deviceshare/policy/fgd/frag_model.h"
#include "gtest/gtest.h"

namespace deviceshare::fgd {
namespace {

TypicalPod Shape(int64_t cpu, int32_t milli, int32_t count, const char* model,
                 double percent) {
  TypicalPod pod{.cpu_milli = cpu, .gpu_milli = milli, .gpu_count = count};
  if (*model != '\0') pod.models = {model};
  pod.share = percent / 100.0;
  return pod;
}

// 35 shapes, 10 shared-GPU ones first (percentages as written upstream;
// they do not sum to 100).
std::vector<TypicalPod> SharingWorkload() {
  return {
      Shape(6000, 465, 1, "", 9.33),
      Shape(8000, 440, 1, "2080", 9.15),
      Shape(8000, 475, 1, "T4", 8.76),
      Shape(8000, 440, 1, "P100", 8.72),
      Shape(2000, 465, 1, "", 8.68),
      Shape(12000, 900, 1, "", 8.65),
      Shape(4000, 900, 1, "", 8.43),
      Shape(16000, 678, 1, "T4", 8.36),
      Shape(8000, 500, 1, "", 8.29),
      Shape(6000, 511, 1, "", 8.11),
      Shape(14000, 1000, 2, "2080", 0.54),
      Shape(4000, 1000, 1, "2080", 0.43),
      Shape(32000, 1000, 2, "T4", 0.43),
      Shape(16000, 1000, 1, "V100M16", 0.40),
      Shape(64000, 1000, 2, "", 0.40),
      Shape(10000, 1000, 2, "", 0.40),
      Shape(11400, 1000, 1, "T4", 0.36),
      Shape(16000, 1000, 1, "T4", 0.36),
      Shape(4000, 1000, 2, "", 0.36),
      Shape(14000, 1000, 2, "V100M16", 0.36),
      Shape(8000, 1000, 4, "", 0.36),
      Shape(16000, 1000, 2, "", 0.32),
      Shape(2000, 1000, 1, "T4", 0.32),
      Shape(6000, 1000, 1, "", 0.32),
      Shape(4000, 1000, 1, "", 0.32),
      Shape(5000, 1000, 1, "", 0.32),
      Shape(32000, 1000, 4, "V100M16", 0.32),
      Shape(32000, 1000, 2, "", 0.32),
      Shape(24000, 1000, 8, "2080", 0.32),
      Shape(40000, 1000, 4, "", 0.29),
      Shape(32000, 1000, 8, "", 0.29),
      Shape(32000, 1000, 1, "T4", 0.29),
      Shape(16000, 1000, 1, "", 0.25),
      Shape(7000, 1000, 1, "V100M16", 0.25),
      Shape(24000, 1000, 1, "T4", 0.25),
  };
}

// 31 shapes with CPU-only ones among them.
std::vector<TypicalPod> WorkloadWithCpuOnlyPods() {
  return {
      Shape(15700, 1000, 1, "", 28.69), Shape(11900, 1000, 1, "", 18.93),
      Shape(11400, 1000, 1, "", 12.27), Shape(1000, 0, 0, "", 7.36),
      Shape(18710, 1000, 1, "", 4.85),  Shape(8200, 1000, 1, "", 3.79),
      Shape(16400, 1000, 1, "", 3.31),  Shape(9810, 1000, 1, "", 1.97),
      Shape(15200, 1000, 1, "", 1.87),  Shape(11200, 1000, 1, "", 1.81),
      Shape(14200, 1000, 1, "", 1.76),  Shape(12000, 0, 0, "", 1.65),
      Shape(14900, 1000, 1, "", 1.39),  Shape(60200, 1000, 4, "", 1.23),
      Shape(64200, 1000, 8, "", 1.07),  Shape(32200, 1000, 4, "", 1.01),
      Shape(17400, 1000, 2, "", 0.91),  Shape(30200, 1000, 2, "", 0.69),
      Shape(16000, 1000, 1, "", 0.64),  Shape(15000, 1000, 1, "", 0.59),
      Shape(64000, 1000, 8, "", 0.53),  Shape(15000, 0, 0, "", 0.53),
      Shape(11910, 1000, 1, "", 0.53),  Shape(120200, 1000, 8, "", 0.48),
      Shape(11300, 1000, 1, "", 0.37),  Shape(30000, 1000, 2, "", 0.32),
      Shape(9800, 1000, 1, "", 0.32),   Shape(8000, 1000, 1, "", 0.32),
      Shape(2000, 1000, 1, "", 0.27),   Shape(2000, 80, 1, "", 0.27),
      Shape(1000, 1000, 1, "", 0.27),
  };
}

TEST(FgdFragModelTest, SharingWorkloadOnFourAndEightGpuNodes) {
  const std::vector<TypicalPod> workload = SharingWorkload();
  EXPECT_NEAR(FragMilli({1000, {200, 1000, 1000, 500}, "1080"}, workload),
              2566.62, 0.01);
  EXPECT_NEAR(FragMilli({1000, {1000, 1000, 1000, 1000}, "1080"}, workload),
              3802.40, 0.01);
  EXPECT_NEAR(
      FragMilli({1000, std::vector<int32_t>(8, 1000), "1080"}, workload),
      7604.80, 0.01);
}

TEST(FgdFragModelTest, APodShortOfCpuMakesAllIdleGpuFragment) {
  const FragNode node{1000, {200, 1000, 1000, 500}, "1080"};
  const TypicalPod pod = Shape(6000, 465, 1, "", 9.33);
  EXPECT_EQ(Classify(node, pod), FragClass::kLackCpu);
  EXPECT_EQ(IdleMilli(node), 2700);
  EXPECT_NEAR(FragMilli(node, {pod}), 251.91, 0.01);
}

TEST(FgdFragModelTest, CpuOnlyPodsCountEveryIdleGpu) {
  const std::vector<TypicalPod> workload = WorkloadWithCpuOnlyPods();
  const std::vector<int32_t> half = {1000, 1000, 1000, 1000, 0, 0, 0, 0};
  EXPECT_NEAR(
      FragMilli({64000, std::vector<int32_t>(8, 1000), "P100"}, workload),
      887.20, 0.01);
  EXPECT_NEAR(FragMilli({32000, half, "P100"}, workload), 554.4, 0.01);
  EXPECT_NEAR(FragMilli({0, half, "P100"}, workload), 4000, 0.01);
}

TEST(FgdFragModelTest, ClassesByHand) {
  const FragNode node{8000, {300, 1000, 0}, "T4"};
  // Fits on GPU 1 alone; GPU 0's 300 is what it cannot use.
  const TypicalPod half = Shape(4000, 500, 1, "", 100);
  EXPECT_EQ(Classify(node, half), FragClass::kSatisfied);
  EXPECT_EQ(FragMilliFor(node, half), 300);
  // Two whole GPUs: only one is free.
  EXPECT_EQ(Classify(node, Shape(4000, 1000, 2, "", 1)), FragClass::kLackGpu);
  EXPECT_EQ(Classify(node, Shape(9000, 1000, 2, "", 1)), FragClass::kLackBoth);
  EXPECT_EQ(Classify(node, Shape(9000, 0, 0, "", 1)),
            FragClass::kCpuOnlyLacksCpu);
  EXPECT_EQ(Classify(node, Shape(100, 0, 0, "", 1)), FragClass::kCpuOnlyFits);
  EXPECT_EQ(FragMilliFor(node, Shape(100, 0, 0, "", 1)), 1300);
  // Models: as the scheduler matches them (a case-insensitive substring),
  // an empty name ignored, none = any.
  TypicalPod pinned = Shape(1000, 500, 1, "V100M16", 1);
  EXPECT_EQ(Classify(node, pinned), FragClass::kNoAccess);
  pinned.models = {"V100M16", "T4"};
  EXPECT_EQ(Classify(node, pinned), FragClass::kSatisfied);
  pinned.models = {"t4"};
  EXPECT_EQ(Classify(node, pinned), FragClass::kSatisfied);
  pinned.models = {"", "T40"};
  EXPECT_EQ(Classify(node, pinned), FragClass::kNoAccess);
  pinned.models = {""};
  EXPECT_EQ(Classify(node, pinned), FragClass::kSatisfied);
  EXPECT_EQ(Classify(FragNode{8000, {}, ""}, Shape(1000, 500, 1, "T4", 1)),
            FragClass::kNoAccess);
}

// A shape counted by CPU (fragaware's shares) also loses the GPUs the
// pods its node's CPU holds cannot reach. 470-milli pods of 11 CPUs on
// [1000, 1000, 1000, 1000, 500]: all five GPUs hold one (4,500 milli
// fitting, room for ten pods), but 44 CPUs hold four, 1,880 milli, so
// 2,620 is lost to them; 110 CPUs hold all ten, and under 11 CPUs the
// shape does not fit at all (all 4,500 idle). FGD's shape checks one pod.
TEST(FgdFragModelTest, CountedByCpuLosesWhatItsPodsCannotReach) {
  TypicalPod counted = Shape(11000, 470, 1, "", 100);
  counted.counted_by_cpu = true;
  TypicalPod fgd = counted;
  fgd.counted_by_cpu = false;
  const std::vector<int32_t> left = {1000, 1000, 1000, 1000, 500};
  EXPECT_EQ(FragMilliFor(FragNode{44000, left, "G2"}, counted), 2620);
  EXPECT_EQ(FragMilliFor(FragNode{44000, left, "G2"}, fgd), 0);
  EXPECT_EQ(FragMilliFor(FragNode{110000, left, "G2"}, counted), 0);
  EXPECT_EQ(FragMilliFor(FragNode{10999, left, "G2"}, counted), 4500);
  // GPUs too small for the shape count as before: [300, 1000] with room
  // for one pod keeps 300 + (1000 - 470).
  EXPECT_EQ(FragMilliFor(FragNode{11000, {300, 1000}, "G2"}, counted), 830);
  // Untracked CPU (the memo's 2^60) never runs short.
  EXPECT_EQ(FragMilliFor(FragNode{int64_t{1} << 60, left, "G2"}, counted), 0);
}

}  // namespace
}  // namespace deviceshare::fgd
