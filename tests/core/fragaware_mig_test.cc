// fragaware on MIG GPUs (policy/fragaware/mig_slices.h): a MIG GPU's
// fragmentation is its free memory slices no instance of the workload can
// use. Small clusters whose answer is worked out by hand, the learned
// workload's MIG profiles, and the node score bound against a full scan.
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/backend/sharing_backend.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/policy/builtin_policies.h"
#include "deviceshare/policy/fgd/fgd_policy.h"
#include "deviceshare/policy/fragaware/fragaware_policy.h"
#include "deviceshare/policy/fragaware/mig_slices.h"
#include "deviceshare/policy/fragaware/workload_estimate.h"
#include "deviceshare/scheduler/scheduler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/mig_builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::testing::ElementsAre;
using testing::GpuContainer;
using testing::MakeConfig;
using testing::MakeNode;
using testing::MakePod;
using testing::MigGpu;
using testing::MigPod;

constexpr char kA100_40[] = "NVIDIA-A100-SXM4-40GB";

std::vector<MigPlacement> Placements(std::vector<int32_t> starts,
                                     int32_t size) {
  std::vector<MigPlacement> out;
  for (int32_t start : starts) out.push_back({start, size});
  return out;
}

// An A100-40GB's registration (docs/reference/mig-mps-nvml.md §1.2-1.3):
// 1g.5gb at slices 0..6, 3g.20gb at 0 and 4 (4 slices), 7g.40gb at 0 (all
// 8). `one_g_starts` narrows the 1g.5gb placements.
Gpu A100Mig(const std::string& node, int index,
            std::vector<int32_t> one_g_starts = {0, 1, 2, 3, 4, 5, 6}) {
  Gpu gpu = MigGpu(index, kA100_40, 40960, absl::StrCat("GPU-", node, "-"));
  gpu.mig_profiles = {
      {"1g.5gb", 4864, 15, 1, Placements(std::move(one_g_starts), 1)},
      {"3g.20gb", 20096, 43, 3, Placements({0, 4}, 4)},
      {"7g.40gb", 40448, 100, 7, Placements({0}, 8)}};
  return gpu;
}

NodeInventory MigNode(const std::string& name, int gpus) {
  NodeInventory node;
  node.name = name;
  for (int i = 0; i < gpus; ++i) node.gpus.push_back(A100Mig(name, i));
  return node;
}

// A pod asking one instance of `profile`, on `uuid` when one is given.
PodRequest ProfilePod(const std::string& name, const std::string& profile,
                      const std::string& uuid = "") {
  ContainerRequest container = GpuContainer("c", 1, 0);
  container.mig_profile = profile;
  PodRequest pod = MigPod(name, {container});
  if (!uuid.empty()) pod.use_uuids = {uuid};
  return pod;
}

std::unique_ptr<Scheduler> SchedulerWith(Config config) {
  BackendRegistry backends;
  EXPECT_OK(RegisterBuiltinBackends(backends));
  auto scheduler = Scheduler::Create(config, backends);
  EXPECT_OK(scheduler);
  return scheduler.ok() ? *std::move(scheduler) : nullptr;
}

const DeviceGrant& FirstGrant(const Decision& decision) {
  return decision.allocation->containers.at(0).devices.at(0);
}

// Places `pod` and returns its first grant's MIG start (-1 on failure).
int32_t PlaceStart(Scheduler& scheduler, const PodRequest& pod) {
  absl::StatusOr<Decision> decision = scheduler.Schedule(pod);
  EXPECT_OK(decision);
  if (!decision.ok() || !decision->allocation) return -1;
  return FirstGrant(*decision).mig.start;
}

