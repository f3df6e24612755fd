// bestfit and packing, FGD's baselines, on nodes worked out by hand.
#include "deviceshare/policy/baselines/fgd_baselines.h"

#include <memory>
#include <string>

#include "deviceshare/builtin_backends.h"
#include "deviceshare/scheduler/scheduler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using testing::MakeConfig;
using testing::MakeNode;
using testing::ShareOfOneGpu;

// Nodes "a" (GPU 0 half used: [500, 1000] milli left), "b" (all free) and,
// with `third`, "c" (GPU 0 at 70 %: [300, 1000]). MakeNode tracks no CPU, so
// bestfit weighs GPUs alone.
std::unique_ptr<Scheduler> Cluster(const std::string& policy, bool third) {
  BackendRegistry backends;
  EXPECT_OK(RegisterBuiltinBackends(backends));
  auto scheduler = Scheduler::Create(MakeConfig(policy, policy), backends);
  EXPECT_OK(scheduler);
  if (!scheduler.ok()) return nullptr;
  std::vector<std::pair<std::string, int>> used = {{"a", 50}, {"b", 0}};
  if (third) used.push_back({"c", 70});
  for (const auto& [name, percent] : used) {
    EXPECT_OK((*scheduler)->UpsertNode(MakeNode(name, 2)));
    if (percent == 0) continue;
    PodRequest resident = ShareOfOneGpu("resident-" + name, percent);
    resident.use_uuids = {"GPU-" + name + "-0"};
    EXPECT_OK((*scheduler)->Schedule(resident));
  }
  return *std::move(scheduler);
}

std::string GpuOf(const Decision& decision) {
  return decision.allocation->containers.at(0).devices.at(0).uuid;
}

// A half share: on a, 1000 milli left after (int(100 x (1 - 0.5 x 1000 /
// 8000)) = 93); on b, 1500 (90). The tightest GPU of a is GPU 0.
TEST(FgdBaselinesTest, BestfitTakesTheNodeLeftLeastAndItsTightestGpu) {
  std::unique_ptr<Scheduler> scheduler = Cluster("bestfit", false);
  ASSERT_NE(scheduler, nullptr);
  absl::StatusOr<Decision> decision =
      scheduler->Schedule(ShareOfOneGpu("p", 50));
  ASSERT_OK(decision);
  ASSERT_TRUE(decision->allocation.has_value());
  EXPECT_EQ(GpuOf(*decision), "GPU-a-0");
  EXPECT_EQ(decision->score, 93);
}

// A 30 % share: on a it fits GPU 0, in use (100 - 50 / 10 = 95); on c its
// 300 left fit too (100 - 30 / 10 = 97); on b, all free: max(33 - 2, 2) = 31.
TEST(FgdBaselinesTest, PackingPrefersTheUsedGpuWithLeastLeft) {
  std::unique_ptr<Scheduler> scheduler = Cluster("packing", true);
  ASSERT_NE(scheduler, nullptr);
  absl::StatusOr<Decision> decision =
      scheduler->Schedule(ShareOfOneGpu("p", 30));
  ASSERT_OK(decision);
  ASSERT_TRUE(decision->allocation.has_value());
  EXPECT_EQ(GpuOf(*decision), "GPU-c-0");
  EXPECT_EQ(decision->score, 97);
}

// A 40 % share no used GPU of c can take: c must open a free GPU
// (max(50 - 1, 33) = 49), a still fits its used GPU 0 (95).
TEST(FgdBaselinesTest, PackingOpensAFreeGpuOnlyWhenItMust) {
  std::unique_ptr<Scheduler> scheduler = Cluster("packing", true);
  ASSERT_NE(scheduler, nullptr);
  absl::StatusOr<Decision> decision =
      scheduler->Schedule(ShareOfOneGpu("p", 40));
  ASSERT_OK(decision);
  ASSERT_TRUE(decision->allocation.has_value());
  EXPECT_EQ(GpuOf(*decision), "GPU-a-0");
  EXPECT_EQ(decision->score, 95);
  // Now a's GPU 0 has 100 left: a and c must each open a free GPU (49
  // each, against b's 31); the tie goes to the smaller name.
  decision = scheduler->Schedule(ShareOfOneGpu("q", 40));
  ASSERT_OK(decision);
  ASSERT_TRUE(decision->allocation.has_value());
  EXPECT_EQ(GpuOf(*decision), "GPU-a-1");
  EXPECT_EQ(decision->score, 49);
}

}  // namespace
}  // namespace deviceshare
