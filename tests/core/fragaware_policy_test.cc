// The fragaware policy on clusters whose answer is worked out by hand: its
// learned workload, a fixed one, model-pinned pods and the node budget.
#include "deviceshare/policy/fragaware/fragaware_policy.h"

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "deviceshare/builtin_backends.h"
#include "deviceshare/policy/fragaware/workload_estimate.h"
#include "deviceshare/scheduler/scheduler.h"
#include "deviceshare/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using testing::MakeConfig;
using testing::MakeNode;
using testing::ShareOfOneGpu;

std::unique_ptr<Scheduler> SchedulerWith(Config config) {
  BackendRegistry backends;
  EXPECT_OK(RegisterBuiltinBackends(backends));
  auto scheduler = Scheduler::Create(config, backends);
  EXPECT_OK(scheduler);
  return scheduler.ok() ? *std::move(scheduler) : nullptr;
}

Config FragawareConfig(std::vector<WorkloadShape> typical = {},
                       int64_t nodes_to_score = 0) {
  Config config = MakeConfig("fragaware", "fragaware");
  config.scheduler.typical_workload = std::move(typical);
  config.scheduler.nodes_to_score = nodes_to_score;
  return config;
}

WorkloadShape Typical(int32_t milli, std::vector<std::string> models = {}) {
  return WorkloadShape{.cpu_milli = 0,
                       .gpu_milli = milli,
                       .gpu_count = 1,
                       .models = std::move(models),
                       .share = 1.0};
}
WorkloadShape Typical(int32_t milli, double share) {
  WorkloadShape shape = Typical(milli);
  shape.share = share;
  return shape;
}

PodRequest PinnedShare(const std::string& name, int percent,
                       const std::string& uuid) {
  PodRequest pod = ShareOfOneGpu(name, percent);
  pod.use_uuids = {uuid};
  return pod;
}

const DeviceGrant& FirstGrant(const Decision& decision) {
  return decision.allocation->containers.at(0).devices.at(0);
}

// Where `policy` (node and GPU level) puts a share of `pod_percent` on node
// a (2 GPUs) that holds `resident_percent` on GPU a-0, given `workload`.
absl::StatusOr<Decision> PlaceBesideResident(
    const std::string& policy, std::vector<WorkloadShape> workload,
    int resident_percent, int pod_percent) {
  Config config = MakeConfig(policy, policy);
  config.scheduler.typical_workload = std::move(workload);
  std::unique_ptr<Scheduler> scheduler = SchedulerWith(config);
  if (scheduler == nullptr) return absl::InternalError("no scheduler");
  DS_RETURN_IF_ERROR(scheduler->UpsertNode(MakeNode("a", 2)).status());
  DS_RETURN_IF_ERROR(
      scheduler->Schedule(PinnedShare("resident", resident_percent, "GPU-a-0"))
          .status());
  return scheduler->Schedule(ShareOfOneGpu("p", pod_percent));
}

// Node z (5 GPUs) is filled by ten half shares the policy learns from;
// node a holds a 40 % share on GPU 0. Learned workload: 10 pods of 500
// milli, then the resident and p, 2 of 400: shares 10/12 and 2/12. A 40 %
// pod on GPU a-0 leaves [200, 1000]: 200 that neither shape can use (F 0 ->
// 200, score 45); on a-1 it leaves [600, 600] (F 0 -> 0, score 50). Both
// are planned (the 400s pair, fill_plan.h), so the measure decides: learned
// fragaware takes a-1 (binpack would take the fuller a-0), scoring 51 + 50
// x 49 / 100 = 75.
TEST(FragawarePolicyTest, LearnsTheWorkloadFromThePodsItSees) {
  std::unique_ptr<Scheduler> scheduler = SchedulerWith(FragawareConfig());
  ASSERT_NE(scheduler, nullptr);
  ASSERT_OK(scheduler->UpsertNode(MakeNode("a", 2)));
  ASSERT_OK(scheduler->UpsertNode(MakeNode("z", 5)));
  for (int i = 0; i < 10; ++i) {
    ASSERT_OK(scheduler->Schedule(PinnedShare(
        "learn-" + std::to_string(i), 50, "GPU-z-" + std::to_string(i / 2))));
  }
  ASSERT_OK(scheduler->Schedule(PinnedShare("resident", 40, "GPU-a-0")));
  absl::StatusOr<Decision> decision =
      scheduler->Schedule(ShareOfOneGpu("p", 40));
  ASSERT_OK(decision);
  ASSERT_TRUE(decision->allocation.has_value());
  EXPECT_EQ(FirstGrant(*decision).uuid, "GPU-a-1");
  EXPECT_EQ(decision->score, 75);
}

