// A policy added from outside the library: one file (this one), one
// Register() call, then selected by name from the config or a pod, with no
// other source touched.
#include <memory>

#include "deviceshare/builtin_backends.h"
#include "deviceshare/config/config_parser.h"
#include "deviceshare/policy/placement_policy.h"
#include "deviceshare/policy/policy_registry.h"
#include "deviceshare/scheduler/scheduler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::GpuContainer;
using ::deviceshare::testing::MakeNode;
using ::deviceshare::testing::MakePod;
using ::testing::ElementsAre;

constexpr int64_t kGiB = 1024;

// Every candidate scores the same, so the decision path's tie-breaks pick
// the first node by name and the lowest GPU index that fit.
class FirstFitPolicy final : public PlacementPolicy {
 public:
  absl::string_view name() const override { return "first-fit"; }
  int GpuScore(const DeviceLedger&, const PodCharge&) const override {
    return 0;
  }
  int NodeScore(const NodeState&, const PodAllocation&) const override {
    return 0;
  }
  int ScoreBound(const UtilisationRange&) const override { return 0; }
};

PolicyRegistry WithFirstFit() {
  PolicyRegistry registry;
  EXPECT_OK(RegisterBuiltinPolicies(registry));
  EXPECT_OK(registry.Register(
      "first-fit",
      [](const Config&) -> absl::StatusOr<std::unique_ptr<PlacementPolicy>> {
        return std::make_unique<FirstFitPolicy>();
      }));
  return registry;
}

std::unique_ptr<Scheduler> MakeScheduler(const std::string& config_yaml) {
  absl::StatusOr<Config> config = ParseConfigYaml(config_yaml);
  EXPECT_OK(config);
  BackendRegistry backends;
  EXPECT_OK(RegisterBuiltinBackends(backends));
  auto scheduler = Scheduler::Create(*config, backends, WithFirstFit());
  EXPECT_OK(scheduler);
  if (!scheduler.ok()) return nullptr;
  // "b" is fuller than "a" (its GPU 0 holds a resident), so binpack
  // prefers node b and, on a, would take GPU 0 only if it were fuller.
  EXPECT_OK((*scheduler)->UpsertNode(MakeNode("b", 2)));
  EXPECT_OK((*scheduler)->UpsertNode(MakeNode("a", 2)));
  PodRequest resident = MakePod("resident", {GpuContainer("c", 1, 40 * kGiB)});
  resident.use_uuids = {"GPU-b-1"};
  EXPECT_OK((*scheduler)->Schedule(resident));
  return *std::move(scheduler);
}

std::string NodeOf(Scheduler& scheduler, const PodRequest& pod) {
  absl::StatusOr<Decision> decision = scheduler.Schedule(pod);
  EXPECT_OK(decision);
  if (!decision.ok() || !decision->allocation) return "";
  return decision->allocation->node_name;
}

TEST(FirstFitPolicyTest, SelectedFromTheConfig) {
  auto scheduler = MakeScheduler(
      "scheduler: {nodePolicy: first-fit, gpuPolicy: first-fit}\n");
  ASSERT_NE(scheduler, nullptr);
  PodRequest pod = MakePod("p", {GpuContainer("c", 1, 10 * kGiB)});
  absl::StatusOr<Decision> decision = scheduler->Schedule(pod);
  ASSERT_OK(decision);
  ASSERT_TRUE(decision->allocation.has_value());
  EXPECT_EQ(decision->allocation->node_name, "a");
  EXPECT_EQ(decision->score, 0);
  ASSERT_THAT(decision->allocation->containers, ::testing::SizeIs(1));
  EXPECT_EQ(decision->allocation->containers[0].devices[0].gpu_index, 0);
}

TEST(FirstFitPolicyTest, BinpackByDefaultFirstFitPerPod) {
  auto scheduler = MakeScheduler("scheduler: {nodePolicy: binpack}\n");
  ASSERT_NE(scheduler, nullptr);
  EXPECT_EQ(NodeOf(*scheduler, MakePod("packed", {GpuContainer("c", 1, kGiB)})),
            "b");
  PodRequest pod = MakePod("first", {GpuContainer("c", 1, kGiB)});
  pod.node_policy = "first-fit";
  EXPECT_EQ(NodeOf(*scheduler, pod), "a");
}

TEST(FirstFitPolicyTest, TheGpuLevelTooPicksTheLowestIndexThatFits) {
  auto scheduler =
      MakeScheduler("scheduler: {nodePolicy: binpack, gpuPolicy: first-fit}\n");
  ASSERT_NE(scheduler, nullptr);
  // Binpack at GPU level would put it beside the resident on GPU-b-1.
  absl::StatusOr<Decision> decision =
      scheduler->Schedule(MakePod("p", {GpuContainer("c", 1, 10 * kGiB)}));
  ASSERT_OK(decision);
  ASSERT_TRUE(decision->allocation.has_value());
  EXPECT_EQ(decision->allocation->node_name, "b");
  std::vector<std::string> uuids;
  for (const DeviceGrant& grant : decision->allocation->containers[0].devices) {
    uuids.push_back(grant.uuid);
  }
  EXPECT_THAT(uuids, ElementsAre("GPU-b-0"));
}

TEST(FirstFitPolicyTest, UnregisteredWithoutTheRegistration) {
  absl::StatusOr<Config> config =
      ParseConfigYaml("scheduler: {nodePolicy: first-fit}\n");
  ASSERT_OK(config);
  BackendRegistry backends;
  ASSERT_OK(RegisterBuiltinBackends(backends));
  EXPECT_THAT(Scheduler::Create(*config, backends),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                ::testing::HasSubstr("first-fit")));
}

}  // namespace
}  // namespace deviceshare