// Two nodes of one A100-40GB each. On a, a 3g.20gb sits at slices 4-7 (the
// backend's choice: it keeps 3g@0 free); on b, a 1g.5gb at slice 6. The pod
// asks a 1g.5gb. Learned workload: the two residents and the pod, 1g.5gb
// 2/3 and 3g.20gb 1/3; a slice is 125 milli.
//   a before: 3g@0 free, nothing stranded: F = 0. After (any of 0..3),
//     three slices free and no 3g fits: the 3g shape loses them all:
//     F = 1/3 x 375 = 125; score 100 sigmoid(-0.125) = 46.
//   b before: 3g@0 free (4, 5, 7 stranded for it), slice 7 stranded for
//     1g: F = 1/3 x 375 + 2/3 x 125 = 208.3. After (the backend takes 5,
//     keeping 3g@0): 3g strands 4 and 7, 1g slice 7: F = 1/3 x 250 + 2/3 x
//     125 = 166.7; score 100 sigmoid(0.0417) = 51.
// fragaware takes b, where a 3g.20gb still fits; binpack the fuller a,
// where it then fits nowhere.
TEST(FragawareMigTest, NodeWhereTheInstanceStrandsFewerSlices) {
  for (const auto& [policy, want_node, want_score] :
       {std::tuple<std::string, std::string, int>{"fragaware", "b", 51},
        {"binpack", "a", -1}}) {
    SCOPED_TRACE(policy);
    std::unique_ptr<Scheduler> scheduler =
        SchedulerWith(MakeConfig(policy, policy));
    ASSERT_NE(scheduler, nullptr);
    ASSERT_OK(scheduler->UpsertNode(MigNode("a", 1)));
    ASSERT_OK(scheduler->UpsertNode(MigNode("b", 1)));
    ASSERT_EQ(PlaceStart(*scheduler, ProfilePod("big", "3g.20gb", "GPU-a-0")),
              4);
    ASSERT_EQ(PlaceStart(*scheduler, ProfilePod("small", "1g.5gb", "GPU-b-0")),
              6);
    absl::StatusOr<Decision> decision =
        scheduler->Schedule(ProfilePod("p", "1g.5gb"));
    ASSERT_OK(decision);
    ASSERT_TRUE(decision->allocation.has_value());
    EXPECT_EQ(decision->allocation->node_name, want_node);
    if (want_score >= 0) {
      EXPECT_EQ(decision->score, want_score);
    }
  }
}

// The same two GPUs on one node: the GPU level chooses as the node level
// did. Before, both shapes fit the node (3g@0 on either GPU): the 3g shape
// strands GPU 1's slices 4, 5, 7, the 1g shape its slice 7: F = 208.3. The
// pod on GPU 0 leaves 3g only on GPU 1 and GPU 0's three free slices
// stranded for it: F = 1/3 x 750 + 2/3 x 125 = 333.3 (score 46); on GPU 1
// (slice 5): F = 166.7 (score 51). binpack takes the fuller GPU 0.
TEST(FragawareMigTest, GpuWhereTheInstanceStrandsFewerSlices) {
  for (const auto& [policy, want_gpu] :
       {std::pair<std::string, std::string>{"fragaware", "GPU-n-1"},
        {"binpack", "GPU-n-0"}}) {
    SCOPED_TRACE(policy);
    std::unique_ptr<Scheduler> scheduler =
        SchedulerWith(MakeConfig(policy, policy));
    ASSERT_NE(scheduler, nullptr);
    ASSERT_OK(scheduler->UpsertNode(MigNode("n", 2)));
    ASSERT_EQ(PlaceStart(*scheduler, ProfilePod("big", "3g.20gb", "GPU-n-0")),
              4);
    ASSERT_EQ(PlaceStart(*scheduler, ProfilePod("small", "1g.5gb", "GPU-n-1")),
              6);
    absl::StatusOr<Decision> decision =
        scheduler->Schedule(ProfilePod("p", "1g.5gb"));
    ASSERT_OK(decision);
    ASSERT_TRUE(decision->allocation.has_value());
    EXPECT_EQ(FirstGrant(*decision).uuid, want_gpu);
    if (policy == "fragaware") {
      EXPECT_EQ(FirstGrant(*decision).mig.start, 5);
      EXPECT_EQ(decision->score, 51);
    }
  }
}