// The same cluster with the workload fixed to whole GPUs: on a-0 the pod
// turns 600 stranded milli into 200 (F 600 -> 200, score 59), on a-1 it
// would strand 1200 (F 600 -> 1200, score 35): a-0.
TEST(FragawarePolicyTest, FixedWorkloadOverridesLearning) {
  std::unique_ptr<Scheduler> scheduler =
      SchedulerWith(FragawareConfig({Typical(1000)}));
  ASSERT_NE(scheduler, nullptr);
  ASSERT_OK(scheduler->UpsertNode(MakeNode("a", 2)));
  ASSERT_OK(scheduler->Schedule(PinnedShare("resident", 40, "GPU-a-0")));
  absl::StatusOr<Decision> decision =
      scheduler->Schedule(ShareOfOneGpu("p", 40));
  ASSERT_OK(decision);
  ASSERT_TRUE(decision->allocation.has_value());
  EXPECT_EQ(FirstGrant(*decision).uuid, "GPU-a-0");
  EXPECT_EQ(decision->score, 59);
}

// Each shape weighs its share divided by the part of a GPU it takes.
// Workload: whole GPUs (30 % of pods) and 250-milli shares (70 %); node a
// has 400 left on GPU 0 and GPU 1 free; the pod asks 200. Per GPU taken
// the weights are 0.3 / 1 and 0.7 / 0.25, i.e. 0.097 and 0.903: before,
// F = 0.097 x 400 = 38.7; on a-0 ([200, 1000]) both shapes lose the 200, F =
// 200 (score 45); on a-1 ([400, 800]) only the whole GPUs lose 1200, F = 116.1
// (score 48): a-1. fgd weighs 0.3 and 0.7: F 120 -> 200 on a-0 (48), 120 -> 360
// on a-1 (44): a-0.
TEST(FragawarePolicyTest, ShapesWeighTheirSharePerGpuAsked) {
  for (const auto& [policy, want_gpu] :
       {std::pair<std::string, std::string>{"fragaware", "GPU-a-1"},
        {"fgd", "GPU-a-0"}}) {
    SCOPED_TRACE(policy);
    absl::StatusOr<Decision> decision = PlaceBesideResident(
        policy, {Typical(1000, 0.3), Typical(250, 0.7)}, 60, 20);
    ASSERT_OK(decision);
    ASSERT_TRUE(decision->allocation.has_value());
    EXPECT_EQ(FirstGrant(*decision).uuid, want_gpu);
    EXPECT_EQ(decision->score, 48);
  }
}

