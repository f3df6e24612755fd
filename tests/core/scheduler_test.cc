// Tests of the Scheduler facade (scheduler/scheduler.h): node-level
// policies and their per-pod overrides, deterministic ties, verdicts for
// pods that do not fit, AlreadyExists, Release, unknown nodes, host CPU and
// memory, mode checks, container edits and a concurrency smoke test.
#include "deviceshare/scheduler/scheduler.h"

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/hamicore/hamicore_backend.h"
#include "deviceshare/mig/mig_backend.h"
#include "deviceshare/mps/mps_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::GpuContainer;
using ::deviceshare::testing::MakeConfig;
using ::deviceshare::testing::MakeNode;
using ::deviceshare::testing::MakePod;
using ::deviceshare::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::SizeIs;
using ::testing::StartsWith;
using ::testing::UnorderedElementsAre;

constexpr int64_t kGiB = 1024;
constexpr char kBinpack[] = "binpack";
constexpr char kSpread[] = "spread";

std::unique_ptr<Scheduler> MakeScheduler(const Config& config) {
  BackendRegistry registry;
  EXPECT_OK(RegisterBuiltinBackends(registry));
  auto scheduler = Scheduler::Create(config, registry);
  EXPECT_TRUE(scheduler.ok()) << scheduler.status();
  return scheduler.ok() ? *std::move(scheduler) : nullptr;
}

PodRequest SmallPod(const std::string& name, int64_t memory_mib = 10 * kGiB) {
  return MakePod(name, {GpuContainer("c", 1, memory_mib)});
}

// Schedules `pod`; it must be placed. Returns the node name.
std::string Place(Scheduler& scheduler, const PodRequest& pod) {
  absl::StatusOr<Decision> outcome = scheduler.Schedule(pod);
  EXPECT_TRUE(outcome.ok()) << outcome.status();
  if (!outcome.ok()) return "";
  EXPECT_TRUE(outcome->allocation.has_value()) << pod.name;
  if (!outcome->allocation) return "";
  return outcome->allocation->node_name;
}

// A pod pinned to one GPU (and so to its node) by a uuid allow list.
PodRequest PinnedPod(const std::string& name, const std::string& uuid,
                     int64_t memory_mib) {
  PodRequest pod = SmallPod(name, memory_mib);
  pod.use_uuids = {uuid};
  return pod;
}

// Two 2-GPU nodes "a" and "b"; "b" already holds a 20 GiB pod on GPU-b-0.
std::unique_ptr<Scheduler> TwoNodesBFuller(const Config& config) {
  auto scheduler = MakeScheduler(config);
  if (scheduler == nullptr) return nullptr;
  EXPECT_OK(scheduler->UpsertNode(MakeNode("a", 2)));
  EXPECT_OK(scheduler->UpsertNode(MakeNode("b", 2)));
  EXPECT_EQ(Place(*scheduler, PinnedPod("resident", "GPU-b-0", 20 * kGiB)),
            "b");
  return scheduler;
}

// ----------------------------------------------------------------------------
// Node-level policies

TEST(SchedulerTest, NodeBinpackPicksTheFullerNode) {
  auto scheduler = TwoNodesBFuller(MakeConfig(kBinpack, kBinpack));
  ASSERT_NE(scheduler, nullptr);
  absl::StatusOr<Decision> outcome = scheduler->Schedule(SmallPod("p"));
  ASSERT_OK(outcome);
  ASSERT_TRUE(outcome->allocation.has_value());
  EXPECT_EQ(outcome->allocation->node_name, "b");
  // b after: memory 30/160 GiB = 18 %, cores 0 %, slots 2/20 = 10 %: 28/3 = 9.
  EXPECT_EQ(outcome->score, 9);
  EXPECT_THAT(outcome->reasons, IsEmpty());
}

TEST(SchedulerTest, NodeSpreadPicksTheEmptierNode) {
  auto scheduler = TwoNodesBFuller(MakeConfig(kSpread, kBinpack));
  ASSERT_NE(scheduler, nullptr);
  absl::StatusOr<Decision> outcome = scheduler->Schedule(SmallPod("p"));
  ASSERT_OK(outcome);
  ASSERT_TRUE(outcome->allocation.has_value());
  EXPECT_EQ(outcome->allocation->node_name, "a");
  // a after: memory 10/160 GiB = 6 %, slots 1/20 = 5 %: 11/3 = 3; 100 - 3.
  EXPECT_EQ(outcome->score, 97);
}

TEST(SchedulerTest, FilterScoresEveryNodeByTheNodePolicy) {
  auto scheduler = TwoNodesBFuller(MakeConfig(kBinpack, kBinpack));
  ASSERT_NE(scheduler, nullptr);
  std::vector<NodeVerdict> verdicts = *scheduler->Filter(SmallPod("p"));
  ASSERT_THAT(verdicts, SizeIs(2));
  EXPECT_EQ(verdicts[0].node, "a");
  EXPECT_EQ(verdicts[1].node, "b");
  ASSERT_TRUE(verdicts[0].fit.fits());
  ASSERT_TRUE(verdicts[1].fit.fits());
  EXPECT_EQ(verdicts[0].score, 3);
  EXPECT_EQ(verdicts[1].score, 9);
  EXPECT_EQ(verdicts[1].mode, hamicore::kMode);
}

