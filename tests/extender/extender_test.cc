// The extender's logic (filter, prioritize, bind, watch feed) over an
// in-memory PodWriter; the HTTP layer is tested in extender_e2e_test.cc.
#include "deviceshare/extender/extender.h"

#include <atomic>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "deviceshare/backend/backend_registry.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/extender/serve.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/extender_calls.h"
#include "testing/fake_pod_writer.h"
#include "testing/fakes.h"
#include "testing/kube_objects.h"
#include "testing/status_matchers.h"

namespace deviceshare::extender {
namespace {

using ::deviceshare::testing::BindingFor;
using ::deviceshare::testing::ExtenderHarness;
using ::deviceshare::testing::FilterArgs;
using ::deviceshare::testing::GpuUuid;
using ::deviceshare::testing::HamiNodeObject;
using ::deviceshare::testing::HamiPodObject;
using ::deviceshare::testing::NewBuiltinScheduler;
using ::deviceshare::testing::PodSpec;
using ::deviceshare::testing::VolcanoPodObject;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

// Memory taken on every GPU of `node`, by position.
std::vector<int64_t> UsedMemory(const Scheduler& scheduler,
                                const std::string& node) {
  std::vector<int64_t> used;
  scheduler.Inspect([&](const ClusterState& state) {
    const NodeState* found = state.FindNode(node);
    if (found == nullptr) return;
    for (size_t i = 0; i < found->gpu_count(); ++i) {
      used.push_back(found->ledger(i).used_memory_mib());
    }
  });
  return used;
}

int64_t TotalUsed(const Scheduler& scheduler, const std::string& node) {
  int64_t total = 0;
  for (int64_t mib : UsedMemory(scheduler, node)) total += mib;
  return total;
}

// These tests bind many pods to a node with no node agent to report back:
// the in-flight rule is off here and tested in extender_inflight_test.cc.
ExtenderOptions WithoutInFlightRule() {
  ExtenderOptions options;
  options.in_flight_timeout = absl::ZeroDuration();
  return options;
}

class ExtenderTest : public ::testing::Test, public ExtenderHarness {
 protected:
  ExtenderTest() : ExtenderHarness(WithoutInFlightRule()) {}
};

TEST_F(ExtenderTest, FilterReservesTheBestNodeAndPrioritizeSteersToIt) {
  AddNodes({{.name = "a", .gpus = 2}, {.name = "b", .gpus = 2}});
  // Binpack: a node already in use beats an idle one.
  nlohmann::json first =
      AddPod(HamiPodObject({.name = "first", .memory_mib = 8000}));
  ASSERT_EQ(extender_.Bind(BindingFor(first, "b")), "");

  nlohmann::json pod = AddPod(HamiPodObject({.name = "p", .memory_mib = 8000}));
  FilterResult result = extender_.Filter(FilterArgs(pod, {"a", "b", "ghost"}));
  EXPECT_EQ(result.error, "");
  EXPECT_THAT(result.node_names, UnorderedElementsAre("a", "b"));
  EXPECT_THAT(result.failed_and_unresolvable_nodes,
              ElementsAre(::testing::Pair("ghost", HasSubstr("NodeUnknown"))));
  EXPECT_EQ(TotalUsed(*scheduler_, "b"), 16000);  // reserved on b
  EXPECT_EQ(TotalUsed(*scheduler_, "a"), 0);

  std::vector<HostPriority> priorities =
      extender_.Prioritize(FilterArgs(pod, {"a", "b"}));
  ASSERT_EQ(priorities.size(), 2u);
  EXPECT_EQ(priorities[1].host, "b");
  EXPECT_EQ(priorities[1].score, 10);
  EXPECT_LT(priorities[0].score, 10);
  EXPECT_GE(priorities[0].score, 0);
  EXPECT_EQ(extender_.stats().reservations_in_flight, 1);
}

TEST_F(ExtenderTest, RefilterDoesNotCountThePodAgainstItself) {
  AddNodes({{.name = "a", .gpus = 1, .memory_mib = 10000}});
  nlohmann::json pod = AddPod(HamiPodObject({.name = "p", .memory_mib = 9000}));
  EXPECT_THAT(extender_.Filter(FilterArgs(pod, {"a"})).node_names,
              ElementsAre("a"));
  EXPECT_THAT(extender_.Filter(FilterArgs(pod, {"a"})).node_names,
              ElementsAre("a"));
  EXPECT_EQ(TotalUsed(*scheduler_, "a"), 9000);
}

TEST_F(ExtenderTest, BindWritesTheHamiRecordThenTheBinding) {
  AddNodes({{.name = "a", .gpus = 2}});
  nlohmann::json pod =
      AddPod(HamiPodObject({.name = "p", .memory_mib = 3000, .cores = 50}));
  ASSERT_THAT(extender_.Filter(FilterArgs(pod, {"a"})).node_names,
              ElementsAre("a"));
  ASSERT_EQ(extender_.Bind(BindingFor(pod, "a")), "");

  nlohmann::json stored = *writer_.Pod("default/p");
  const nlohmann::json& annotations = stored["metadata"]["annotations"];
  const std::string record =
      annotations[keys::kHamiAllocated].get<std::string>();
  EXPECT_THAT(record, ::testing::MatchesRegex("GPU-a-[01],NVIDIA,3000,50:;"));
  EXPECT_EQ(annotations[keys::kHamiToAllocate], record);
  EXPECT_EQ(annotations[keys::kHamiNode], "a");
  EXPECT_EQ(annotations[keys::kHamiBindPhase], "allocating");
  EXPECT_EQ(annotations[keys::kHamiTime],
            absl::StrCat(absl::ToUnixSeconds(clock_.Now())));
  EXPECT_EQ(annotations[keys::kHamiBindTime], annotations[keys::kHamiTime]);
  EXPECT_EQ(stored["spec"]["nodeName"], "a");
  EXPECT_EQ(extender_.stats().binds, 1);
  EXPECT_EQ(extender_.stats().reservations_in_flight, 0);
  // Binding the same pod again where it is is not an error.
  EXPECT_EQ(extender_.Bind(BindingFor(pod, "a")), "");
}

TEST_F(ExtenderTest, VolcanoPodsGetVolcanoRecords) {
  AddNodes({{.name = "a", .gpus = 2}});
  nlohmann::json pod =
      AddPod(VolcanoPodObject({.name = "v", .memory_mib = 2000, .cores = 20}));
  ASSERT_EQ(extender_.Bind(BindingFor(pod, "a")), "");  // bind without filter
  const nlohmann::json annotations =
      (*writer_.Pod("default/v"))["metadata"]["annotations"];
  EXPECT_THAT(annotations[keys::kVolcanoAllocation].get<std::string>(),
              ::testing::MatchesRegex("GPU-a-[01],NVIDIA,2000,20:"));
  EXPECT_EQ(annotations[keys::kVolcanoToAllocate],
            annotations[keys::kVolcanoAllocation]);
  EXPECT_EQ(annotations[keys::kVolcanoNode], "a");
  EXPECT_EQ(annotations[keys::kVolcanoBindPhase], "allocating");
  EXPECT_FALSE(annotations.contains(keys::kHamiAllocated));
}

TEST_F(ExtenderTest, FailedBindingRollsBackRecordAndReservation) {
  AddNodes({{.name = "a", .gpus = 1, .memory_mib = 10000}});
  nlohmann::json pod = AddPod(HamiPodObject({.name = "p", .memory_mib = 9000}));
  ASSERT_THAT(extender_.Filter(FilterArgs(pod, {"a"})).node_names,
              ElementsAre("a"));
  writer_.FailNextBinds(1);
  std::string error = extender_.Bind(BindingFor(pod, "a"));
  EXPECT_THAT(error, HasSubstr("injected binding failure"));

  const nlohmann::json annotations =
      (*writer_.Pod("default/p"))["metadata"]["annotations"];
  EXPECT_FALSE(annotations.contains(keys::kHamiAllocated));
  EXPECT_FALSE(annotations.contains(keys::kHamiToAllocate));
  EXPECT_FALSE(annotations.contains(keys::kHamiNode));
  EXPECT_EQ(annotations[keys::kHamiBindPhase], "failed");
  EXPECT_EQ(TotalUsed(*scheduler_, "a"), 0);
  EXPECT_EQ(extender_.stats().bind_failures.at("Binding"), 1);
  ASSERT_FALSE(writer_.Events().empty());
  EXPECT_EQ(writer_.Events().back().reason, "BindingFailed");

  // The room is free again: a retry binds.
  ASSERT_THAT(extender_.Filter(FilterArgs(pod, {"a"})).node_names,
              ElementsAre("a"));
  EXPECT_EQ(extender_.Bind(BindingFor(pod, "a")), "");
  EXPECT_EQ(TotalUsed(*scheduler_, "a"), 9000);
}

TEST_F(ExtenderTest, FailedPatchReleasesWithoutBinding) {
  AddNodes({{.name = "a", .gpus = 1}});
  nlohmann::json pod = AddPod(HamiPodObject({.name = "p", .memory_mib = 9000}));
  writer_.FailNextPatches(1);
  EXPECT_THAT(extender_.Bind(BindingFor(pod, "a")),
              HasSubstr("injected patch"));
  EXPECT_THAT(writer_.BindingsByPod(), IsEmpty());
  EXPECT_EQ(TotalUsed(*scheduler_, "a"), 0);
}

TEST_F(ExtenderTest, BindElsewhereMovesTheReservationOrFails) {
  AddNodes({{.name = "a", .gpus = 1, .memory_mib = 10000},
            {.name = "b", .gpus = 1, .memory_mib = 10000}});
  nlohmann::json pod = AddPod(HamiPodObject({.name = "p", .memory_mib = 6000}));
  FilterResult result = extender_.Filter(FilterArgs(pod, {"a", "b"}));
  ASSERT_EQ(result.node_names.size(), 2u);
  const std::string reserved = TotalUsed(*scheduler_, "a") > 0 ? "a" : "b";
  const std::string other = reserved == "a" ? "b" : "a";
  ASSERT_EQ(extender_.Bind(BindingFor(pod, other)), "");
  EXPECT_EQ(TotalUsed(*scheduler_, reserved), 0);
  EXPECT_EQ(TotalUsed(*scheduler_, other), 6000);

  // A bind to a node with no room fails with the reason and frees nothing
  // it should keep.
  nlohmann::json big =
      AddPod(HamiPodObject({.name = "big", .memory_mib = 6000}));
  std::string error = extender_.Bind(BindingFor(big, other));
  EXPECT_THAT(error, HasSubstr("InsufficientMemory"));
  EXPECT_EQ(TotalUsed(*scheduler_, other), 6000);
  EXPECT_EQ(extender_.stats().bind_failures.at("NoFit"), 1);
}

TEST_F(ExtenderTest, NothingFitsGivesReasonsAndAnEvent) {
  AddNodes({{.name = "a", .gpus = 1, .memory_mib = 10000}});
  nlohmann::json pod =
      AddPod(HamiPodObject({.name = "p", .memory_mib = 20000}));
  FilterResult result = extender_.Filter(FilterArgs(pod, {"a"}));
  EXPECT_THAT(result.node_names, IsEmpty());
  EXPECT_THAT(result.failed_nodes.at("a"), HasSubstr("InsufficientMemory"));
  ASSERT_EQ(writer_.Events().size(), 1u);
  EXPECT_EQ(writer_.Events()[0].reason, "FilteringFailed");
  EXPECT_THAT(writer_.Events()[0].message,
              HasSubstr("0/1 nodes fit: 1 InsufficientMemory"));
  EXPECT_EQ(extender_.stats().rejections.at("InsufficientMemory"), 1);
}

TEST_F(ExtenderTest, PodsWithoutGpusPassEveryNode) {
  AddNodes({{.name = "a"}});
  nlohmann::json pod = HamiPodObject({.name = "cpu"});
  pod["spec"]["containers"][0]["resources"] = nlohmann::json::object();
  EXPECT_THAT(extender_.Filter(FilterArgs(pod, {"a", "x"})).node_names,
              ElementsAre("a", "x"));
}

TEST_F(ExtenderTest, BadPodIsAnErrorNamingTheField) {
  AddNodes({{.name = "a"}});
  nlohmann::json pod = HamiPodObject({.name = "bad", .memory_mib = 100});
  pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpumem"] =
      "-3";
  EXPECT_THAT(extender_.Filter(FilterArgs(pod, {"a"})).error,
              HasSubstr("nvidia.com/gpumem"));
}

TEST_F(ExtenderTest, UnboundReservationsExpire) {
  AddNodes({{.name = "a", .gpus = 1}});
  nlohmann::json pod = AddPod(HamiPodObject({.name = "p", .memory_mib = 9000}));
  ASSERT_THAT(extender_.Filter(FilterArgs(pod, {"a"})).node_names,
              ElementsAre("a"));
  clock_.Advance(absl::Seconds(29));
  EXPECT_EQ(extender_.ExpireReservations(), 0);
  clock_.Advance(absl::Seconds(2));
  EXPECT_EQ(extender_.ExpireReservations(), 1);
  EXPECT_EQ(TotalUsed(*scheduler_, "a"), 0);
  EXPECT_EQ(extender_.stats().reservations_expired, 1);
  // A late bind still works: it places the pod afresh.
  EXPECT_EQ(extender_.Bind(BindingFor(pod, "a")), "");
  EXPECT_EQ(TotalUsed(*scheduler_, "a"), 9000);
}

TEST_F(ExtenderTest, BoundPodsNeverExpire) {
  AddNodes({{.name = "a", .gpus = 1}});
  nlohmann::json pod = AddPod(HamiPodObject({.name = "p", .memory_mib = 9000}));
  ASSERT_EQ(extender_.Bind(BindingFor(pod, "a")), "");
  clock_.Advance(absl::Hours(1));
  EXPECT_EQ(extender_.ExpireReservations(), 0);
  EXPECT_EQ(TotalUsed(*scheduler_, "a"), 9000);
}

TEST_F(ExtenderTest, StaleWatchEventsDoNotReleaseABoundPod) {
  AddNodes({{.name = "a", .gpus = 1}});
  nlohmann::json pod = AddPod(HamiPodObject({.name = "p", .memory_mib = 9000}));
  ASSERT_EQ(extender_.Bind(BindingFor(pod, "a")), "");
  // The pod as it was before the patch: no record, no node.
  extender_.OnPodEvent("MODIFIED", pod);
  EXPECT_EQ(TotalUsed(*scheduler_, "a"), 9000);
  // Then as it is now; then deleted.
  extender_.OnPodEvent("MODIFIED", *writer_.Pod("default/p"));
  EXPECT_EQ(TotalUsed(*scheduler_, "a"), 9000);
  extender_.OnPodEvent("DELETED", *writer_.Pod("default/p"));
  EXPECT_EQ(TotalUsed(*scheduler_, "a"), 0);
}

TEST_F(ExtenderTest, ARestartRebuildsTheLedgersFromPodRecords) {
  AddNodes({{.name = "a", .gpus = 2}, {.name = "b", .gpus = 2}});
  std::vector<nlohmann::json> pods;
  for (int i = 0; i < 6; ++i) {
    nlohmann::json pod = AddPod(HamiPodObject(
        {.name = absl::StrCat("p", i), .memory_mib = 7000 + i, .cores = 10}));
    ASSERT_EQ(extender_.Filter(FilterArgs(pod, {"a", "b"})).error, "");
    ASSERT_EQ(extender_.Bind(BindingFor(pod, i % 2 ? "a" : "b")), "");
    pods.push_back(*writer_.Pod(absl::StrCat("default/p", i)));
  }
  // One pod finished, one was never bound (an earlier run died mid-bind).
  pods[0]["status"]["phase"] = "Succeeded";
  pods[1]["spec"].erase("nodeName");

  std::unique_ptr<Scheduler> restarted = NewBuiltinScheduler();
  Extender fresh(restarted.get(), &writer_, &clock_, ExtenderOptions{});
  fresh.OnPodsReplaced(pods);  // pods before nodes: kept until they register
  fresh.OnNodesReplaced({HamiNodeObject({.name = "a", .gpus = 2}),
                         HamiNodeObject({.name = "b", .gpus = 2})});
  EXPECT_EQ(TotalUsed(*restarted, "a"), TotalUsed(*scheduler_, "a"));
  EXPECT_EQ(TotalUsed(*restarted, "b"), TotalUsed(*scheduler_, "b") - 7000);
  // The unbound record holds its room for one TTL, then goes.
  clock_.Advance(absl::Seconds(31));
  EXPECT_EQ(fresh.ExpireReservations(), 1);
  EXPECT_EQ(TotalUsed(*restarted, "a"), TotalUsed(*scheduler_, "a") - 7001);
}

// A record in a form HAMi's own reader accepts but its writers no longer
// write (type column "NVIDIA-A100", a fifth field, no final ':' or ';'):
// a restarted serve charges it as HAMi would, so the GPU is not offered
// twice (docs/compatibility.md; HAMi pkg/device/devices.go).
TEST_F(ExtenderTest, LooseHamiRecordsAreChargedAsHamiChargesThem) {
  AddNodes({{.name = "a", .gpus = 1}});
  nlohmann::json pod =
      AddPod(HamiPodObject({.name = "old", .memory_mib = 7000, .cores = 10}));
  ASSERT_EQ(extender_.Filter(FilterArgs(pod, {"a"})).error, "");
  ASSERT_EQ(extender_.Bind(BindingFor(pod, "a")), "");
  nlohmann::json bound = *writer_.Pod("default/old");
  std::string record =
      bound["metadata"]["annotations"][keys::kHamiAllocated].get<std::string>();
  ASSERT_TRUE(absl::EndsWith(record, ",NVIDIA,7000,10:;")) << record;
  record.resize(record.size() - std::string(",NVIDIA,7000,10:;").size());
  bound["metadata"]["annotations"][keys::kHamiAllocated] =
      absl::StrCat(record, ",NVIDIA-A100,7000,10,0");

  std::unique_ptr<Scheduler> restarted = NewBuiltinScheduler();
  Extender fresh(restarted.get(), &writer_, &clock_, WithoutInFlightRule());
  fresh.OnNodesReplaced({HamiNodeObject({.name = "a", .gpus = 1})});
  fresh.OnPodsReplaced({bound});
  EXPECT_EQ(TotalUsed(*restarted, "a"), 7000);
}

// Volcano's decodeContainerDevices skips a device it cannot read and keeps
// the rest; a record without the last ':' is still charged
// (device_info_test.go TestAddResource, utils_test.go "valid entry kept").
TEST_F(ExtenderTest, LooseVolcanoRecordsAreChargedAsVolcanoChargesThem) {
  AddNodes({{.name = "a", .gpus = 1}});
  nlohmann::json pod = AddPod(
      VolcanoPodObject({.name = "old", .memory_mib = 2000, .cores = 20}));
  ASSERT_EQ(extender_.Bind(BindingFor(pod, "a")), "");
  nlohmann::json bound = *writer_.Pod("default/old");
  nlohmann::json& annotations = bound["metadata"]["annotations"];
  std::string record = annotations[keys::kVolcanoAllocation].get<std::string>();
  ASSERT_TRUE(absl::EndsWith(record, ":")) << record;
  record.pop_back();
  annotations[keys::kVolcanoAllocation] =
      absl::StrCat("GPU-a-0,NVIDIA,-5,30:", record, ";");
  annotations.erase(keys::kVolcanoToAllocate);

  std::unique_ptr<Scheduler> restarted = NewBuiltinScheduler();
  Extender fresh(restarted.get(), &writer_, &clock_, WithoutInFlightRule());
  fresh.OnNodesReplaced({HamiNodeObject({.name = "a", .gpus = 1})});
  fresh.OnPodsReplaced({bound});
  EXPECT_EQ(TotalUsed(*restarted, "a"), 2000);
}

// Volcano's AddPod for a pod it already counts is a no-op
// (hamicore_test.go:50 "duplicate add is a no-op", inventory F22): the same
// bound pod seen again, by a repeated event or a relist, is charged once.
TEST_F(ExtenderTest, ABoundPodSeenAgainIsChargedOnce) {
  AddNodes({{.name = "a", .gpus = 1}});
  nlohmann::json pod = AddPod(
      VolcanoPodObject({.name = "once", .memory_mib = 1000, .cores = 25}));
  ASSERT_EQ(extender_.Bind(BindingFor(pod, "a")), "");
  const nlohmann::json bound = *writer_.Pod("default/once");

  std::unique_ptr<Scheduler> restarted = NewBuiltinScheduler();
  Extender fresh(restarted.get(), &writer_, &clock_, WithoutInFlightRule());
  fresh.OnNodesReplaced({HamiNodeObject({.name = "a", .gpus = 1})});
  fresh.OnPodEvent("ADDED", bound);
  fresh.OnPodEvent("ADDED", bound);
  fresh.OnPodEvent("MODIFIED", bound);
  fresh.OnPodsReplaced({bound});
  EXPECT_EQ(TotalUsed(*restarted, "a"), 1000);
}

// HAMi's namespace GPU quota through serve's ResourceQuota watch: a pod
// that would take its namespace past limits.nvidia.com/gpumem fails every
// node with QuotaExceeded, other namespaces are not limited, and the quota
// leaves with its object.
TEST_F(ExtenderTest, NamespaceGpuQuotaFollowsItsResourceQuota) {
  AddNodes({{.name = "a", .gpus = 2}});
  const nlohmann::json quota = nlohmann::json::parse(R"({
      "apiVersion": "v1", "kind": "ResourceQuota",
      "metadata": {"name": "gpu", "namespace": "default"},
      "spec": {"hard": {"limits.nvidia.com/gpumem": "4000", "cpu": "8"}}})");
  extender_.OnResourceQuotasReplaced({quota});
  nlohmann::json first =
      AddPod(HamiPodObject({.name = "first", .memory_mib = 3000}));
  ASSERT_EQ(extender_.Bind(BindingFor(first, "a")), "");
  nlohmann::json second =
      AddPod(HamiPodObject({.name = "second", .memory_mib = 2000}));
  FilterResult refused = extender_.Filter(FilterArgs(second, {"a"}));
  EXPECT_THAT(refused.node_names, IsEmpty());
  EXPECT_THAT(
      refused.failed_nodes.at("a"),
      AllOf(HasSubstr("QuotaExceeded"), HasSubstr("namespace default"),
            HasSubstr("3000MiB held + 2000MiB wanted > limit 4000MiB")));
  // A bad quota object is logged and changes nothing.
  nlohmann::json bad = quota;
  bad["spec"]["hard"]["limits.nvidia.com/gpumem"] = "-1";
  extender_.OnResourceQuotaEvent("MODIFIED", bad);
  EXPECT_THAT(extender_.Filter(FilterArgs(second, {"a"})).node_names,
              IsEmpty());
  extender_.OnResourceQuotaEvent("DELETED", quota);
  EXPECT_THAT(extender_.Filter(FilterArgs(second, {"a"})).node_names,
              ElementsAre("a"));
}

std::unique_ptr<Scheduler> SchedulerWithMemoryFactor(int32_t factor) {
  Config config = ::deviceshare::testing::MakeConfig();
  config.device.memory_factor = factor;
  BackendRegistry registry;
  EXPECT_OK(RegisterBuiltinBackends(registry));
  auto scheduler = Scheduler::Create(config, registry);
  EXPECT_OK(scheduler);
  return *std::move(scheduler);
}

// Volcano counts memory in gpuMemoryFactor units in its registration and
// its record alike (upstream-volcano.md §9): with factor 2 a pod asking
// 3000 is given 6000 MiB and its record says 3000, which a restarted serve
// charges as 6000 MiB.
TEST_F(ExtenderTest, VolcanoRecordsAreInMemoryFactorUnits) {
  std::unique_ptr<Scheduler> scheduler = SchedulerWithMemoryFactor(2);
  Extender extender(scheduler.get(), &writer_, &clock_, WithoutInFlightRule());
  const nlohmann::json node = ::deviceshare::testing::VolcanoNodeObject(
      {.name = "v", .gpus = 1, .memory_mib = 8192, .split = 4});
  extender.OnNodesReplaced({node});
  nlohmann::json pod = AddPod(
      VolcanoPodObject({.name = "old", .memory_mib = 3000, .cores = 25}));
  ASSERT_EQ(extender.Bind(BindingFor(pod, "v")), "");
  EXPECT_EQ(TotalUsed(*scheduler, "v"), 6000);
  const nlohmann::json bound = *writer_.Pod("default/old");
  EXPECT_EQ(bound["metadata"]["annotations"][keys::kVolcanoAllocation],
            "GPU-v-0,NVIDIA,3000,25:");

  std::unique_ptr<Scheduler> restarted = SchedulerWithMemoryFactor(2);
  Extender fresh(restarted.get(), &writer_, &clock_, WithoutInFlightRule());
  fresh.OnNodesReplaced({node});
  fresh.OnPodsReplaced({bound});
  EXPECT_EQ(TotalUsed(*restarted, "v"), 6000);
}

nlohmann::json SpreadGroupPod(const std::string& name) {
  nlohmann::json pod =
      VolcanoPodObject({.name = name, .memory_mib = 4096, .cores = 25});
  pod["metadata"]["annotations"]["volcano.sh/vgpu-podgroup-policy"] = "spread";
  pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] = "job-1";
  return pod;
}

