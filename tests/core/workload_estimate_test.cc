// WorkloadEstimate: what fragaware learns from the pods it sees.
#include "deviceshare/policy/fragaware/workload_estimate.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/builders.h"

namespace deviceshare {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::Field;
using testing::GpuContainer;
using ::testing::IsEmpty;
using testing::MakePod;
using testing::ShareOfOneGpu;

TEST(WorkloadEstimateTest, ShapeOfPodReadsShareCountCpuAndModels) {
  PodRequest share = ShareOfOneGpu("s", 30);
  share.cpu_milli = 4000;
  share.use_models = {"A100"};
  EXPECT_EQ(ShapeOfPod(share), (WorkloadShape{.cpu_milli = 4000,
                                              .gpu_milli = 300,
                                              .gpu_count = 1,
                                              .models = {"A100"}}));
  // Memory percent above cores: the larger binds.
  PodRequest memory = MakePod("m", {GpuContainer("c", 1, 0, 20)});
  memory.containers[0].memory_percent = 45;
  EXPECT_EQ(ShapeOfPod(memory).gpu_milli, 450);
  // Whole GPUs over two containers; an init container does not count.
  PodRequest whole =
      MakePod("w", {GpuContainer("a", 2, 0, 100), GpuContainer("b", 1, 0, 100),
                    GpuContainer("init", 4, 0, 100)});
  whole.containers[2].is_init = true;
  EXPECT_EQ(ShapeOfPod(whole).gpu_count, 3);
  EXPECT_EQ(ShapeOfPod(whole).gpu_milli, 1000);
  // Memory in MiB only: some of a GPU.
  EXPECT_EQ(ShapeOfPod(MakePod("mib", {GpuContainer("c", 1, 4096)})).gpu_milli,
            10);
  // No GPU: CPU-only, and models do not matter.
  PodRequest cpu = MakePod("cpu", {});
  cpu.cpu_milli = 2000;
  cpu.use_models = {"A100"};
  EXPECT_EQ(ShapeOfPod(cpu), (WorkloadShape{.cpu_milli = 2000}));
}

TEST(WorkloadEstimateTest, CountsEachPodOnceAndSharesByCount) {
  WorkloadEstimate estimate;
  EXPECT_THAT(estimate.Snapshot()->shapes, IsEmpty());
  const uint64_t empty_id = estimate.Snapshot()->id;
  for (int i = 0; i < 3; ++i) {
    estimate.Observe(ShareOfOneGpu("half-" + std::to_string(i), 50));
  }
  estimate.Observe(ShareOfOneGpu("half-0", 50));  // a retry: not again
  estimate.Observe(ShareOfOneGpu("quarter", 25));
  EXPECT_EQ(estimate.pods_counted(), 4);
  const auto snapshot = estimate.Snapshot();
  EXPECT_NE(snapshot->id, empty_id);
  EXPECT_THAT(
      snapshot->shapes,
      ElementsAre(AllOf(Field(&WorkloadShape::gpu_milli, 500),
                        Field(&WorkloadShape::share, DoubleNear(0.75, 1e-9))),
                  AllOf(Field(&WorkloadShape::gpu_milli, 250),
                        Field(&WorkloadShape::share, DoubleNear(0.25, 1e-9)))));
}

// After the first 16 pods the estimate is rebuilt when the count has grown
// by a sixteenth: the snapshot a decision reads changes rarely.
TEST(WorkloadEstimateTest, RebuildsGeometrically) {
  WorkloadEstimate estimate;
  int rebuilds = 0;
  uint64_t last = estimate.Snapshot()->id;
  for (int i = 0; i < 1000; ++i) {
    estimate.Observe(ShareOfOneGpu("p-" + std::to_string(i), 10 + i % 5));
    if (estimate.Snapshot()->id != last) {
      ++rebuilds;
      last = estimate.Snapshot()->id;
    }
  }
  EXPECT_EQ(estimate.pods_counted(), 1000);
  // 16, then about ln(1000 / 16) / ln(17 / 16) = 68 more (integer steps
  // below 32 pods make it a few more): 92 of 1,000 pods.
  EXPECT_EQ(rebuilds, 92);
  double total = 0;
  for (const WorkloadShape& shape : estimate.Snapshot()->shapes) {
    total += shape.share;
  }
  EXPECT_NEAR(total, 1.0, 1e-9);
}

// Rare shapes count (every shape, not FGD's most popular 95 %), and the
// owner's weights apply to each snapshot.
TEST(WorkloadEstimateTest, KeepsRareShapesAndAppliesTheOwnersWeights) {
  WorkloadEstimate estimate(+[](std::vector<WorkloadShape> shapes) {
    for (WorkloadShape& shape : shapes) shape.share = 0.5;
    return shapes;
  });
  // The 40th pod is rare (2.5 %); 40 is a rebuild (32, 34, 36, 38, 40).
  for (int i = 0; i < 39; ++i) {
    estimate.Observe(ShareOfOneGpu("common-" + std::to_string(i), 50));
  }
  estimate.Observe(ShareOfOneGpu("rare", 10));
  EXPECT_THAT(
      estimate.Snapshot()->shapes,
      ElementsAre(AllOf(Field(&WorkloadShape::gpu_milli, 500),
                        Field(&WorkloadShape::share, DoubleNear(0.5, 1e-9))),
                  AllOf(Field(&WorkloadShape::gpu_milli, 100),
                        Field(&WorkloadShape::share, DoubleNear(0.5, 1e-9)))));
}

}  // namespace
}  // namespace deviceshare