// A pod of whole GPUs keeps its share of the pods in the measure (not
// divided by the GPUs it asks). Workload: 2-GPU pods and 500-milli shares,
// half the pods each, weighing 0.5 and 0.5 x 2 = 1.0, i.e. 1/3 and 2/3.
// Node a is empty, node b holds 500 on GPU 0; the pod asks 500. On a it
// breaks the pair the 2-GPU pods need (F 0 -> 1500 / 3, score 37); on b,
// which they lost already, it takes 500 of their 1500 (F 500 -> 333,
// score 54), planned (500 + 500): b, 54 + 25 = 79. Divided by two GPUs
// the 2-GPU pods would weigh 0.2 and b score 52 + 25 = 77.
TEST(FragawarePolicyTest, WholeGpuPodsKeepTheirShare) {
  std::unique_ptr<Scheduler> scheduler = SchedulerWith(FragawareConfig(
      {WorkloadShape{.gpu_milli = 1000, .gpu_count = 2, .share = 0.5},
       Typical(500, 0.5)}));
  ASSERT_NE(scheduler, nullptr);
  ASSERT_OK(scheduler->UpsertNode(MakeNode("a", 2)));
  ASSERT_OK(scheduler->UpsertNode(MakeNode("b", 2)));
  ASSERT_OK(scheduler->Schedule(PinnedShare("resident", 50, "GPU-b-0")));
  absl::StatusOr<Decision> decision =
      scheduler->Schedule(ShareOfOneGpu("p", 50));
  ASSERT_OK(decision);
  ASSERT_TRUE(decision->allocation.has_value());
  EXPECT_EQ(FirstGrant(*decision).uuid, "GPU-b-0");
  EXPECT_EQ(decision->score, 79);
}

// A share is counted by the pods of it the node's CPU holds, so a share of
// few CPUs goes where CPU is short. Workload: 470-milli shares of 11 CPUs
// and 810 of 3 CPUs, half the pods each (weights 0.633 / 0.367 per GPU
// taken). Nodes of 2 GPUs: a-rich has 100 CPUs, b-poor 24, which hold two
// 470s (940 of 2000 milli: F 0.633 x 1060 = 671). An 810 of 3 CPUs on
// b-poor leaves [190, 1000] and 21 CPUs: the 470s lose 190 + 530, the
// 810s 190 (F 525, score 53); on a-rich the 470s and 810s lose the 190
// alone (F 0 -> 190, score 45). Both planned (810 alone): b-poor, 53 + 25
// = 78. fgd checks one 470 and sees both nodes alike (F 0 -> 190, 45): the
// first by name, a-rich, whose CPU the 470s would have used.
TEST(FragawarePolicyTest, ACpuLightShareGoesWhereCpuIsShort) {
  NodeInventory rich = MakeNode("a-rich", 2);
  rich.cpu_milli = 100000;
  NodeInventory poor = MakeNode("b-poor", 2);
  poor.cpu_milli = 24000;
  const std::vector<WorkloadShape> workload = {
      WorkloadShape{
          .cpu_milli = 11000, .gpu_milli = 470, .gpu_count = 1, .share = 0.5},
      WorkloadShape{
          .cpu_milli = 3000, .gpu_milli = 810, .gpu_count = 1, .share = 0.5}};
  for (const auto& [policy, want_node, want_score] :
       {std::tuple<std::string, std::string, int>{"fragaware", "b-poor", 78},
        {"fgd", "a-rich", 45}}) {
    SCOPED_TRACE(policy);
    Config config = MakeConfig(policy, policy);
    config.scheduler.typical_workload = workload;
    std::unique_ptr<Scheduler> scheduler = SchedulerWith(config);
    ASSERT_NE(scheduler, nullptr);
    ASSERT_OK(scheduler->UpsertNode(rich));
    ASSERT_OK(scheduler->UpsertNode(poor));
    PodRequest pod = ShareOfOneGpu("p", 81);
    pod.cpu_milli = 3000;
    absl::StatusOr<Decision> decision = scheduler->Schedule(pod);
    ASSERT_OK(decision);
    ASSERT_TRUE(decision->allocation.has_value());
    EXPECT_EQ(decision->allocation->node_name, want_node);
    EXPECT_EQ(decision->score, want_score);
  }
}

