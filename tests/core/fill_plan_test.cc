// FillPlan: the GPU fillings fragaware steers shares into, on mixes whose
// minimum-bin-slack packing is worked out by hand.
#include "deviceshare/policy/fragaware/fill_plan.h"

#include <cstdint>
#include <vector>

#include "deviceshare/policy/fragaware/workload_estimate.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/builders.h"

namespace deviceshare {
namespace {

using ::testing::ElementsAre;
using testing::GpuContainer;
using testing::MakePod;
using ::testing::Pair;
using testing::ShareOfOneGpu;

WorkloadShape Share(int32_t milli, double share, int32_t count = 1) {
  return WorkloadShape{.gpu_milli = milli, .gpu_count = count, .share = share};
}

// As many 810s as 160s: a thousand GPUs' worth (485 milli a pod, so 1,031
// of each) packs as 1,031 pairs of 970 milli, and a 160 belongs on an
// empty GPU or beside an 810 only.
TEST(FillPlanTest, PairsAnEightyOneWithASixteen) {
  const FillPlan plan = FillPlan::Of({Share(810, 0.5), Share(160, 0.5)});
  ASSERT_THAT(plan.fillings(),
              ElementsAre(Pair(std::vector<int32_t>{810, 160}, 1031)));
  EXPECT_TRUE(plan.Planned(0, 160));
  EXPECT_TRUE(plan.Planned(810, 160));
  EXPECT_TRUE(plan.Planned(0, 810));
  EXPECT_TRUE(plan.Planned(160, 810));
  EXPECT_FALSE(plan.Planned(160, 160));  // two 160s are no filling here
  EXPECT_FALSE(plan.Planned(470, 160));
  EXPECT_FALSE(plan.Planned(0, 470));  // a size the plan never placed
  EXPECT_TRUE(plan.Plans(160));
  EXPECT_FALSE(plan.Plans(470));
}

// Minimum bin slack: each GPU takes a 550 and the subset of the rest that
// fills its 450 most, 230 + 220. A 220 is
// planned on 0, 230, 550 and 780 used, never on 330 or 450.
TEST(FillPlanTest, ThreeSharesMakeEveryPartialSumALevel) {
  const FillPlan plan =
      FillPlan::Of({Share(550, 1), Share(230, 1), Share(220, 1)});
  ASSERT_THAT(plan.fillings(),
              ElementsAre(Pair(std::vector<int32_t>{550, 230, 220}, 1000)));
  for (const int32_t used : {0, 230, 550, 780}) {
    EXPECT_TRUE(plan.Planned(used, 220)) << used;
  }
  for (const int32_t used : {220, 330, 450, 770, 1000}) {
    EXPECT_FALSE(plan.Planned(used, 220)) << used;
  }
  EXPECT_TRUE(plan.Planned(770, 230));  // 550 + 220 on the GPU
  EXPECT_TRUE(plan.Planned(450, 550));  // 230 + 220
}

// Twice as many 470s as 650s and 320s: each 650 takes the 320 that fills
// its 350 most (30 left), then the 470s pair. Per 1,000 GPUs: 650 x 0.25 +
// 320 x 0.25 + 470 x 0.5 = 477.5 milli a pod, so 2,094 pods: 524 of each
// of 650 and 320 (524 GPUs) and 1,047 470s (523 pairs and one alone).
TEST(FillPlanTest, SizesPairAsMinimumSlackPacksThem) {
  const FillPlan plan =
      FillPlan::Of({Share(650, 0.25), Share(470, 0.5), Share(320, 0.25)});
  EXPECT_THAT(plan.fillings(),
              ElementsAre(Pair(std::vector<int32_t>{470}, 1),
                          Pair(std::vector<int32_t>{470, 470}, 523),
                          Pair(std::vector<int32_t>{650, 320}, 524)));
  EXPECT_TRUE(plan.Planned(650, 320));
  EXPECT_FALSE(plan.Planned(470, 320));  // 470 + 320 strands 210
  EXPECT_TRUE(plan.Planned(470, 470));
  EXPECT_FALSE(plan.Planned(320, 470));
}

// As many 550s, 320s, 230s and 220s (758 each in a thousand GPUs' worth):
// a 550 is filled to 1000 by 230 + 220, and the 320s go three to a GPU
// (252 times, then the last two). Best fit decreasing would put each 320
// beside a 550 (130 left) and the 230s and 220s four to a GPU.
TEST(FillPlanTest, MinimumSlackFillsGpusBestFitDecreasingWouldNot) {
  const FillPlan plan = FillPlan::Of(
      {Share(550, 1), Share(320, 1), Share(230, 1), Share(220, 1)});
  EXPECT_THAT(plan.fillings(),
              ElementsAre(Pair(std::vector<int32_t>{320, 320}, 1),
                          Pair(std::vector<int32_t>{320, 320, 320}, 252),
                          Pair(std::vector<int32_t>{550, 230, 220}, 758)));
  EXPECT_TRUE(plan.Planned(550, 220));
  EXPECT_FALSE(plan.Planned(550, 320));
  EXPECT_TRUE(plan.Planned(640, 320));
}

// Whole GPUs, multi-GPU shares, CPU-only pods and shapes of no share take
// no part; a mix of tiny shares plans at most 4,000 pods, not a thousand
// GPUs' worth (100,000 pods of 10 milli).
TEST(FillPlanTest, OnlySingleSharesArePlannedAndTinyOnesBounded) {
  EXPECT_TRUE(FillPlan::Of({}).empty());
  EXPECT_TRUE(FillPlan::Of({Share(1000, 0.5), Share(500, 0.3, 2),
                            WorkloadShape{.cpu_milli = 4000, .share = 0.2},
                            Share(300, 0)})
                  .empty());
  const FillPlan tiny = FillPlan::Of({Share(10, 1)});
  ASSERT_THAT(tiny.fillings(),
              ElementsAre(Pair(std::vector<int32_t>(100, 10), 40)));
  EXPECT_TRUE(tiny.Planned(990, 10));
  EXPECT_FALSE(tiny.Planned(1000, 10));
  EXPECT_FALSE(tiny.Planned(-10, 10));
  EXPECT_FALSE(tiny.Planned(995, 10));
}

// A GPU holding 810 waits for a 160: the node must keep the least CPU and
// memory a 160 was seen to ask. 970 held is complete: nothing is needed.
// A size whose needs are unknown (a fixed workload names no memory) needs
// what its shapes name.
TEST(FillPlanTest, APartnerNeedsTheLeastItsSizeAsked) {
  const FillPlan plan =
      FillPlan::Of({Share(810, 0.5), Share(160, 0.5)},
                   {{810, {.cpu_milli = 8000, .memory_mib = 32768}},
                    {160, {.cpu_milli = 2000, .memory_mib = 4096}}});
  EXPECT_TRUE(plan.PartnerFits(810, {2000, 4096}));
  EXPECT_FALSE(plan.PartnerFits(810, {1999, 4096}));
  EXPECT_FALSE(plan.PartnerFits(810, {2000, 4095}));
  EXPECT_TRUE(plan.PartnerFits(160, {8000, 32768}));
  EXPECT_FALSE(plan.PartnerFits(160, {7999, 1 << 20}));
  EXPECT_TRUE(plan.PartnerFits(970, {0, 0}));
  WorkloadShape hungry = Share(160, 0.5);
  hungry.cpu_milli = 3000;
  const FillPlan named = FillPlan::Of({Share(810, 0.5), hungry});
  EXPECT_FALSE(named.PartnerFits(810, {2999, 1 << 20}));
  EXPECT_TRUE(named.PartnerFits(810, {3000, 0}));
  EXPECT_TRUE(FillPlan().PartnerFits(810, {0, 0}));
}

TEST(FillPlanTest, SingleShareMilliIsTheShareOfOneGpuOnly) {
  EXPECT_EQ(SingleShareMilli(ShareOfOneGpu("s", 47)), 470);
  EXPECT_EQ(SingleShareMilli(MakePod("mib", {GpuContainer("c", 1, 4096)})), 10);
  EXPECT_EQ(SingleShareMilli(ShareOfOneGpu("whole", 100)), 0);
  EXPECT_EQ(SingleShareMilli(MakePod("two", {GpuContainer("c", 2, 0, 50)})), 0);
  EXPECT_EQ(SingleShareMilli(MakePod("a+b", {GpuContainer("a", 1, 0, 30),
                                             GpuContainer("b", 1, 0, 30)})),
            0);
  EXPECT_EQ(SingleShareMilli(MakePod("cpu", {})), 0);
}

}  // namespace
}  // namespace deviceshare
