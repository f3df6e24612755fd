// The packing bound on clusters whose best packing is known by hand.

#include "packing_bound.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

namespace deviceshare::bench {
namespace {

using ::testing::DoubleNear;
using ::testing::HasSubstr;

NodePool Pool(int64_t gpus, int64_t nodes = 1, const char* model = "A",
              int64_t cpu_milli = 64000) {
  return NodePool{cpu_milli, 262144, gpus, model, nodes};
}

PodGroup Share(int64_t milli, double count, int64_t cpu_milli = 1000) {
  return PodGroup{cpu_milli, 1024, 1, milli, {}, count};
}

PodGroup Whole(int64_t gpus, double count, int64_t cpu_milli = 1000) {
  return PodGroup{cpu_milli, 1024, gpus, 1000, {}, count};
}

double MostPlaced(const std::vector<NodePool>& pools,
                  const std::vector<PodGroup>& pods) {
  absl::StatusOr<PackingBound> bound = BoundPackedGpu(pools, pods);
  EXPECT_TRUE(bound.ok()) << bound.status();
  return bound.ok() ? bound->most_placed_milli : -1;
}

TEST(PackingBoundTest, SharesOverHalfAGpuTakeAGpuEach) {
  // Three 600s on two GPUs: two fit, 800 of 2,000 stay idle.
  absl::StatusOr<PackingBound> bound =
      BoundPackedGpu({Pool(2)}, {Share(600, 3)});
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_EQ(bound->capacity_milli, 2000);
  EXPECT_THAT(bound->most_placed_milli, DoubleNear(1200, 1e-6));
  EXPECT_THAT(bound->least_unallocated_percent(), DoubleNear(40, 1e-6));
}

TEST(PackingBoundTest, PairsSharesThatFillAGpu) {
  // 700 + 300 fill the GPU; the 400 waits, whatever order they came in.
  EXPECT_THAT(
      MostPlaced({Pool(1)}, {Share(700, 1), Share(400, 1), Share(300, 1)}),
      DoubleNear(1000, 1e-6));
  // 810s leave 190 each that only the 160 can use: 810 + 160 and one 810.
  EXPECT_THAT(MostPlaced({Pool(2)}, {Share(810, 3), Share(160, 1)}),
              DoubleNear(1780, 1e-6));
}

TEST(PackingBoundTest, CpuOfThePoolLimitsWholeGpuPods) {
  // Four GPUs but 4 CPUs: two 2-CPU pods.
  EXPECT_THAT(MostPlaced({Pool(4, 1, "A", 4000)}, {Whole(1, 3, 2000)}),
              DoubleNear(2000, 1e-6));
  // A pod asking more CPU than a node has never fits.
  EXPECT_THAT(MostPlaced({Pool(4, 2, "A", 4000)}, {Whole(1, 3, 5000)}),
              DoubleNear(0, 1e-6));
}

TEST(PackingBoundTest, MultiGpuPodsNeedNodesWithThatManyGpus) {
  EXPECT_THAT(MostPlaced({Pool(4, 3)}, {Whole(8, 1)}), DoubleNear(0, 1e-6));
  EXPECT_THAT(MostPlaced({Pool(4, 3), Pool(8, 1)}, {Whole(8, 2)}),
              DoubleNear(8000, 1e-6));
}

TEST(PackingBoundTest, PinnedPodsRunOnlyOnTheirModel) {
  PodGroup pinned = Whole(1, 2);
  pinned.models = {"A"};
  absl::StatusOr<PackingBound> bound =
      BoundPackedGpu({Pool(1, 1, "A"), Pool(1, 1, "B")}, {pinned});
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_THAT(bound->most_placed_milli, DoubleNear(1000, 1e-6));
  EXPECT_THAT(bound->least_unallocated_percent(), DoubleNear(50, 1e-6));
}

TEST(PackingBoundTest, NoGpuPodsPlaceNothing) {
  absl::StatusOr<PackingBound> bound =
      BoundPackedGpu({Pool(2)}, {PodGroup{4000, 1024, 0, 0, {}, 5}});
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_EQ(bound->most_placed_milli, 0);
  EXPECT_EQ(bound->least_unallocated_percent(), 100);
}

TEST(PackingBoundTest, BadInputNamesTheGroupAndTheField) {
  absl::StatusOr<PackingBound> bound =
      BoundPackedGpu({Pool(2)}, {Share(500, 1), Share(1200, 1)});
  ASSERT_FALSE(bound.ok());
  EXPECT_EQ(bound.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bound.status().message(), HasSubstr("pod group 1"));
  EXPECT_THAT(bound.status().message(), HasSubstr("gpu_milli 1200"));

  bound = BoundPackedGpu({Pool(2, 1, "A", -1)}, {Share(500, 1)});
  ASSERT_FALSE(bound.ok());
  EXPECT_THAT(bound.status().message(),
              HasSubstr("node pool 0: cpu_milli -1 is negative"));
}

}  // namespace
}  // namespace deviceshare::bench