// A mixed node: b-mixed has a MIG GPU whose registration puts 1g.5gb at
// slices 0 and 4 only, both taken, so no 3g.20gb fits its six free slices
// (750 milli, 70 % of its SMs and 76 % of its memory free), and a
// hami-core GPU, empty. a-plain has two hami-core GPUs, one 30 % used. The
// workload (fixed) is pods of two GPUs of 450 milli each (on the MIG GPU a
// 3g.20gb: the smallest profile with 45 % of its memory). A hami-core pod
// asks 60 % of one GPU.
//   a-plain: before both GPUs fit the shape (F 0); after, on either GPU,
//     one GPU fits, not two: F = 1,100, score 24.
//   b-mixed: before the MIG GPU cannot take the shape's instance, so the
//     node does not fit it: F = 750 + 1,000; after (GPU 1 at 400): F =
//     750 + 400 = 1,150: the idle capacity the shape cannot use shrinks,
//     score 100 sigmoid(0.6) = 64.
// Measured by milli, the MIG GPU would look 700 free, the node would fit
// the shape before (F 0 -> 1,100, score 24) and the tie would go to
// a-plain by name.
TEST(FragawareMigTest, MixedNodeCountsTheMigGpuBySlices) {
  Config config = MakeConfig("fragaware", "fragaware");
  config.scheduler.typical_workload = {WorkloadShape{
      .cpu_milli = 0, .gpu_milli = 450, .gpu_count = 2, .share = 1.0}};
  std::unique_ptr<Scheduler> scheduler = SchedulerWith(config);
  ASSERT_NE(scheduler, nullptr);
  NodeInventory plain = MakeNode("a-plain", 2, 40960);
  NodeInventory mixed = MakeNode("b-mixed", 2, 40960);
  mixed.gpus[0] = A100Mig("b-mixed", 0, {0, 4});
  ASSERT_OK(scheduler->UpsertNode(plain));
  ASSERT_OK(scheduler->UpsertNode(mixed));
  for (const char* name : {"one", "two"}) {
    ASSERT_OK(scheduler->Schedule(ProfilePod(name, "1g.5gb", "GPU-b-mixed-0")));
  }
  PodRequest resident = testing::ShareOfOneGpu("resident", 30, 40960);
  resident.use_uuids = {"GPU-a-plain-1"};
  ASSERT_OK(scheduler->Schedule(resident));

  PodRequest pod = testing::ShareOfOneGpu("p", 60, 40960);
  pod.mode = kDefaultSharingMode;
  std::vector<NodeVerdict> verdicts = scheduler->FilterFreshForTest(pod);
  ASSERT_EQ(verdicts.size(), 2u);
  EXPECT_EQ(verdicts[0].node, "a-plain");
  EXPECT_EQ(verdicts[0].score, 24);
  EXPECT_EQ(verdicts[1].node, "b-mixed");
  EXPECT_EQ(verdicts[1].score, 64);
  absl::StatusOr<Decision> decision = scheduler->Schedule(pod);
  ASSERT_OK(decision);
  ASSERT_TRUE(decision->allocation.has_value());
  EXPECT_EQ(FirstGrant(*decision).uuid, "GPU-b-mixed-1");
}

TEST(FragawareMigTest, ProfileForShapeIsTheBackendsPickByMemory) {
  Gpu gpu = A100Mig("n", 0);
  gpu.mig_profiles.push_back({"1g.5gb+me", 4864, 15, 1, Placements({6}, 1)});
  // The memory asked is ceil(40,960 MiB x milli / 1000).
  EXPECT_EQ(fragaware::ProfileForShape(gpu, 118, ""), 0);   // 4,834 MiB
  EXPECT_EQ(fragaware::ProfileForShape(gpu, 119, ""), 1);   // 4,875 MiB
  EXPECT_EQ(fragaware::ProfileForShape(gpu, 490, ""), 1);   // 20,071 MiB
  EXPECT_EQ(fragaware::ProfileForShape(gpu, 491, ""), 2);   // 20,112 MiB
  EXPECT_EQ(fragaware::ProfileForShape(gpu, 1000, ""), 2);  // whole: largest
  EXPECT_EQ(fragaware::ProfileForShape(gpu, 10, "1G.5GB+ME"), 3);
  EXPECT_EQ(fragaware::ProfileForShape(gpu, 10, "2g.10gb"), -1);
  EXPECT_FALSE(fragaware::SlicedGpu(testing::MakeGpu("n", 1)));
}