TEST(SchedulerTest, PerPodNodePolicyBeatsTheConfig) {
  auto binpack = TwoNodesBFuller(MakeConfig(kBinpack, kBinpack));
  ASSERT_NE(binpack, nullptr);
  PodRequest spread_pod = SmallPod("p");
  spread_pod.node_policy = kSpread;
  EXPECT_EQ(Place(*binpack, spread_pod), "a");

  auto spread = TwoNodesBFuller(MakeConfig(kSpread, kBinpack));
  ASSERT_NE(spread, nullptr);
  PodRequest binpack_pod = SmallPod("p");
  binpack_pod.node_policy = kBinpack;
  EXPECT_EQ(Place(*spread, binpack_pod), "b");
}

TEST(SchedulerTest, PerPodGpuPolicyBeatsTheConfig) {
  auto scheduler = MakeScheduler(MakeConfig(kBinpack, kBinpack));
  ASSERT_NE(scheduler, nullptr);
  ASSERT_OK(scheduler->UpsertNode(MakeNode("a", 2)));
  ASSERT_EQ(Place(*scheduler, PinnedPod("resident", "GPU-a-0", 20 * kGiB)),
            "a");

  auto gpu_of = [&](const PodRequest& pod) {
    absl::StatusOr<Decision> outcome = scheduler->Schedule(pod);
    EXPECT_TRUE(outcome.ok() && outcome->allocation.has_value());
    if (!outcome.ok() || !outcome->allocation) return std::string();
    std::string uuid = outcome->allocation->containers.at(0).devices.at(0).uuid;
    scheduler->Release(pod.uid);
    return uuid;
  };
  // Config binpack: onto the used GPU.
  EXPECT_EQ(gpu_of(SmallPod("p1")), "GPU-a-0");
  // Pod says spread: onto the idle GPU.
  PodRequest spread_pod = SmallPod("p2");
  spread_pod.gpu_policy = kSpread;
  EXPECT_EQ(gpu_of(spread_pod), "GPU-a-1");

  auto spread_config = MakeScheduler(MakeConfig(kBinpack, kSpread));
  ASSERT_NE(spread_config, nullptr);
  ASSERT_OK(spread_config->UpsertNode(MakeNode("a", 2)));
  ASSERT_EQ(Place(*spread_config, PinnedPod("resident", "GPU-a-0", 20 * kGiB)),
            "a");
  PodRequest binpack_pod = SmallPod("p3");
  binpack_pod.gpu_policy = kBinpack;
  absl::StatusOr<Decision> outcome = spread_config->Schedule(binpack_pod);
  ASSERT_OK(outcome);
  ASSERT_TRUE(outcome->allocation.has_value());
  EXPECT_EQ(outcome->allocation->containers[0].devices[0].uuid, "GPU-a-0");
  outcome = spread_config->Schedule(SmallPod("p4"));
  ASSERT_OK(outcome);
  ASSERT_TRUE(outcome->allocation.has_value());
  EXPECT_EQ(outcome->allocation->containers[0].devices[0].uuid, "GPU-a-1");
}

TEST(SchedulerTest, TiesGoToTheSmallerNodeName) {
  for (std::string policy : {kBinpack, kSpread}) {
    auto scheduler = MakeScheduler(MakeConfig(policy, kBinpack));
    ASSERT_NE(scheduler, nullptr);
    // Registered out of order.
    ASSERT_OK(scheduler->UpsertNode(MakeNode("node-c", 2)));
    ASSERT_OK(scheduler->UpsertNode(MakeNode("node-a", 2)));
    ASSERT_OK(scheduler->UpsertNode(MakeNode("node-b", 2)));
    EXPECT_EQ(Place(*scheduler, SmallPod("p")), "node-a") << policy;
  }
  // Equal usage on node-c and node-b: binpack takes node-b.
  auto scheduler = MakeScheduler(MakeConfig(kBinpack, kBinpack));
  ASSERT_NE(scheduler, nullptr);
  ASSERT_OK(scheduler->UpsertNode(MakeNode("node-c", 2)));
  ASSERT_OK(scheduler->UpsertNode(MakeNode("node-a", 2)));
  ASSERT_OK(scheduler->UpsertNode(MakeNode("node-b", 2)));
  ASSERT_EQ(Place(*scheduler, PinnedPod("rc", "GPU-node-c-1", 20 * kGiB)),
            "node-c");
  ASSERT_EQ(Place(*scheduler, PinnedPod("rb", "GPU-node-b-1", 20 * kGiB)),
            "node-b");
  EXPECT_EQ(Place(*scheduler, SmallPod("p")), "node-b");
}

// ----------------------------------------------------------------------------
// Outcomes and errors