// A share named in MiB only is not counted by CPU: its 10 milli stand for
// a size not known. Workload: such shares of 4 CPUs; node a has one GPU
// and 8 CPUs. A pod asking 8 GiB of the 80 GiB GPU and 4 CPUs leaves
// [900]: the shape still fits, the measure does not move (score 50), and
// the pod is planned (ten-milli shares fill a GPU a hundred at a time):
// 75. Counted, 8 CPUs would hold two such pods (20 of 1000 milli, F 980)
// and 4 CPUs one (10 of 900, F 890): score 52, 77.
TEST(FragawarePolicyTest, AShareNamedInMibOnlyIsNotCountedByCpu) {
  std::unique_ptr<Scheduler> scheduler = SchedulerWith(
      FragawareConfig({WorkloadShape{.cpu_milli = 4000,
                                     .gpu_milli = kMemoryOnlyShareMilli,
                                     .gpu_count = 1,
                                     .share = 1.0}}));
  ASSERT_NE(scheduler, nullptr);
  NodeInventory node = MakeNode("a", 1);
  node.cpu_milli = 8000;
  ASSERT_OK(scheduler->UpsertNode(node));
  PodRequest pod = testing::MakePod("p", {testing::GpuContainer("c", 1, 8192)});
  pod.cpu_milli = 4000;
  ASSERT_EQ(ShapeOfPod(pod).gpu_milli, kMemoryOnlyShareMilli);
  absl::StatusOr<Decision> decision = scheduler->Schedule(pod);
  ASSERT_OK(decision);
  ASSERT_TRUE(decision->allocation.has_value());
  EXPECT_EQ(decision->score, 75);
}

// A share goes where it is part of a planned filling before where the
// measure alone would put it. Workload: 810-milli shares (90 % of pods)
// and 190 (10 %), planned as 810 + 190 and 810 alone (fill_plan.h). Node
// a holds 400 on GPU 0; the pod asks 190. Per GPU asked the weights are
// 0.679 (810) and 0.321 (190): on a-0 ([410, 1000]) the 810s lose 410
// instead of 600 (F 407 -> 278, score 53), on a-1 ([600, 810]) nothing
// changes (score 50). fgd (weights 0.9 / 0.1: F 540 -> 369, 54) takes a-0,
// where the 190 strands 410 that no planned filling uses; fragaware takes
// a-1, planned (a 190 on an empty GPU waits for an 810): score 51 + 50 x
// 49 / 100 = 75.
TEST(FragawarePolicyTest, PlannedFillingsComeBeforeTheMeasure) {
  for (const auto& [policy, want_gpu, want_score] :
       {std::tuple<std::string, std::string, int>{"fragaware", "GPU-a-1", 75},
        {"fgd", "GPU-a-0", 54}}) {
    SCOPED_TRACE(policy);
    absl::StatusOr<Decision> decision = PlaceBesideResident(
        policy, {Typical(810, 0.9), Typical(190, 0.1)}, 40, 19);
    ASSERT_OK(decision);
    ASSERT_TRUE(decision->allocation.has_value());
    EXPECT_EQ(FirstGrant(*decision).uuid, want_gpu);
    EXPECT_EQ(decision->score, want_score);
  }
}

// A share opens a planned filling only where the node keeps the host
// memory and CPU its partner needs. Learned: four 810s asking 16 GiB of
// host memory and four 190s asking 1 GiB (three pinned on node z, then
// the pod): as many of each, so the plan is 810 + 190 alone. Nodes a and b have
// one empty GPU each and untracked CPU; a has 8 GiB of host memory, b 1 TiB.
// The measure does not count memory, so for a 190 asking 1 GiB both score alike
// and a, first by name, would win; on a the 7 GiB left could never take the 810
// that completes the filling, so only b is planned: b, score 51 + 50 x 49 / 100
// = 75.
TEST(FragawarePolicyTest, APlannedFillingNeedsRoomForItsPartner) {
  std::unique_ptr<Scheduler> scheduler = SchedulerWith(FragawareConfig());
  ASSERT_NE(scheduler, nullptr);
  NodeInventory a = MakeNode("a", 1);
  a.memory_mib = 8192;
  NodeInventory b = MakeNode("b", 1);
  b.memory_mib = 1 << 20;
  for (NodeInventory node : {a, b, MakeNode("z", 8)}) {
    ASSERT_OK(scheduler->UpsertNode(std::move(node)));
  }
  for (int i = 0; i < 7; ++i) {
    PodRequest learn =
        PinnedShare("learn-" + std::to_string(i), i < 4 ? 81 : 19,
                    "GPU-z-" + std::to_string(i));
    learn.memory_mib = i < 4 ? 16384 : 1024;
    ASSERT_OK(scheduler->Schedule(learn));
  }
  PodRequest pod = ShareOfOneGpu("p", 19);
  pod.memory_mib = 1024;
  absl::StatusOr<Decision> decision = scheduler->Schedule(pod);
  ASSERT_OK(decision);
  ASSERT_TRUE(decision->allocation.has_value());
  EXPECT_EQ(decision->allocation->node_name, "b");
  EXPECT_EQ(decision->score, 75);
}