TEST(FragawareMigTest, LearnedWorkloadRecordsMigProfiles) {
  WorkloadEstimate estimate;
  estimate.Observe(ProfilePod("a", "1g.5gb"));
  estimate.Observe(ProfilePod("b", "1g.5gb"));
  estimate.Observe(ProfilePod("c", "3g.20gb"));
  estimate.Observe(testing::ShareOfOneGpu("d", 100));  // a whole GPU
  EXPECT_EQ(MigProfileOfPod(ProfilePod("x", "3g.20gb")), "3g.20gb");
  EXPECT_EQ(MigProfileOfPod(testing::ShareOfOneGpu("y", 50)), "");
  const auto snapshot = estimate.Snapshot();
  // Every shape is one whole GPU by milli; the profile tells them apart.
  // Most pods first, then the larger key (the profile last).
  EXPECT_THAT(snapshot->mig_profiles, ElementsAre("1g.5gb", "3g.20gb", ""));
  ASSERT_EQ(snapshot->shapes.size(), 3u);
  EXPECT_DOUBLE_EQ(snapshot->shapes[0].share, 0.5);
  EXPECT_DOUBLE_EQ(snapshot->shapes[1].share, 0.25);
  EXPECT_DOUBLE_EQ(snapshot->shapes[2].share, 0.25);
}