TEST(SchedulerTest, UnfittablePodGetsAReasonPerNodeNotAnError) {
  auto scheduler = MakeScheduler(MakeConfig());
  ASSERT_NE(scheduler, nullptr);
  ASSERT_OK(scheduler->UpsertNode(MakeNode("a", 2)));
  ASSERT_OK(scheduler->UpsertNode(MakeNode("b", 1, 40 * kGiB)));
  absl::StatusOr<Decision> outcome =
      scheduler->Schedule(SmallPod("huge", 100 * kGiB));
  ASSERT_OK(outcome);
  EXPECT_FALSE(outcome->allocation.has_value());
  EXPECT_THAT(outcome->reasons,
              UnorderedElementsAre(
                  Pair("a", StartsWith("InsufficientMemory gpu=GPU-a-0 "
                                       "free=81920MiB want=102400MiB")),
                  Pair("b", StartsWith("InsufficientMemory gpu=GPU-b-0 "
                                       "free=40960MiB want=102400MiB"))));
  scheduler->Inspect([](const ClusterState& state) {
    EXPECT_EQ(state.pod_count(), 0u);
    EXPECT_EQ(state.FindNode("a")->total_used_memory_mib(), 0);
  });
  // Not recorded, so it can be tried again.
  outcome = scheduler->Schedule(SmallPod("huge", 100 * kGiB));
  ASSERT_OK(outcome);
  EXPECT_FALSE(outcome->allocation.has_value());
}

TEST(SchedulerTest, EmptyClusterPlacesNothing) {
  auto scheduler = MakeScheduler(MakeConfig());
  ASSERT_NE(scheduler, nullptr);
  absl::StatusOr<Decision> outcome = scheduler->Schedule(SmallPod("p"));
  ASSERT_OK(outcome);
  EXPECT_FALSE(outcome->allocation.has_value());
  EXPECT_THAT(outcome->reasons, IsEmpty());
}

TEST(SchedulerTest, ScheduleTwiceIsAlreadyExists) {
  auto scheduler = MakeScheduler(MakeConfig());
  ASSERT_NE(scheduler, nullptr);
  ASSERT_OK(scheduler->UpsertNode(MakeNode("a", 2)));
  ASSERT_EQ(Place(*scheduler, SmallPod("p")), "a");
  EXPECT_THAT(
      scheduler->Schedule(SmallPod("p")),
      StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("default/p")));
  scheduler->Inspect([](const ClusterState& state) {
    EXPECT_EQ(state.pod_count(), 1u);
    EXPECT_EQ(state.FindNode("a")->total_used_memory_mib(), 10 * kGiB);
  });
}

TEST(SchedulerTest, ReleaseFreesTheShares) {
  auto scheduler = MakeScheduler(MakeConfig());
  ASSERT_NE(scheduler, nullptr);
  ASSERT_OK(scheduler->UpsertNode(MakeNode("a", 1)));
  ASSERT_EQ(Place(*scheduler, SmallPod("first", 60 * kGiB)), "a");
  absl::StatusOr<Decision> blocked =
      scheduler->Schedule(SmallPod("second", 60 * kGiB));
  ASSERT_OK(blocked);
  EXPECT_FALSE(blocked->allocation.has_value());
  EXPECT_THAT(
      blocked->reasons,
      ElementsAre(Pair("a", StartsWith("InsufficientMemory gpu=GPU-a-0 "
                                       "free=20480MiB want=61440MiB"))));

  scheduler->Release("uid-first");
  scheduler->Release("uid-first");  // idempotent
  scheduler->Release("uid-never-placed");
  EXPECT_EQ(Place(*scheduler, SmallPod("second", 60 * kGiB)), "a");
  scheduler->Inspect([](const ClusterState& state) {
    EXPECT_EQ(state.pod_count(), 1u);
    EXPECT_EQ(state.FindPod("uid-first"), nullptr);
    EXPECT_NE(state.FindPod("uid-second"), nullptr);
    EXPECT_EQ(state.FindNode("a")->total_used_memory_mib(), 60 * kGiB);
    EXPECT_OK(state.CheckInvariants());
  });
  // The released uid may be scheduled again.
  scheduler->Release("uid-second");
  EXPECT_EQ(Place(*scheduler, SmallPod("first", 60 * kGiB)), "a");
}

// A preemption simulation's question: would the pod fit if these pods
// were gone? Only pods placed on that node count; the state is untouched.
TEST(SchedulerTest, FilterNodeWithoutReleasesOnlyTheNamedPodsOfTheNode) {
  auto scheduler = MakeScheduler(MakeConfig());
  ASSERT_NE(scheduler, nullptr);
  ASSERT_OK(scheduler->UpsertNode(MakeNode("a", 1)));
  ASSERT_OK(scheduler->UpsertNode(MakeNode("b", 1)));
  ASSERT_EQ(Place(*scheduler, PinnedPod("first", "GPU-a-0", 60 * kGiB)), "a");
  ASSERT_EQ(Place(*scheduler, PinnedPod("other", "GPU-b-0", 60 * kGiB)), "b");
  const PodRequest second = SmallPod("second", 60 * kGiB);
  auto filter = [&](const std::string& node,
                    const std::vector<std::string>& released) {
    absl::StatusOr<NodeVerdict> verdict =
        scheduler->FilterNodeWithout(second, node, released);
    EXPECT_TRUE(verdict.ok()) << verdict.status();
    return verdict.ok() ? *verdict : NodeVerdict{};
  };

  EXPECT_FALSE(filter("a", {}).fit.fits());
  const NodeVerdict without_first = filter("a", {"uid-first"});
  EXPECT_TRUE(without_first.fit.fits()) << without_first.fit.Reason();
  EXPECT_GT(without_first.score, 0);
  // A pod of another node, or none at all, frees nothing here.
  const NodeVerdict without_other = filter("a", {"uid-other", "uid-gone"});
  EXPECT_FALSE(without_other.fit.fits());
  EXPECT_EQ(without_other.fit.code, ReasonCode::kInsufficientMemory);
  EXPECT_EQ(filter("zz", {"uid-first"}).fit.code, ReasonCode::kNodeUnknown);
  // Nothing was released for real.
  EXPECT_FALSE(filter("a", {}).fit.fits());
  scheduler->Inspect(
      [](const ClusterState& state) { EXPECT_OK(state.CheckInvariants()); });
}