// Volcano's podgroup spread holds for pods already bound when serve starts:
// their group comes back with their record (spread_integration_test.go
// TestSpreadWithNoRoomFails, across a restart).
TEST_F(ExtenderTest, PodgroupSpreadHoldsForPodsReadBackFromTheApi) {
  AddNodes({{.name = "a", .gpus = 1}});
  nlohmann::json first = AddPod(SpreadGroupPod("first"));
  ASSERT_EQ(extender_.Bind(BindingFor(first, "a")), "");

  std::unique_ptr<Scheduler> restarted = NewBuiltinScheduler();
  Extender fresh(restarted.get(), &writer_, &clock_, WithoutInFlightRule());
  fresh.OnNodesReplaced({HamiNodeObject({.name = "a", .gpus = 1})});
  fresh.OnPodsReplaced({*writer_.Pod("default/first")});
  nlohmann::json second = AddPod(SpreadGroupPod("second"));
  FilterResult result = fresh.Filter(FilterArgs(second, {"a"}));
  EXPECT_THAT(result.node_names, IsEmpty());
  EXPECT_THAT(result.failed_nodes,
              ElementsAre(::testing::Pair("a", HasSubstr("GroupOnGpu"))));
}

// device_test.go TestFit_DeviceCordon "running pods on a cordoned device
// are unaffected": cordoning a GPU in use keeps its pod charged, and new
// pods go elsewhere.
TEST_F(ExtenderTest, DeviceCordonStopsNewPodsAndKeepsRunningOnes) {
  AddNodes({{.name = "a", .gpus = 2}});
  nlohmann::json first =
      AddPod(HamiPodObject({.name = "first", .memory_mib = 1000}));
  ASSERT_EQ(extender_.Bind(BindingFor(first, "a")), "");
  const std::string record = (*writer_.Pod(
      "default/first"))["metadata"]["annotations"][keys::kHamiAllocated];
  const std::string used = record.substr(0, record.find(','));
  nlohmann::json node = HamiNodeObject({.name = "a", .gpus = 2});
  node["metadata"]["annotations"]["hami.io/device-cordon"] = used;
  extender_.OnNodeEvent("MODIFIED", node);
  EXPECT_EQ(TotalUsed(*scheduler_, "a"), 1000);

  nlohmann::json second =
      AddPod(HamiPodObject({.name = "second", .memory_mib = 1000}));
  ASSERT_EQ(extender_.Bind(BindingFor(second, "a")), "");
  const std::string second_record = (*writer_.Pod(
      "default/second"))["metadata"]["annotations"][keys::kHamiAllocated];
  EXPECT_FALSE(absl::StartsWith(second_record, used)) << second_record;
  EXPECT_EQ(TotalUsed(*scheduler_, "a"), 2000);
}