// Pods pinned to a model keep its nodes for them. The workload is whole
// GPUs that accept only "H100"; node x has an H100, node y an A100, one
// GPU each. A half share on x leaves [500] that the pinned pods cannot use
// (F 0 -> 500, score 37); on y, where they may not go at all, all its idle
// capacity is lost to them either way (F 1000 -> 500, score 62): y, though
// x comes first by name and binpack would take it.
TEST(FragawarePolicyTest, ModelPinnedCapacityIsKept) {
  NodeInventory x = MakeNode("x", 1);
  x.gpus[0].model = "NVIDIA H100 80GB HBM3";
  NodeInventory y = MakeNode("y", 1);
  y.gpus[0].model = "NVIDIA A100-SXM4-80GB";
  for (const auto& [policy, want] :
       {std::pair<std::string, std::string>{"fragaware", "GPU-y-0"},
        {"binpack", "GPU-x-0"}}) {
    SCOPED_TRACE(policy);
    Config config = MakeConfig(policy, policy);
    config.scheduler.typical_workload = {Typical(1000, {"h100"})};
    std::unique_ptr<Scheduler> scheduler = SchedulerWith(config);
    ASSERT_NE(scheduler, nullptr);
    ASSERT_OK(scheduler->UpsertNode(x));
    ASSERT_OK(scheduler->UpsertNode(y));
    absl::StatusOr<Decision> decision =
        scheduler->Schedule(ShareOfOneGpu("p", 50));
    ASSERT_OK(decision);
    ASSERT_TRUE(decision->allocation.has_value());
    EXPECT_EQ(FirstGrant(*decision).uuid, want);
  }
}

// nodesToScore 1: the search scores only the fullest node that fits.
// Whole-GPU workload; node a holds a 20 % share, node b a 50 % one. Every
// node scored, a 30 % pod scores 57 on both (a: F 800 -> 500; b: F 500 ->
// 200) and a wins the tie by name; with a budget of 1 only b, the fuller,
// is scored, and takes it.
TEST(FragawarePolicyTest, NodesToScoreScoresTheFullestNodesOnly) {
  for (const auto& [budget, want] :
       {std::pair<int64_t, std::string>{0, "GPU-a-0"}, {1, "GPU-b-0"}}) {
    SCOPED_TRACE(budget);
    std::unique_ptr<Scheduler> scheduler =
        SchedulerWith(FragawareConfig({Typical(1000)}, budget));
    ASSERT_NE(scheduler, nullptr);
    ASSERT_OK(scheduler->UpsertNode(MakeNode("a", 1)));
    ASSERT_OK(scheduler->UpsertNode(MakeNode("b", 1)));
    ASSERT_OK(scheduler->Schedule(PinnedShare("on-a", 20, "GPU-a-0")));
    ASSERT_OK(scheduler->Schedule(PinnedShare("on-b", 50, "GPU-b-0")));
    absl::StatusOr<Decision> decision =
        scheduler->Schedule(ShareOfOneGpu("p", 30));
    ASSERT_OK(decision);
    ASSERT_TRUE(decision->allocation.has_value());
    EXPECT_EQ(FirstGrant(*decision).uuid, want);
  }
}

}  // namespace
}  // namespace deviceshare