TEST(SchedulerTest, FilterOnNamedNodesReportsUnknownOnes) {
  auto scheduler = MakeScheduler(MakeConfig());
  ASSERT_NE(scheduler, nullptr);
  ASSERT_OK(scheduler->UpsertNode(MakeNode("b", 2)));
  ASSERT_OK(scheduler->UpsertNode(MakeNode("a", 2)));
  std::vector<std::string> names = {"ghost", "b"};
  std::vector<NodeVerdict> verdicts = *scheduler->Filter(SmallPod("p"), names);
  ASSERT_THAT(verdicts, SizeIs(2));
  // In the given order, not sorted.
  EXPECT_EQ(verdicts[0].node, "ghost");
  EXPECT_EQ(verdicts[0].fit.code, ReasonCode::kNodeUnknown);
  EXPECT_THAT(verdicts[0].fit.message, StartsWith("NodeUnknown"));
  EXPECT_THAT(verdicts[0].fit.message, HasSubstr("ghost"));
  EXPECT_EQ(verdicts[1].node, "b");
  EXPECT_TRUE(verdicts[1].fit.fits()) << verdicts[1].fit.message;
  // The allocation stays with the scheduler for the reserve step.
  EXPECT_EQ(verdicts[1].fit.allocation.node_name, "");
  // Filter commits nothing.
  scheduler->Inspect(
      [](const ClusterState& state) { EXPECT_EQ(state.pod_count(), 0u); });
  absl::StatusOr<ReserveOutcome> reserved =
      scheduler->Reserve(SmallPod("p"), names);
  ASSERT_OK(reserved);
  ASSERT_TRUE(reserved->placed.has_value());
  EXPECT_EQ(reserved->placed->fit.allocation.node_name, "b");
  ASSERT_THAT(reserved->rejected, SizeIs(1));
  EXPECT_EQ(reserved->rejected[0].fit.code, ReasonCode::kNodeUnknown);
}

// The whole decision over a host's candidate list: the best of those nodes,
// the annotations of its record on request, and every candidate's reason
// when none fits.
TEST(SchedulerTest, ScheduleChoosesAmongTheCandidates) {
  auto scheduler = MakeScheduler(MakeConfig());
  ASSERT_NE(scheduler, nullptr);
  ASSERT_OK(scheduler->UpsertNode(MakeNode("a", 2)));
  ASSERT_OK(scheduler->UpsertNode(MakeNode("b", 2)));
  ASSERT_OK(scheduler->UpsertNode(MakeNode("c", 2)));
  // c is the fullest, so binpack over every node would take it.
  ASSERT_EQ(Place(*scheduler, PinnedPod("resident", "GPU-c-0", 20 * kGiB)),
            "c");
  ScheduleOptions options;
  options.candidates = {"b", "a"};
  options.annotations = true;
  absl::StatusOr<Decision> decision =
      scheduler->Schedule(SmallPod("p"), options);
  ASSERT_OK(decision);
  ASSERT_TRUE(decision->allocation.has_value());
  EXPECT_EQ(decision->allocation->node_name, "a");  // a tie: the smaller name
  EXPECT_THAT(decision->annotations,
              ::testing::Contains(Pair("hami.io/vgpu-node", "a")));

  options.candidates = {"b", "ghost"};
  options.annotations = false;
  decision = scheduler->Schedule(SmallPod("big", 90 * kGiB), options);
  ASSERT_OK(decision);
  EXPECT_FALSE(decision->allocation.has_value());
  EXPECT_THAT(decision->reasons,
              UnorderedElementsAre(Pair("b", StartsWith("InsufficientMemory")),
                                   Pair("ghost", StartsWith("NodeUnknown"))));
  EXPECT_EQ(decision->reason_counts,
            (std::map<std::string, int64_t>{{"InsufficientMemory", 1},
                                            {"NodeUnknown", 1}}));
  EXPECT_TRUE(decision->annotations.empty());
}

TEST(SchedulerTest, ConfigPoliciesMustBeRegistered) {
  BackendRegistry registry;
  ASSERT_OK(RegisterBuiltinBackends(registry));
  EXPECT_THAT(
      Scheduler::Create(MakeConfig("fifo", "binpack"), registry),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("scheduler.nodePolicy"), HasSubstr("\"fifo\""),
                     HasSubstr("registered: bestfit, binpack, fgd, fragaware, "
                               "mutex, numa, packing, spread, "
                               "topology-aware"))));
  EXPECT_THAT(
      Scheduler::Create(MakeConfig("binpack", "fifo"), registry),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("scheduler.gpuPolicy"), HasSubstr("\"fifo\""))));
}