// Kind 3, registrations: serve takes what upstream takes (a Volcano
// registration whose last entry lacks its ':', utils.go decodeNodeDevices)
// and refuses what HAMi refuses (pair scores that are not JSON,
// device_test.go:2501), while the other nodes are still served.
TEST_F(ExtenderTest, RegistrationsAreTakenAndRefusedAsUpstream) {
  nlohmann::json loose =
      ::deviceshare::testing::VolcanoNodeObject({.name = "loose", .gpus = 2});
  std::string value =
      loose["metadata"]["annotations"]["volcano.sh/node-vgpu-register"];
  value.pop_back();
  loose["metadata"]["annotations"]["volcano.sh/node-vgpu-register"] = value;
  nlohmann::json scored = HamiNodeObject({.name = "scored", .gpus = 1});
  scored["metadata"]["annotations"]["hami.io/node-nvidia-score"] = "not-json";
  extender_.OnNodesReplaced({loose, scored});
  nlohmann::json pod = AddPod(HamiPodObject({.name = "p", .memory_mib = 1000}));
  FilterResult result = extender_.Filter(FilterArgs(pod, {"loose", "scored"}));
  EXPECT_THAT(result.node_names, ElementsAre("loose"));
  EXPECT_THAT(result.failed_and_unresolvable_nodes,
              ElementsAre(::testing::Pair("scored", HasSubstr("NodeUnknown"))));
}

