#include <vector>

#include "deviceshare/policy/fgd/typical_pods.h"
#include "gtest/gtest.h"

namespace deviceshare::fgd {
namespace {

TypicalPod Pod(int64_t cpu, int32_t milli, int32_t count,
               std::vector<std::string> models = {}) {
  return TypicalPod{.cpu_milli = cpu,
                    .gpu_milli = milli,
                    .gpu_count = count,
                    .models = std::move(models)};
}

void Add(std::vector<TypicalPod>& pods, int n, const TypicalPod& pod) {
  for (int i = 0; i < n; ++i) pods.push_back(pod);
}

TEST(FgdTypicalPodsTest, MostFrequentShapesUntilTheThresholdRenormalised) {
  std::vector<TypicalPod> pods;
  Add(pods, 50, Pod(4000, 500, 1));
  Add(pods, 30, Pod(8000, 1000, 2));
  Add(pods, 15, Pod(1000, 0, 0));
  Add(pods, 5, Pod(2000, 250, 1, {"T4"}));
  // 50 + 30 = 80 < 90; + 15 = 95 >= 90: three shapes, shares of 95.
  const std::vector<TypicalPod> typical = TypicalPodsOf(pods, 90);
  ASSERT_EQ(typical.size(), 3u);
  EXPECT_EQ(typical[0].cpu_milli, 4000);
  EXPECT_DOUBLE_EQ(typical[0].share, 50.0 / 95);
  EXPECT_EQ(typical[1].gpu_count, 2);
  EXPECT_DOUBLE_EQ(typical[1].share, 30.0 / 95);
  EXPECT_EQ(typical[2].gpu_milli, 0);
  EXPECT_DOUBLE_EQ(typical[2].share, 15.0 / 95);
  // 96 % needs the last shape too; the shares are then the plain ones.
  const std::vector<TypicalPod> all = TypicalPodsOf(pods, 96);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[3].models, std::vector<std::string>{"T4"});
  EXPECT_DOUBLE_EQ(all[3].share, 0.05);
}

TEST(FgdTypicalPodsTest, EqualCountsTakeTheLargerShapeFirst) {
  std::vector<TypicalPod> pods;
  Add(pods, 2, Pod(1000, 500, 1, {"A"}));
  Add(pods, 2, Pod(1000, 500, 1, {"B"}));
  Add(pods, 2, Pod(1000, 600, 1));
  Add(pods, 2, Pod(3000, 100, 1));
  const std::vector<TypicalPod> typical = TypicalPodsOf(pods, 100);
  ASSERT_EQ(typical.size(), 4u);
  EXPECT_EQ(typical[0].cpu_milli, 3000);
  EXPECT_EQ(typical[1].gpu_milli, 600);
  EXPECT_EQ(typical[2].models, std::vector<std::string>{"B"});
  EXPECT_EQ(typical[3].models, std::vector<std::string>{"A"});
}

TEST(FgdTypicalPodsTest, NoPodsNoShapes) {
  EXPECT_TRUE(TypicalPodsOf({}).empty());
}

}  // namespace
}  // namespace deviceshare::fgd