// Modes are open (each backend names its own), but a GPU, a pod or the
// config naming one that no registered backend serves is refused with the
// value and what is registered.
TEST(SchedulerTest, UnknownModesAreRefused) {
  BackendRegistry registry;
  ASSERT_OK(RegisterBuiltinBackends(registry));
  Config config = MakeConfig();
  config.scheduler.enabled_modes = {hamicore::kMode, SharingMode("vgpu")};
  EXPECT_THAT(
      Scheduler::Create(config, registry),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("scheduler.modes[1]"), HasSubstr("\"vgpu\""),
                     HasSubstr("registered: hami-core, mig, mps"))));

  auto scheduler = MakeScheduler(MakeConfig());
  ASSERT_NE(scheduler, nullptr);
  NodeInventory node = MakeNode("a", 2);
  node.gpus[1].mode = SharingMode("vgpu");
  EXPECT_THAT(
      scheduler->UpsertNode(node),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("node a gpu GPU-a-1"), HasSubstr("\"vgpu\""))));
  // A known mode the config leaves off registers; its GPUs serve nobody.
  node.gpus[1].mode = mig::kMode;
  ASSERT_OK(scheduler->UpsertNode(node));

  PodRequest pod = SmallPod("p");
  pod.mode = SharingMode("vgpu");
  EXPECT_THAT(scheduler->Schedule(pod),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("pod default/p"), HasSubstr("\"vgpu\""),
                             HasSubstr("vgpu-mode"))));
}

// A pod's policy annotation is taken as HAMi takes it: a name that is not
// registered means HAMi's default for the level (spread for GPUs,
// gpu_policy.go Less; binpack for nodes, node_policy.go Less), and a chain
// skips the words it does not know. Weights that do not read refuse the
// pod, naming the annotation (score_test.go
// TestCalcScoreRejectsInvalidDeviceScoringWeights).
TEST(SchedulerTest, UnknownPodPoliciesTakeHamisDefaults) {
  auto scheduler = MakeScheduler(MakeConfig("spread", "binpack"));
  ASSERT_NE(scheduler, nullptr);
  NodeInventory node = MakeNode("a", 2);
  ASSERT_OK(scheduler->UpsertNode(node));
  ASSERT_OK(scheduler->UpsertNode(MakeNode("b", 2)));
  ASSERT_EQ(Place(*scheduler, SmallPod("first", 8 * kGiB)), "a");
  // Binpack (the config) would take a's used GPU; unknown means spread.
  // Node "fifo" means binpack (the config says spread): a again.
  PodRequest pod = SmallPod("unknown", 8 * kGiB);
  pod.gpu_policy = "fifo";
  pod.node_policy = "fifo";
  auto decision = scheduler->Schedule(pod);
  ASSERT_OK(decision);
  ASSERT_TRUE(decision->allocation.has_value());
  EXPECT_EQ(decision->allocation->node_name, "a");
  EXPECT_EQ(decision->allocation->containers[0].devices[0].gpu_index, 1);
  // A chain of unknown words ranks as spread too.
  PodRequest chained = SmallPod("chained", kGiB);
  chained.gpu_policy = "fifo,first-fit";
  chained.node_policy = "fifo";
  ASSERT_EQ(Place(*scheduler, chained), "a");
  PodRequest weighted = SmallPod("w");
  weighted.scoring_weights = "slot=1,core=-1,memory=3";
  EXPECT_THAT(scheduler->Schedule(weighted),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("pod default/w"),
                             HasSubstr("hami.io/device-scoring-weights"),
                             HasSubstr("must not be negative"))));
}

TEST(SchedulerTest, HostCpuIsChecked) {
  auto scheduler = MakeScheduler(MakeConfig());
  ASSERT_NE(scheduler, nullptr);
  NodeInventory node = MakeNode("a", 2);
  node.cpu_milli = 4000;
  node.memory_mib = 16 * kGiB;
  ASSERT_OK(scheduler->UpsertNode(node));
  PodRequest first = SmallPod("first", kGiB);
  first.cpu_milli = 3000;
  ASSERT_EQ(Place(*scheduler, first), "a");

  PodRequest second = SmallPod("second", kGiB);
  second.cpu_milli = 1500;
  absl::StatusOr<Decision> outcome = scheduler->Schedule(second);
  ASSERT_OK(outcome);
  EXPECT_FALSE(outcome->allocation.has_value());
  EXPECT_THAT(outcome->reasons,
              ElementsAre(Pair("a", "InsufficientCpu free=1000m want=1500m")));
  std::vector<NodeVerdict> verdicts = *scheduler->Filter(second);
  ASSERT_THAT(verdicts, SizeIs(1));
  EXPECT_EQ(verdicts[0].fit.code, ReasonCode::kInsufficientCpu);

  // Exactly what is left fits.
  second.cpu_milli = 1000;
  EXPECT_EQ(Place(*scheduler, second), "a");
  // Releasing gives the CPU back.
  scheduler->Release("uid-first");
  PodRequest third = SmallPod("third", kGiB);
  third.cpu_milli = 3000;
  EXPECT_EQ(Place(*scheduler, third), "a");
}