// Kind 1 on the wire: the node's hami.io/node-nvidia-score reaches the
// topology-aware policy, and a pod's comma chain and device-scoring-weights
// are read from its annotations (device_test.go TestFit_Topology*,
// score_test.go device-scoring-weights). Weights that do not read refuse
// that pod alone.
TEST_F(ExtenderTest, TopologyScoresAndPolicyChainsComeFromTheObjects) {
  nlohmann::json node = HamiNodeObject({.name = "a", .gpus = 4});
  nlohmann::json scores = nlohmann::json::array();
  for (int i = 0; i < 4; ++i) {
    nlohmann::json peers = nlohmann::json::object();
    for (int j = 0; j < 4; ++j) {
      if (i != j) peers[GpuUuid("a", j)] = (i / 2 == j / 2 && i < 2) ? 100 : 10;
    }
    scores.push_back({{"uuid", GpuUuid("a", i)}, {"score", peers}});
  }
  node["metadata"]["annotations"]["hami.io/node-nvidia-score"] = scores.dump();
  extender_.OnNodesReplaced({node});

  nlohmann::json pod =
      HamiPodObject({.name = "pair", .gpus = 2, .memory_mib = 1000});
  pod["metadata"]["annotations"]["hami.io/gpu-scheduler-policy"] =
      "spread, topology-aware";
  pod["metadata"]["annotations"]["hami.io/device-scoring-weights"] =
      "slot=1,core=1,memory=2";
  AddPod(pod);
  ASSERT_EQ(extender_.Bind(BindingFor(pod, "a")), "");
  const std::string record = (*writer_.Pod(
      "default/pair"))["metadata"]["annotations"][keys::kHamiAllocated];
  // Spread alone would take GPUs 3 and 2 (idle ties: highest index first
  // in a chain); the NVLink pair is 0-1.
  EXPECT_THAT(record,
              AllOf(HasSubstr(GpuUuid("a", 0)), HasSubstr(GpuUuid("a", 1))));

  nlohmann::json bad = HamiPodObject({.name = "bad", .memory_mib = 1000});
  bad["metadata"]["annotations"]["hami.io/device-scoring-weights"] = "slot=1";
  AddPod(bad);
  FilterResult refused = extender_.Filter(FilterArgs(bad, {"a"}));
  EXPECT_THAT(refused.error, HasSubstr("hami.io/device-scoring-weights"));
  nlohmann::json good =
      AddPod(HamiPodObject({.name = "good", .memory_mib = 1000}));
  EXPECT_THAT(extender_.Filter(FilterArgs(good, {"a"})).node_names,
              ElementsAre("a"));
}

