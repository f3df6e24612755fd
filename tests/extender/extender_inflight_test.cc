// /bind's in-flight rule: a pod is not bound to a node while another pod
// there is still being handed its GPUs by the node agent and the two have
// containers the agent could confuse (same device count, different share).
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/backend/backend_registry.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/extender/extender.h"
#include "deviceshare/extender/in_flight.h"
#include "deviceshare/extender/serve.h"
#include "deviceshare/mig/mig_backend.h"
#include "deviceshare/mps/mps_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/extender_calls.h"
#include "testing/fake_pod_writer.h"
#include "testing/fakes.h"
#include "testing/kube_objects.h"

namespace deviceshare::extender {
namespace {

using ::deviceshare::testing::BindingFor;
using ::deviceshare::testing::ExtenderHarness;
using ::deviceshare::testing::FilterArgs;
using ::deviceshare::testing::Grant;
using ::deviceshare::testing::HamiNodeObject;
using ::deviceshare::testing::HamiPodObject;
using ::deviceshare::testing::NewBuiltinScheduler;
using ::deviceshare::testing::PodSpec;
using ::deviceshare::testing::VolcanoPodObject;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kDeferred[] =
    "node n1 is still handing out pod default/p's GPUs (same device count, "
    "different share); retry";

int64_t TotalUsed(const Scheduler& scheduler, const std::string& node) {
  int64_t total = 0;
  scheduler.Inspect([&](const ClusterState& state) {
    const NodeState* found = state.FindNode(node);
    if (found == nullptr) return;
    for (size_t i = 0; i < found->gpu_count(); ++i) {
      total += found->ledger(i).used_memory_mib();
    }
  });
  return total;
}

ExtenderOptions WithTimeout(absl::Duration timeout) {
  ExtenderOptions options;
  options.in_flight_timeout = timeout;
  return options;
}

class ExtenderInFlightTest : public ::testing::Test, public ExtenderHarness {
 protected:
  explicit ExtenderInFlightTest(ExtenderOptions options = ExtenderOptions{})
      : ExtenderHarness(options) {}

  // Filter (reserving on `node`) and bind; the bind's error.
  std::string FilterAndBind(const nlohmann::json& pod,
                            const std::string& node) {
    FilterResult filtered = extender_.Filter(FilterArgs(pod, {node}));
    EXPECT_THAT(filtered.node_names, ElementsAre(node)) << filtered.error;
    return extender_.Bind(BindingFor(pod, node));
  }

  // The pod as the API server has it now, delivered by the watch.
  void Watch(const std::string& name, absl::string_view type = "MODIFIED") {
    std::optional<nlohmann::json> pod = writer_.Pod("default/" + name);
    ASSERT_TRUE(pod.has_value()) << name;
    extender_.OnPodEvent(type, *pod);
  }

  // The node agent sets the pod's bind-phase; the watch shows it.
  void AgentReports(const std::string& name, const std::string& phase,
                    const char* key = keys::kHamiBindPhase) {
    ASSERT_TRUE(writer_
                    .PatchAnnotations(PodName{"default", name, "uid-" + name},
                                      {{key, phase}})
                    .ok());
    Watch(name);
  }