TEST(SchedulerTest, HostMemoryIsChecked) {
  auto scheduler = MakeScheduler(MakeConfig());
  ASSERT_NE(scheduler, nullptr);
  NodeInventory node = MakeNode("a", 2);
  node.cpu_milli = 64000;
  node.memory_mib = 16 * kGiB;
  ASSERT_OK(scheduler->UpsertNode(node));
  PodRequest first = SmallPod("first", kGiB);
  first.memory_mib = 12 * kGiB;
  ASSERT_EQ(Place(*scheduler, first), "a");
  PodRequest second = SmallPod("second", kGiB);
  second.memory_mib = 8 * kGiB;
  std::vector<NodeVerdict> verdicts = *scheduler->Filter(second);
  ASSERT_THAT(verdicts, SizeIs(1));
  EXPECT_EQ(verdicts[0].fit.code, ReasonCode::kInsufficientNodeMemory);
  EXPECT_EQ(verdicts[0].fit.message,
            "InsufficientNodeMemory free=4096MiB want=8192MiB");
  scheduler->Release("uid-first");
  EXPECT_EQ(Place(*scheduler, second), "a");
}

// Found on the real control plane (tests/cluster e2e): a Volcano-dialect
// pod was placed on a node whose device plugin serves only nvidia.com/gpu,
// and kubelet, which admits a pod whose extended resource the node lacks
// without calling any plugin, would have run it without its share. A node
// that advertises GPU count resources serves only pods asking by one of
// them; one that advertises none is not checked.
TEST(SchedulerTest, ANodeServesOnlyTheGpuResourcesItAdvertises) {
  auto scheduler = MakeScheduler(MakeConfig());
  ASSERT_NE(scheduler, nullptr);
  for (int i = 0; i < 4; ++i) {
    NodeInventory hami = MakeNode(absl::StrCat("hami-", i), 2);
    hami.gpu_resources = {"nvidia.com/gpu"};
    ASSERT_OK(scheduler->UpsertNode(hami));
    NodeInventory volcano = MakeNode(absl::StrCat("volcano-", i), 2);
    volcano.gpu_resources = {"volcano.sh/vgpu-number"};
    ASSERT_OK(scheduler->UpsertNode(volcano));
  }
  for (int i = 0; i < 8; ++i) {
    PodRequest hami = SmallPod(absl::StrCat("hami-pod-", i));
    hami.containers[0].count_resource = "nvidia.com/gpu";
    EXPECT_THAT(Place(*scheduler, hami), ::testing::StartsWith("hami-"));
    PodRequest volcano = SmallPod(absl::StrCat("volcano-pod-", i));
    volcano.dialect = Dialect::kVolcano;
    volcano.containers[0].count_resource = "volcano.sh/vgpu-number";
    EXPECT_THAT(Place(*scheduler, volcano), ::testing::StartsWith("volcano-"));
  }
  PodRequest hami = SmallPod("hami-pod");
  hami.containers[0].count_resource = "nvidia.com/gpu";
  const std::string node = "volcano-0";
  std::vector<NodeVerdict> verdicts =
      *scheduler->Filter(hami, absl::MakeConstSpan(&node, 1));
  ASSERT_THAT(verdicts, SizeIs(1));
  EXPECT_EQ(verdicts[0].fit.code, ReasonCode::kResourceNotServed);
  EXPECT_EQ(verdicts[0].fit.message,
            "ResourceNotServed node=volcano-0 advertises "
            "volcano.sh/vgpu-number, not nvidia.com/gpu");
  EXPECT_TRUE(verdicts[0].fit.code.unresolvable());
  // A pod too big for every node: the Volcano nodes are counted as not
  // serving it, not as short of memory.
  PodRequest huge = SmallPod("huge", 1000 * kGiB);
  huge.containers[0].count_resource = "nvidia.com/gpu";
  absl::StatusOr<Decision> refused = scheduler->Schedule(huge);
  ASSERT_OK(refused);
  EXPECT_FALSE(refused->allocation.has_value());
  EXPECT_EQ(refused->reason_counts["ResourceNotServed"], 4);
  // Asked by no known resource (a hand-built request): not checked.
  EXPECT_THAT(Place(*scheduler, SmallPod("unknown")), ::testing::Not(""));
}

TEST(SchedulerTest, UntrackedHostResourcesAreNotChecked) {
  auto scheduler = MakeScheduler(MakeConfig());
  ASSERT_NE(scheduler, nullptr);
  ASSERT_OK(scheduler->UpsertNode(MakeNode("a", 1)));  // cpu/memory 0
  PodRequest pod = SmallPod("p", kGiB);
  pod.cpu_milli = 1000000;
  pod.memory_mib = 1 << 30;
  EXPECT_EQ(Place(*scheduler, pod), "a");
}