TEST_F(ExtenderTest, NodeHeartbeatsDoNotRebuildAndDeletionsRelease) {
  AddNodes({{.name = "a", .gpus = 1}});
  nlohmann::json pod = AddPod(HamiPodObject({.name = "p", .memory_mib = 9000}));
  ASSERT_EQ(extender_.Bind(BindingFor(pod, "a")), "");
  extender_.OnNodeEvent("MODIFIED", HamiNodeObject({.name = "a", .gpus = 1}));
  EXPECT_EQ(TotalUsed(*scheduler_, "a"), 9000);
  extender_.OnNodeEvent("DELETED", HamiNodeObject({.name = "a", .gpus = 1}));
  EXPECT_THAT(UsedMemory(*scheduler_, "a"), IsEmpty());
  // The pod comes back onto the ledger when the node registers again.
  extender_.OnNodeEvent("ADDED", HamiNodeObject({.name = "a", .gpus = 1}));
  EXPECT_EQ(TotalUsed(*scheduler_, "a"), 9000);
}

// Acceptance: 200 pods each asking a tenth of a GPU, filtered and bound in
// parallel against one 8-GPU node. Every pod that binds fits, no GPU goes
// over, and the rest get a reason.
TEST_F(ExtenderTest, ConcurrentFiltersAndBindsNeverOvercommit) {
  AddNodes({{.name = "n", .gpus = 8, .memory_mib = 81920, .split = 10}});
  constexpr int kPods = 200;
  std::vector<nlohmann::json> pods;
  for (int i = 0; i < kPods; ++i) {
    pods.push_back(AddPod(HamiPodObject(
        {.name = absl::StrCat("p", i), .memory_mib = 8192, .cores = 10})));
  }
  std::atomic<int> bound{0};
  std::atomic<int> refused{0};
  std::atomic<int> unexplained{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < kPods; i += 8) {
        FilterResult result = extender_.Filter(FilterArgs(pods[i], {"n"}));
        if (result.node_names.empty()) {
          ++refused;
          if (result.failed_nodes.empty() ||
              result.failed_nodes.begin()->second.empty()) {
            ++unexplained;
          }
          continue;
        }
        std::string error = extender_.Bind(BindingFor(pods[i], "n"));
        if (error.empty()) {
          ++bound;
        } else {
          ++refused;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(bound.load(), 80);
  EXPECT_EQ(refused.load(), 120);
  EXPECT_EQ(unexplained.load(), 0);
  EXPECT_EQ(writer_.BindingsByPod().size(), 80u);
  for (int64_t used : UsedMemory(*scheduler_, "n")) EXPECT_LE(used, 81920);
  scheduler_->Inspect([](const ClusterState& state) {
    EXPECT_TRUE(state.CheckInvariants().ok()) << state.CheckInvariants();
    const NodeState* node = state.FindNode("n");
    for (size_t i = 0; i < node->gpu_count(); ++i) {
      EXPECT_LE(node->ledger(i).used_slots(), 10);
      EXPECT_LE(node->ledger(i).used_cores(), 100);
    }
  });
}

}  // namespace
}  // namespace deviceshare::extender
