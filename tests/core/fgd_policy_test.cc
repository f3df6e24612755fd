// The fgd policy on clusters whose answer is worked out by hand.
#include "deviceshare/policy/fgd/fgd_policy.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "deviceshare/builtin_backends.h"
#include "deviceshare/model/units.h"
#include "deviceshare/scheduler/scheduler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using testing::GpuContainer;
using testing::MakeConfig;
using testing::MakeNode;
using testing::MakePod;
using testing::ShareOfOneGpu;

std::unique_ptr<Scheduler> SchedulerWith(const std::string& policy,
                                         std::vector<WorkloadShape> typical) {
  Config config = MakeConfig(policy, policy);
  config.scheduler.typical_workload = std::move(typical);
  BackendRegistry backends;
  EXPECT_OK(RegisterBuiltinBackends(backends));
  auto scheduler = Scheduler::Create(config, backends);
  EXPECT_OK(scheduler);
  return scheduler.ok() ? *std::move(scheduler) : nullptr;
}

WorkloadShape Typical(int32_t milli, int32_t count = 1) {
  return WorkloadShape{
      .cpu_milli = 0, .gpu_milli = milli, .gpu_count = count, .share = 1.0};
}

std::string GpuOf(const Decision& decision) {
  return decision.allocation->containers.at(0).devices.at(0).uuid;
}

TEST(FgdPolicyTest, MilliLeftAndScore) {
  EXPECT_EQ(fgd::MilliLeft(50, 100, 40960, 81920), 500);
  EXPECT_EQ(fgd::MilliLeft(60, 100, 81920, 81920), 600);  // cores bind
  EXPECT_EQ(fgd::MilliLeft(100, 100, 8192, 81920), 100);  // memory binds
  EXPECT_EQ(fgd::MilliLeft(-5, 100, 8192, 81920), 0);
  EXPECT_EQ(fgd::FgdScore(500, 0), 62);
  EXPECT_EQ(fgd::FgdScore(0, 500), 37);
  EXPECT_EQ(fgd::FgdScore(0, 0), 50);
}

// MilliLeft rounds memory in integers; it must give what std::llround of
// the double quotient gave for every memory left on GPUs of common sizes
// (halves included: 15360 MiB has them), and on odd ones.
TEST(FgdPolicyTest, MilliLeftRoundsAsTheDoubleQuotient) {
  for (int64_t capacity :
       {int64_t{81920}, int64_t{40960}, int64_t{32768}, int64_t{24576},
        int64_t{23028}, int64_t{16384}, int64_t{15360}, int64_t{11441},
        int64_t{3}, int64_t{1}}) {
    for (int64_t free = -capacity; free <= capacity; ++free) {
      const int64_t want = std::clamp<int64_t>(
          std::llround(static_cast<double>(free) * 1000 / capacity), 0, 1000);
      ASSERT_EQ(fgd::MilliLeft(100, 100, free, capacity), want)
          << free << " of " << capacity;
    }
  }
}

// One node, GPU 0 with 600 milli left, GPU 1 free; the workload is 500-milli
// pods. A 400-milli pod on GPU 0 leaves [200, 1000]: 200 no typical pod can
// use (F = 200, score 45); on GPU 1 it leaves [600, 600] (F = 0, score 50).
// Binpack takes the fuller GPU 0; fgd takes GPU 1.
TEST(FgdPolicyTest, ShareGoesWhereItStrandsLeast) {
  for (const auto& [policy, want_gpu, want_score] :
       {std::tuple<std::string, std::string, int>{"fgd", "GPU-a-1", 50},
        {"binpack", "GPU-a-0", -1}}) {
    SCOPED_TRACE(policy);
    std::unique_ptr<Scheduler> scheduler =
        SchedulerWith(policy, {Typical(500)});
    ASSERT_NE(scheduler, nullptr);
    ASSERT_OK(scheduler->UpsertNode(MakeNode("a", 2)));
    PodRequest resident = ShareOfOneGpu("resident", 40);
    resident.use_uuids = {"GPU-a-0"};
    ASSERT_OK(scheduler->Schedule(resident));
    absl::StatusOr<Decision> decision =
        scheduler->Schedule(ShareOfOneGpu("p", 40));
    ASSERT_OK(decision);
    ASSERT_TRUE(decision->allocation.has_value());
    EXPECT_EQ(GpuOf(*decision), want_gpu);
    if (want_score >= 0) {
      EXPECT_EQ(decision->score, want_score);
    }
  }
}

// Whole-GPU workload. Node a holds half a GPU: a half share there frees it
// of the stranded half (before [500, 1000], F = 500; after [0, 1000], F = 0:
// score 62); on empty node b it would strand a half (F 0 -> 500: 37).
TEST(FgdPolicyTest, NodeWhoseHalfGpuTheShareFills) {
  std::unique_ptr<Scheduler> scheduler = SchedulerWith("fgd", {Typical(1000)});
  ASSERT_NE(scheduler, nullptr);
  ASSERT_OK(scheduler->UpsertNode(MakeNode("b", 2)));
  ASSERT_OK(scheduler->UpsertNode(MakeNode("a", 2)));
  PodRequest resident = ShareOfOneGpu("resident", 50);
  resident.use_uuids = {"GPU-b-1"};
  ASSERT_OK(scheduler->Schedule(resident));
  absl::StatusOr<Decision> decision =
      scheduler->Schedule(ShareOfOneGpu("p", 50));
  ASSERT_OK(decision);
  ASSERT_TRUE(decision->allocation.has_value());
  EXPECT_EQ(GpuOf(*decision), "GPU-b-1");
  EXPECT_EQ(decision->score, 62);
}

// Whole GPUs go lowest index first, as FGD's simulator takes them.
TEST(FgdPolicyTest, WholeGpusLowestIndexFirst) {
  std::unique_ptr<Scheduler> scheduler = SchedulerWith("fgd", {Typical(500)});
  ASSERT_NE(scheduler, nullptr);
  ASSERT_OK(scheduler->UpsertNode(MakeNode("a", 4)));
  PodRequest resident = ShareOfOneGpu("resident", 30);
  resident.use_uuids = {"GPU-a-1"};
  ASSERT_OK(scheduler->Schedule(resident));
  absl::StatusOr<Decision> decision =
      scheduler->Schedule(MakePod("whole", {GpuContainer("c", 2, 81920, 100)}));
  ASSERT_OK(decision);
  ASSERT_TRUE(decision->allocation.has_value());
  const auto& devices = decision->allocation->containers.at(0).devices;
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].uuid, "GPU-a-0");
  EXPECT_EQ(devices[1].uuid, "GPU-a-2");
}

// Without a workload every node scores 50 and nothing breaks.
TEST(FgdPolicyTest, NoWorkloadScoresFifty) {
  std::unique_ptr<Scheduler> scheduler = SchedulerWith("fgd", {});
  ASSERT_NE(scheduler, nullptr);
  ASSERT_OK(scheduler->UpsertNode(MakeNode("a", 1)));
  absl::StatusOr<Decision> decision =
      scheduler->Schedule(ShareOfOneGpu("p", 30));
  ASSERT_OK(decision);
  ASSERT_TRUE(decision->allocation.has_value());
  EXPECT_EQ(decision->score, 50);
}

}  // namespace
}  // namespace deviceshare