  bool HasRecord(const std::string& name) const {
    const nlohmann::json pod = *writer_.Pod("default/" + name);
    return pod["metadata"].contains("annotations") &&
           pod["metadata"]["annotations"].contains(keys::kHamiAllocated);
  }
};

TEST_F(ExtenderInFlightTest, ConfusablePodWaitsUntilTheAgentIsDone) {
  AddNodes({{.name = "n1", .gpus = 1, .memory_mib = 10000}});
  nlohmann::json p =
      AddPod(HamiPodObject({.name = "p", .memory_mib = 3000, .cores = 20}));
  ASSERT_EQ(FilterAndBind(p, "n1"), "");
  // The watch has not shown p yet: it counts from its Binding.
  nlohmann::json q =
      AddPod(HamiPodObject({.name = "q", .memory_mib = 4000, .cores = 20}));
  EXPECT_EQ(FilterAndBind(q, "n1"), kDeferred);

  // Rolled back as a failed bind: q is neither charged nor written to.
  EXPECT_EQ(TotalUsed(*scheduler_, "n1"), 3000);
  EXPECT_FALSE(HasRecord("q"));
  EXPECT_FALSE(
      writer_.Pod("default/q")->at("metadata").contains("annotations"));
  EXPECT_FALSE(writer_.BindingsByPod().contains("default/q"));
  EXPECT_EQ(extender_.stats().binds_deferred, 1);
  EXPECT_EQ(extender_.stats().reservations_in_flight, 0);
  EXPECT_THAT(extender_.stats().bind_failures, IsEmpty());
  EXPECT_THAT(extender_.metrics().Render(),
              HasSubstr("deviceshare_extender_binds_deferred_total 1\n"));
  EXPECT_THAT(extender_.metrics().Render(),
              HasSubstr("deviceshare_extender_pods_allocating 1\n"));
  // The room is free: a pod needing all of it but p's fits.
  nlohmann::json big =
      AddPod(HamiPodObject({.name = "big", .memory_mib = 7000}));
  EXPECT_THAT(extender_.Filter(FilterArgs(big, {"n1"})).node_names,
              ElementsAre("n1"));
  EXPECT_EQ(TotalUsed(*scheduler_, "n1"), 10000);
  EXPECT_EQ(extender_.ExpireReservations(), 0);
  clock_.Advance(absl::Seconds(31));  // big's reservation goes, p stays
  EXPECT_EQ(extender_.ExpireReservations(), 1);

  // The watch shows p bound, still allocating: still in flight.
  Watch("p");
  EXPECT_EQ(FilterAndBind(q, "n1"), kDeferred);
  EXPECT_EQ(extender_.stats().binds_deferred, 2);

  AgentReports("p", "success");
  EXPECT_EQ(extender_.stats().pods_allocating, 0);
  EXPECT_EQ(FilterAndBind(q, "n1"), "");
  EXPECT_EQ(TotalUsed(*scheduler_, "n1"), 7000);
  EXPECT_TRUE(HasRecord("q"));
  EXPECT_EQ(extender_.stats().binds, 2);
}

TEST_F(ExtenderInFlightTest, InterchangeablePodsBindTogether) {
  AddNodes({{.name = "n1", .gpus = 1, .memory_mib = 10000}});
  nlohmann::json p =
      AddPod(HamiPodObject({.name = "p", .memory_mib = 3000, .cores = 20}));
  ASSERT_EQ(FilterAndBind(p, "n1"), "");
  Watch("p");
  nlohmann::json q =
      AddPod(HamiPodObject({.name = "q", .memory_mib = 3000, .cores = 20}));
  EXPECT_EQ(FilterAndBind(q, "n1"), "");
  EXPECT_EQ(extender_.stats().pods_allocating, 2);
  // Only the same GPU, memory and cores make a share the same: cores differ.
  nlohmann::json r =
      AddPod(HamiPodObject({.name = "r", .memory_mib = 3000, .cores = 30}));
  // p and q are both in flight and confusable with r: either may be named.
  EXPECT_THAT(FilterAndBind(r, "n1"),
              ::testing::MatchesRegex("node n1 is still handing out pod "
                                      "default/[pq]'s GPUs .*; retry"));
  EXPECT_EQ(extender_.stats().binds_deferred, 1);
}

TEST_F(ExtenderInFlightTest, OtherNodesAndOtherDeviceCountsBind) {
  AddNodes({{.name = "n1", .gpus = 2, .memory_mib = 10000},
            {.name = "n2", .gpus = 2, .memory_mib = 10000}});
  nlohmann::json p = AddPod(HamiPodObject({.name = "p", .memory_mib = 3000}));
  ASSERT_EQ(FilterAndBind(p, "n1"), "");
  nlohmann::json elsewhere =
      AddPod(HamiPodObject({.name = "elsewhere", .memory_mib = 4000}));
  EXPECT_EQ(FilterAndBind(elsewhere, "n2"), "");
  // Two GPUs: kubelet's Allocate for it names two devices, p's one.
  nlohmann::json two =
      AddPod(HamiPodObject({.name = "two", .gpus = 2, .memory_mib = 4000}));
  EXPECT_EQ(FilterAndBind(two, "n1"), "");
  EXPECT_EQ(extender_.stats().binds_deferred, 0);
  EXPECT_EQ(extender_.stats().pods_allocating, 3);
  // Now a one-GPU pod is confusable with p, a two-GPU one with `two`.
  nlohmann::json one =
      AddPod(HamiPodObject({.name = "one", .memory_mib = 1000}));
  EXPECT_EQ(FilterAndBind(one, "n1"), kDeferred);
  nlohmann::json pair =
      AddPod(HamiPodObject({.name = "pair", .gpus = 2, .memory_mib = 1000}));
  EXPECT_THAT(FilterAndBind(pair, "n1"), HasSubstr("pod default/two's GPUs"));
}

TEST_F(ExtenderInFlightTest, DeletedFailedOrFinishedPodsStopCounting) {
  AddNodes({{.name = "n1", .gpus = 1, .memory_mib = 20000}});
  nlohmann::json q = AddPod(HamiPodObject({.name = "q", .memory_mib = 1000}));

  nlohmann::json p = AddPod(HamiPodObject({.name = "p", .memory_mib = 2000}));
  ASSERT_EQ(FilterAndBind(p, "n1"), "");
  ASSERT_EQ(FilterAndBind(q, "n1"), kDeferred);
  AgentReports("p", "failed");
  ASSERT_EQ(FilterAndBind(q, "n1"), "");
  AgentReports("q", "success");

  // Deleted: the watch's DELETED event.
  nlohmann::json p2 = AddPod(HamiPodObject({.name = "p2", .memory_mib = 2000}));
  ASSERT_EQ(FilterAndBind(p2, "n1"), "");
  nlohmann::json q2 = AddPod(HamiPodObject({.name = "q2", .memory_mib = 1000}));
  ASSERT_THAT(FilterAndBind(q2, "n1"), HasSubstr("pod default/p2's GPUs"));
  Watch("p2", "DELETED");
  ASSERT_EQ(FilterAndBind(q2, "n1"), "");
  AgentReports("q2", "success");

  // Finished (status.phase), bind-phase still allocating.
  nlohmann::json p3 = AddPod(HamiPodObject({.name = "p3", .memory_mib = 2000}));
  ASSERT_EQ(FilterAndBind(p3, "n1"), "");
  nlohmann::json q3 = AddPod(HamiPodObject({.name = "q3", .memory_mib = 1000}));
  ASSERT_THAT(FilterAndBind(q3, "n1"), HasSubstr("pod default/p3's GPUs"));
  nlohmann::json finished = *writer_.Pod("default/p3");
  finished["status"]["phase"] = "Failed";
  extender_.OnPodEvent("MODIFIED", finished);
  EXPECT_EQ(FilterAndBind(q3, "n1"), "");
  AgentReports("q3", "success");

  // Gone from a relist, after the watch showed it (a bind the watch has
  // not shown yet is held one TTL: extender_relist_test.cc).
  nlohmann::json p4 = AddPod(HamiPodObject({.name = "p4", .memory_mib = 2000}));
  ASSERT_EQ(FilterAndBind(p4, "n1"), "");
  Watch("p4");
  nlohmann::json q4 = AddPod(HamiPodObject({.name = "q4", .memory_mib = 1000}));
  ASSERT_THAT(FilterAndBind(q4, "n1"), HasSubstr("pod default/p4's GPUs"));
  std::vector<nlohmann::json> listed;
  for (const char* name : {"q", "q2", "q3", "q4"}) {
    listed.push_back(*writer_.Pod(absl::StrCat("default/", name)));
  }
  extender_.OnPodsReplaced(listed);
  EXPECT_EQ(FilterAndBind(q4, "n1"), "");
  EXPECT_EQ(extender_.stats().binds_deferred, 4);
}

TEST_F(ExtenderInFlightTest, StaleWatchEventsDoNotEndTheFlight) {
  AddNodes({{.name = "n1", .gpus = 1, .memory_mib = 10000}});
  nlohmann::json p = AddPod(HamiPodObject({.name = "p", .memory_mib = 3000}));
  ASSERT_EQ(FilterAndBind(p, "n1"), "");
  // p as it was before the bind: no record, no node.
  extender_.OnPodEvent("MODIFIED", p);
  // p with its record but before the Binding.
  nlohmann::json unbound = *writer_.Pod("default/p");
  unbound["spec"].erase("nodeName");
  extender_.OnPodEvent("MODIFIED", unbound);
  nlohmann::json q = AddPod(HamiPodObject({.name = "q", .memory_mib = 4000}));
  EXPECT_EQ(FilterAndBind(q, "n1"), kDeferred);
}

TEST_F(ExtenderInFlightTest, AFailedBindLeavesNothingInFlight) {
  AddNodes({{.name = "n1", .gpus = 1, .memory_mib = 10000}});
  nlohmann::json p = AddPod(HamiPodObject({.name = "p", .memory_mib = 3000}));
  writer_.FailNextBinds(1);
  ASSERT_THAT(FilterAndBind(p, "n1"), HasSubstr("injected binding failure"));
  EXPECT_EQ(extender_.stats().pods_allocating, 0);
  nlohmann::json q = AddPod(HamiPodObject({.name = "q", .memory_mib = 4000}));
  EXPECT_EQ(FilterAndBind(q, "n1"), "");
}

TEST_F(ExtenderInFlightTest, RecordsOfOtherSchedulersCountInEitherDialect) {
  AddNodes({{.name = "n1", .gpus = 1, .memory_mib = 10000}});
  // Records written by another replica (or before a restart): the
  // extender learns of them from the watch only.
  nlohmann::json p = AddPod(HamiPodObject({.name = "p", .memory_mib = 3000}));
  ASSERT_EQ(FilterAndBind(p, "n1"), "");
  nlohmann::json recorded = *writer_.Pod("default/p");

  // A fresh extender (restart) over the same store: p comes from the list.
  std::unique_ptr<Scheduler> restarted = NewBuiltinScheduler();
  Extender fresh(restarted.get(), &writer_, &clock_, ExtenderOptions{});
  fresh.OnNodesReplaced(
      {HamiNodeObject({.name = "n1", .gpus = 1, .memory_mib = 10000})});
  fresh.OnPodsReplaced({recorded});
  EXPECT_EQ(fresh.stats().pods_allocating, 1);
  nlohmann::json q = AddPod(HamiPodObject({.name = "q", .memory_mib = 4000}));
  ASSERT_THAT(fresh.Filter(FilterArgs(q, {"n1"})).node_names,
              ElementsAre("n1"));
  EXPECT_EQ(fresh.Bind(BindingFor(q, "n1")), kDeferred);

  // Volcano's dialect: volcano.sh/bind-phase.
  nlohmann::json v =
      AddPod(VolcanoPodObject({.name = "v", .memory_mib = 2000}));
  ASSERT_THAT(fresh.Filter(FilterArgs(v, {"n1"})).node_names,
              ElementsAre("n1"));
  ASSERT_EQ(fresh.Bind(BindingFor(v, "n1")), kDeferred);  // p blocks it too
  // p done: v binds; its record says volcano.sh/bind-phase allocating.
  ASSERT_TRUE(writer_
                  .PatchAnnotations(PodName{"default", "p", "uid-p"},
                                    {{keys::kHamiBindPhase, "success"}})
                  .ok());
  fresh.OnPodEvent("MODIFIED", *writer_.Pod("default/p"));
  ASSERT_THAT(fresh.Filter(FilterArgs(v, {"n1"})).node_names,
              ElementsAre("n1"));
  ASSERT_EQ(fresh.Bind(BindingFor(v, "n1")), "");
  EXPECT_EQ(
      (*writer_.Pod(
          "default/v"))["metadata"]["annotations"][keys::kVolcanoBindPhase],
      "allocating");
  // Seen through another restart, v blocks q.
  std::unique_ptr<Scheduler> again = NewBuiltinScheduler();
  Extender third(again.get(), &writer_, &clock_, ExtenderOptions{});
  third.OnNodesReplaced(
      {HamiNodeObject({.name = "n1", .gpus = 1, .memory_mib = 10000})});
  third.OnPodsReplaced({*writer_.Pod("default/p"), *writer_.Pod("default/v")});
  EXPECT_EQ(third.stats().pods_allocating, 1);
  ASSERT_THAT(third.Filter(FilterArgs(q, {"n1"})).node_names,
              ElementsAre("n1"));
  EXPECT_THAT(third.Bind(BindingFor(q, "n1")),
              HasSubstr("pod default/v's GPUs"));
  // The Volcano agent reports; q binds.
  ASSERT_TRUE(writer_
                  .PatchAnnotations(PodName{"default", "v", "uid-v"},
                                    {{keys::kVolcanoBindPhase, "success"}})
                  .ok());
  third.OnPodEvent("MODIFIED", *writer_.Pod("default/v"));
  ASSERT_THAT(third.Filter(FilterArgs(q, {"n1"})).node_names,
              ElementsAre("n1"));
  EXPECT_EQ(third.Bind(BindingFor(q, "n1")), "");
}

TEST_F(ExtenderInFlightTest, ADeadAgentBlocksOnlyUntilTheTimeout) {
  AddNodes({{.name = "n1", .gpus = 1, .memory_mib = 10000}});
  nlohmann::json p = AddPod(HamiPodObject({.name = "p", .memory_mib = 3000}));
  ASSERT_EQ(FilterAndBind(p, "n1"), "");
  Watch("p");
  nlohmann::json q = AddPod(HamiPodObject({.name = "q", .memory_mib = 4000}));
  clock_.Advance(absl::Seconds(59));
  EXPECT_EQ(FilterAndBind(q, "n1"), kDeferred);
  // A later event of p (still allocating) does not restart its clock.
  Watch("p");
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(FilterAndBind(q, "n1"), "");
  EXPECT_EQ(extender_.stats().binds_deferred, 1);
  // The periodic sweep drops what no bind looked at.
  EXPECT_EQ(extender_.stats().pods_allocating, 1);  // q itself
  clock_.Advance(absl::Seconds(60));
  extender_.ExpireReservations();
  EXPECT_EQ(extender_.stats().pods_allocating, 0);
}

TEST_F(ExtenderInFlightTest, ARestartDoesNotRestartTheTimeout) {
  AddNodes({{.name = "n1", .gpus = 1, .memory_mib = 10000}});
  nlohmann::json p = AddPod(HamiPodObject({.name = "p", .memory_mib = 3000}));
  ASSERT_EQ(FilterAndBind(p, "n1"), "");
  clock_.Advance(absl::Minutes(5));
  // p's bind-time is five minutes old when a fresh extender lists it.
  std::unique_ptr<Scheduler> restarted = NewBuiltinScheduler();
  Extender fresh(restarted.get(), &writer_, &clock_, ExtenderOptions{});
  fresh.OnNodesReplaced(
      {HamiNodeObject({.name = "n1", .gpus = 1, .memory_mib = 10000})});
  fresh.OnPodsReplaced({*writer_.Pod("default/p")});
  nlohmann::json q = AddPod(HamiPodObject({.name = "q", .memory_mib = 4000}));
  ASSERT_THAT(fresh.Filter(FilterArgs(q, {"n1"})).node_names,
              ElementsAre("n1"));
  EXPECT_EQ(fresh.Bind(BindingFor(q, "n1")), "");
}

class ExtenderInFlightShortTimeoutTest : public ExtenderInFlightTest {
 protected:
  ExtenderInFlightShortTimeoutTest()
      : ExtenderInFlightTest(WithTimeout(absl::Seconds(5))) {}
};

TEST_F(ExtenderInFlightShortTimeoutTest, TheTimeoutIsAnOption) {
  AddNodes({{.name = "n1", .gpus = 1, .memory_mib = 10000}});
  nlohmann::json p = AddPod(HamiPodObject({.name = "p", .memory_mib = 3000}));
  ASSERT_EQ(FilterAndBind(p, "n1"), "");
  nlohmann::json q = AddPod(HamiPodObject({.name = "q", .memory_mib = 4000}));
  clock_.Advance(absl::Seconds(4));
  EXPECT_EQ(FilterAndBind(q, "n1"), kDeferred);
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(FilterAndBind(q, "n1"), "");
}

// Of many mutually confusable pods bound at once to one node, exactly one
// binds: each bind's check and its own entry are one step.
TEST_F(ExtenderInFlightTest, ConcurrentConfusableBindsLetOneThrough) {
  AddNodes({{.name = "n1", .gpus = 1, .memory_mib = 81920, .split = 20}});
  constexpr int kPods = 16;
  std::vector<nlohmann::json> pods;
  for (int i = 0; i < kPods; ++i) {
    pods.push_back(AddPod(HamiPodObject(
        {.name = absl::StrCat("c", i), .memory_mib = 1000 + 10 * i})));
  }
  std::atomic<int> bound{0};
  std::atomic<int> deferred{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < kPods; i += 4) {
        const std::string error = extender_.Bind(BindingFor(pods[i], "n1"));
        if (error.empty()) {
          ++bound;
        } else if (error.find("still handing out") != std::string::npos) {
          ++deferred;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(bound.load(), 1);
  EXPECT_EQ(deferred.load(), kPods - 1);
  EXPECT_EQ(writer_.BindingsByPod().size(), 1u);
  EXPECT_EQ(extender_.stats().binds_deferred, kPods - 1);
}

TEST(InFlightSharesTest, ConfusableOnlyWithTheSameCountAndADifferentShare) {
  const DeviceGrant a = Grant("GPU-a", 3000, 20);
  const DeviceGrant b = Grant("GPU-b", 3000, 20);
  EXPECT_FALSE(Confusable({{a}}, {{a}}));
  EXPECT_TRUE(Confusable({{a}}, {{b}}));
  EXPECT_TRUE(Confusable({{a}}, {{Grant("GPU-a", 3001, 20)}}));
  EXPECT_TRUE(Confusable({{a}}, {{Grant("GPU-a", 3000, 21)}}));
  EXPECT_FALSE(Confusable({{a}}, {{a, b}}));  // one device against two
  EXPECT_TRUE(Confusable({{a, b}}, {{b, a}}));
  // Any pair of containers: p's second container is confusable with q's.
  EXPECT_TRUE(Confusable({{a, b}, {a}}, {{b}}));
  EXPECT_FALSE(Confusable({}, {{a}}));

  // The mode of a non-MIG grant is its GPU's; a record read back says
  // hami-core for an MPS share.
  DeviceGrant mps = a;
  mps.mode = mps::kMode;
  EXPECT_TRUE(SameShare({a}, {mps}));
  DeviceGrant mig = a;
  mig.mode = mig::kMode;
  mig.mig = MigSlot{.profile = "1g.10gb", .start = 0, .size = 1};
  EXPECT_FALSE(SameShare({a}, {mig}));
  DeviceGrant other_slot = mig;
  other_slot.mig.start = 1;
  EXPECT_FALSE(SameShare({mig}, {other_slot}));
  // Runtime identities do not make a share different.
  DeviceGrant created = mig;
  created.mig_uuid = "MIG-1";
  created.gpu_instance_id = 3;
  EXPECT_TRUE(SameShare({mig}, {created}));
}

TEST(InFlightIndexTest, IndexesPerNodeAndExpires) {
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  InFlightIndex index;
  index.Upsert(
      "p",
      {"default/p", "n1", t0 + absl::Seconds(10), {{Grant("GPU-a", 1000, 0)}}});
  index.Upsert(
      "r",
      {"default/r", "n2", t0 + absl::Seconds(30), {{Grant("GPU-c", 1000, 0)}}});
  // No GPU container: nothing to confuse.
  index.Upsert("cpu", {"default/cpu", "n1", t0 + absl::Seconds(10), {}});
  EXPECT_EQ(index.size(), 2u);
  const ContainerShares q = {{Grant("GPU-b", 1000, 0)}};
  std::optional<InFlightPod> found = index.FindConfusable("n1", "q", q, t0);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->key, "default/p");
  // Never blocked by itself.
  EXPECT_FALSE(index.FindConfusable("n1", "p", q, t0).has_value());
  // An update keeps the earlier deadline; a move changes the node.
  index.Upsert(
      "p",
      {"default/p", "n1", t0 + absl::Seconds(50), {{Grant("GPU-a", 1000, 0)}}});
  EXPECT_FALSE(
      index.FindConfusable("n1", "q", q, t0 + absl::Seconds(10)).has_value());
  EXPECT_EQ(index.size(), 1u);  // dropped on the way
  index.Upsert(
      "r",
      {"default/r", "n1", t0 + absl::Seconds(30), {{Grant("GPU-c", 1000, 0)}}});
  EXPECT_TRUE(index.FindConfusable("n1", "q", q, t0).has_value());
  EXPECT_FALSE(index.FindConfusable("n2", "q", q, t0).has_value());
  index.SetDeadline("r", t0 + absl::Seconds(100));
  EXPECT_EQ(index.Expire(t0 + absl::Seconds(99)), 0);
  EXPECT_EQ(index.Expire(t0 + absl::Seconds(100)), 1);
  EXPECT_EQ(index.size(), 0u);
  index.Remove("gone");  // unknown: nothing happens
}

}  // namespace
}  // namespace deviceshare::extender