TEST(SchedulerTest, ModeThatIsNotEnabledIsAModeMismatch) {
  auto scheduler = MakeScheduler(MakeConfig());
  ASSERT_NE(scheduler, nullptr);
  ASSERT_OK(scheduler->UpsertNode(MakeNode("a", 2)));
  ASSERT_OK(scheduler->UpsertNode(MakeNode("b", 2)));
  PodRequest pod = SmallPod("p");
  pod.mode = mig::kMode;
  absl::StatusOr<Decision> outcome = scheduler->Schedule(pod);
  ASSERT_OK(outcome);
  EXPECT_FALSE(outcome->allocation.has_value());
  EXPECT_THAT(outcome->reasons,
              ElementsAre(Pair("a", StartsWith("ModeMismatch")),
                          Pair("b", StartsWith("ModeMismatch"))));
  EXPECT_THAT(outcome->reasons.at("a"), HasSubstr("mig"));
  std::vector<NodeVerdict> verdicts = *scheduler->Filter(pod);
  ASSERT_THAT(verdicts, SizeIs(2));
  EXPECT_EQ(verdicts[0].fit.code, ReasonCode::kModeMismatch);
  // The enabled mode, named explicitly, is fine.
  pod.mode = hamicore::kMode;
  EXPECT_EQ(Place(*scheduler, pod), "a");
}

TEST(SchedulerTest, EditsForAPlacedContainer) {
  auto scheduler = MakeScheduler(MakeConfig());
  ASSERT_NE(scheduler, nullptr);
  ASSERT_OK(scheduler->UpsertNode(MakeNode("a", 2)));
  ContainerRequest sidecar;
  sidecar.name = "sidecar";
  PodRequest pod = MakePod("p", {sidecar, GpuContainer("main", 2, 6000, 30)});
  absl::StatusOr<Decision> outcome = scheduler->Schedule(pod);
  ASSERT_OK(outcome);
  ASSERT_TRUE(outcome->allocation.has_value());
  const PodAllocation& allocation = *outcome->allocation;

  EditOptions options;
  options.pod_uid = pod.uid;
  options.container_name = "main";
  absl::StatusOr<ContainerEdits> edits =
      scheduler->Edits(allocation, 1, options);
  ASSERT_OK(edits);
  std::map<std::string, std::string> env(edits->env.begin(), edits->env.end());
  EXPECT_EQ(env["NVIDIA_VISIBLE_DEVICES"], "GPU-a-0,GPU-a-1");
  EXPECT_EQ(env["CUDA_DEVICE_MEMORY_LIMIT_0"], "6000m");
  EXPECT_EQ(env["CUDA_DEVICE_MEMORY_LIMIT_1"], "6000m");
  EXPECT_EQ(env["CUDA_DEVICE_SM_LIMIT"], "30");
  EXPECT_THAT(edits->device_ids, ElementsAre("GPU-a-0", "GPU-a-1"));
  EXPECT_THAT(edits->mounts, SizeIs(4));

  options.container_name = "sidecar";
  edits = scheduler->Edits(allocation, 0, options);
  ASSERT_OK(edits);
  EXPECT_THAT(edits->env, IsEmpty());  // overwrite_env is off

  EXPECT_THAT(scheduler->Edits(allocation, 2, options),
              StatusIs(absl::StatusCode::kOutOfRange, HasSubstr("default/p")));
}

// ----------------------------------------------------------------------------
// Concurrency

TEST(SchedulerTest, ConcurrentScheduleAndReleaseKeepTheStateConsistent) {
  auto scheduler = MakeScheduler(MakeConfig(kSpread, kBinpack));
  ASSERT_NE(scheduler, nullptr);
  for (int n = 0; n < 16; ++n) {
    ASSERT_OK(scheduler->UpsertNode(MakeNode(absl::StrCat("node-", n), 8)));
  }
  constexpr int kThreads = 4;
  constexpr int kPodsPerThread = 200;
  std::atomic<int> placed{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::string> uids;
      for (int i = 0; i < kPodsPerThread; ++i) {
        PodRequest pod = MakePod(absl::StrCat("t", t, "-p", i),
                                 {GpuContainer("c", 1, 1000, 5)});
        absl::StatusOr<Decision> outcome = scheduler->Schedule(pod);
        if (!outcome.ok() || !outcome->allocation.has_value()) {
          ++failures;
          continue;
        }
        ++placed;
        uids.push_back(pod.uid);
        // Readers run beside the writers.
        if (i % 10 == 0) (void)scheduler->Filter(pod);
      }
      for (size_t i = 0; i < uids.size(); i += 2) scheduler->Release(uids[i]);
    });
  }
  for (std::thread& thread : threads) thread.join();

  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(placed.load(), kThreads * kPodsPerThread);
  scheduler->Inspect([&](const ClusterState& state) {
    EXPECT_OK(state.CheckInvariants());
    const size_t kept = kThreads * kPodsPerThread / 2;
    EXPECT_EQ(state.pod_count(), kept);
    int64_t slots = 0;
    int64_t memory = 0;
    int64_t cores = 0;
    for (const auto& [name, node] : state.nodes()) {
      for (size_t i = 0; i < node->gpu_count(); ++i) {
        slots += node->ledger(i).used_slots();
        memory += node->ledger(i).used_memory_mib();
        cores += node->ledger(i).used_cores();
      }
    }
    EXPECT_EQ(slots, static_cast<int64_t>(kept));
    EXPECT_EQ(memory, static_cast<int64_t>(kept) * 1000);
    EXPECT_EQ(cores, static_cast<int64_t>(kept) * 5);
    // Each thread released its even-numbered pods and kept the odd ones.
    EXPECT_EQ(state.FindPod("uid-t0-p0"), nullptr);
    EXPECT_NE(state.FindPod("uid-t3-p199"), nullptr);
  });
}

}  // namespace
}  // namespace deviceshare