// The search skips nodes by NodeScoreBoundFor; with MIG GPUs measured by
// slices its choice must still be a full scan's: random clusters of MIG,
// mixed and plain nodes, MIG pods (named profiles and memory asks) and
// hami-core shares, placed and released, under learned fragaware.
TEST(FragawareMigTest, BoundedSearchChoosesWhatAFullScanChooses) {
  std::unique_ptr<Scheduler> scheduler =
      SchedulerWith(MakeConfig("fragaware", "fragaware"));
  ASSERT_NE(scheduler, nullptr);
  std::mt19937_64 rng(16);
  auto uniform = [&rng](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  for (int n = 0; n < 16; ++n) {
    const std::string name = absl::StrCat("node-", n);
    NodeInventory node = MakeNode(name, uniform(1, 4), 40960);
    for (size_t g = 0; g < node.gpus.size(); ++g) {
      if (n % 3 == 0 || (n % 3 == 1 && g % 2 == 0)) {
        node.gpus[g] = A100Mig(name, static_cast<int>(g));
      }
    }
    node.cpu_milli = uniform(0, 1) ? 0 : 32000;
    ASSERT_OK(scheduler->UpsertNode(node));
  }
  const std::vector<std::string> profiles = {"1g.5gb", "3g.20gb", "7g.40gb"};
  int placed = 0;
  std::vector<std::string> live;
  for (int i = 0; i < 800; ++i) {
    const std::string name = absl::StrCat("p", i);
    PodRequest pod;
    switch (uniform(0, 2)) {
      case 0:
        pod = ProfilePod(name, profiles[uniform(0, 1) ? 0 : uniform(1, 2)]);
        break;
      case 1:
        pod = MigPod(name,
                     {GpuContainer("c", uniform(1, 2), uniform(1, 40) * 1024)});
        break;
      default:
        pod = MakePod(name,
                      {GpuContainer("c", uniform(1, 2), uniform(1, 20) * 2048,
                                    uniform(0, 10) * 10)});
        pod.mode = kDefaultSharingMode;
    }
    pod.cpu_milli = uniform(0, 4000);
    const NodeVerdict* expected = nullptr;
    std::vector<NodeVerdict> verdicts = scheduler->FilterFreshForTest(pod);
    for (const NodeVerdict& v : verdicts) {
      if (!v.fit.fits()) continue;
      if (expected == nullptr || v.score > expected->score) expected = &v;
    }
    absl::StatusOr<Decision> outcome = scheduler->Schedule(pod);
    ASSERT_OK(outcome);
    ASSERT_EQ(outcome->allocation.has_value(), expected != nullptr) << name;
    if (expected != nullptr) {
      ASSERT_EQ(outcome->allocation->node_name, expected->node) << name;
      EXPECT_EQ(outcome->score, expected->score) << name;
      live.push_back(pod.uid);
      ++placed;
    }
    if (!live.empty() && uniform(0, 2) == 0) {
      const size_t k = uniform(0, static_cast<int>(live.size()) - 1);
      scheduler->Release(live[k]);
      live[k] = live.back();
      live.pop_back();
    }
  }
  EXPECT_GT(placed, 300);
}

// NodeScoreBoundFor against the score itself: on a node of two A100-40GB
// MIG GPUs in random states, every placement the mig backend offers (GPUs
// ranked by `policy` and by binpack) scores at most the bound.
void CheckBoundOverOfferedPlacements(const PlacementPolicy& policy) {
  std::unique_ptr<SharingBackend> backend = testing::MigBackend();
  ASSERT_NE(backend, nullptr);
  NodeState node = testing::MakeNodeState({A100Mig("n1", 0), A100Mig("n1", 1)});
  std::mt19937_64 rng(3);
  auto uniform = [&rng](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  const std::vector<std::string> profiles = {"1g.5gb", "3g.20gb", "7g.40gb"};
  std::vector<std::string> live;
  int checked = 0;
  for (int i = 0; i < 1500; ++i) {
    const std::string name = absl::StrCat("p", i);
    PodRequest pod =
        uniform(0, 1)
            ? ProfilePod(name, profiles[uniform(0, 2)])
            : MigPod(name,
                     {GpuContainer("c", uniform(1, 2), uniform(1, 40) * 1024)});
    policy.ObservePod(pod);
    std::optional<PodAllocation> chosen;
    for (const PlacementPolicy* gpu_policy :
         std::vector<const PlacementPolicy*>{&policy, &BinpackPolicy()}) {
      PlacementOptions options;
      options.gpu_policy = gpu_policy;
      options.node_policy = &policy;
      options.pod = &pod;
      NodeFit fit = backend->Filter(pod, node, options);
      if (!fit.fits()) continue;
      EXPECT_LE(policy.NodeScoreFor(pod, node, fit.allocation),
                policy.NodeScoreBoundFor(pod, node, backend->grant_charges()))
          << name;
      ++checked;
      if (!chosen) chosen = fit.allocation;
    }
    if (chosen && uniform(0, 1)) {
      ASSERT_OK(backend->Commit(pod, *chosen, node));
      live.push_back(pod.uid);
    }
    if (!live.empty() && uniform(0, 2) == 0) {
      const size_t k = uniform(0, static_cast<int>(live.size()) - 1);
      backend->Release(live[k], node);
      live[k] = live.back();
      live.pop_back();
    }
  }
  EXPECT_GT(checked, 1000);
}

// fragaware, learning the workload (MIG profiles included) as it goes.
TEST(FragawareMigTest, NodeScoreBoundHoldsForEveryOfferedPlacement) {
  absl::StatusOr<std::unique_ptr<PlacementPolicy>> policy =
      NewFragawarePolicy(Config{});
  ASSERT_OK(policy);
  CheckBoundOverOfferedPlacements(**policy);
}

// fgd measures MIG GPUs by milli (SMs and memory left); its bound holds
// for that measure: a MIG grant never raises a GPU's milli left.
TEST(FragawareMigTest, FgdBoundHoldsOnMigGpusForItsMilliMeasure) {
  Config config;
  for (const auto& [milli, count, share] :
       {std::tuple<int32_t, int32_t, double>{100, 1, 0.5},
        {450, 1, 0.3},
        {1000, 2, 0.2}}) {
    config.scheduler.typical_workload.push_back(
        WorkloadShape{.gpu_milli = milli, .gpu_count = count, .share = share});
  }
  absl::StatusOr<std::unique_ptr<PlacementPolicy>> policy =
      NewFgdPolicy(config);
  ASSERT_OK(policy);
  CheckBoundOverOfferedPlacements(**policy);
}

}  // namespace
}  // namespace deviceshare