namespace deviceshare {
namespace {

TEST(ScheduleExplainTest, LimitsFullReasonsButCountsEveryNode) {
  BackendRegistry registry;
  ASSERT_OK(RegisterBuiltinBackends(registry));
  auto scheduler = Scheduler::Create(testing::MakeConfig(), registry);
  ASSERT_OK(scheduler);
  for (int n = 0; n < 6; ++n) {
    ASSERT_OK((*scheduler)
                  ->UpsertNode(testing::MakeNode(absl::StrCat("n", n), 1,
                                                 n < 4 ? 10000 : 20000)));
  }
  NodeInventory unhealthy = testing::MakeNode("n6", 1, 50000);
  unhealthy.gpus[0].healthy = false;
  ASSERT_OK((*scheduler)->UpsertNode(unhealthy));
  PodRequest pod =
      testing::MakePod("big", {testing::GpuContainer("c", 1, 30000, 0)});
  ScheduleOptions options;
  options.max_explained_nodes = 3;
  auto outcome = (*scheduler)->Schedule(pod, options);
  ASSERT_OK(outcome);
  ASSERT_FALSE(outcome->allocation.has_value());
  EXPECT_THAT(outcome->reason_counts,
              ::testing::ElementsAre(::testing::Pair("GpuUnhealthy", 1),
                                     ::testing::Pair("InsufficientMemory", 6)));
  // Each code's first node, then the next by name.
  EXPECT_THAT(
      outcome->reasons,
      ::testing::ElementsAre(
          ::testing::Pair(
              "n0", ::testing::StartsWith("InsufficientMemory gpu=GPU-n0-0 "
                                          "free=10000MiB want=30000MiB")),
          ::testing::Pair("n1", ::testing::StartsWith("InsufficientMemory")),
          ::testing::Pair("n6", ::testing::StartsWith("GpuUnhealthy"))));
}

}  // namespace
}  // namespace deviceshare

namespace deviceshare {
namespace {

// Annotations carry no mps marker: an allocation read back from a pod says
// hami-core, and the GPU it sits on decides.
TEST(SchedulerModesTest, AGrantReadBackTakesTheModeOfItsGpu) {
  Config config = MakeConfig();
  config.scheduler.enabled_modes = {hamicore::kMode, mps::kMode};
  std::unique_ptr<Scheduler> scheduler = MakeScheduler(config);
  ASSERT_NE(scheduler, nullptr);
  NodeInventory node = MakeNode("n1", 1);
  node.gpus[0].mode = mps::kMode;
  ASSERT_OK(scheduler->UpsertNode(node));
  PodRequest pod = SmallPod("p");
  PodAllocation allocation;
  allocation.pod_uid = pod.uid;
  allocation.pod_key = pod.Key();
  allocation.node_name = "n1";
  allocation.containers = {testing::Container(
      0, false, {testing::Grant(node.gpus[0].uuid, 10 * kGiB, 10)})};
  ASSERT_EQ(allocation.containers[0].devices[0].mode, hamicore::kMode);
  ASSERT_OK(scheduler->Bind(pod, allocation));
  auto used_slots = [&] {
    int32_t slots = -1;
    scheduler->Inspect([&](const ClusterState& state) {
      slots = state.FindNode("n1")->ledger(0).used_slots();
    });
    return slots;
  };
  EXPECT_EQ(used_slots(), 1);
  scheduler->Release(pod.uid);
  EXPECT_EQ(used_slots(), 0);
}

// Place tries the candidates in order and commits to the first that fits;
// the ones tried before it are reported, so a caller whose filter is a
// moment old learns which nodes stopped fitting.
TEST(SchedulerPlaceTest, ReportsTheCandidatesThatNoLongerFit) {
  auto scheduler = MakeScheduler(MakeConfig());
  ASSERT_TRUE(scheduler->UpsertNode(MakeNode("full", 1, 10000)).ok());
  ASSERT_TRUE(scheduler->UpsertNode(MakeNode("free", 1, 10000)).ok());
  const std::vector<std::string> order = {"full", "free"};
  ASSERT_TRUE(
      scheduler->Reserve(MakePod("a", {GpuContainer("c", 1, 9000)}), {order[0]})
          .ok());
  auto placed =
      scheduler->Reserve(MakePod("b", {GpuContainer("c", 1, 9000)}), order);
  ASSERT_TRUE(placed.ok());
  ASSERT_TRUE(placed->placed.has_value());
  EXPECT_EQ(placed->placed->node, "free");
  ASSERT_EQ(placed->rejected.size(), 1u);
  EXPECT_EQ(placed->rejected[0].node, "full");
  EXPECT_EQ(placed->rejected[0].fit.code, ReasonCode::kInsufficientMemory);
  // Nothing left: every candidate's verdict, and nothing placed.
  auto none =
      scheduler->Reserve(MakePod("c", {GpuContainer("c", 1, 9000)}), order);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->placed.has_value());
  EXPECT_EQ(none->rejected.size(), 2u);
}

}  // namespace
}  // namespace deviceshare
