// The preempt verb: Extender::Preempt over pods the watch feed charged, and
// the wire forms of ExtenderPreemptionArgs / ExtenderPreemptionResult. The
// HTTP route and a whole preemption are in extender_preempt_e2e_test.cc.
#include <map>
#include <string>
#include <vector>

#include "deviceshare/extender/extender.h"
#include "deviceshare/extender/extender_wire.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/extender_calls.h"
#include "testing/kube_objects.h"
#include "testing/status_matchers.h"

namespace deviceshare::extender {
namespace {

using ::deviceshare::testing::ExtenderHarness;
using ::deviceshare::testing::FilterArgs;
using ::deviceshare::testing::HamiBoundPodObject;
using ::deviceshare::testing::HamiPodObject;
using ::deviceshare::testing::PodSpec;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

// A pod bound on `gpu` of `node` holding `memory_mib` there, at `priority`.
nlohmann::json BoundPod(const std::string& name, const std::string& node,
                        int gpu, int64_t memory_mib, int32_t priority) {
  nlohmann::json pod =
      HamiBoundPodObject({.name = name, .memory_mib = memory_mib}, node, gpu);
  pod["spec"]["priority"] = priority;
  return pod;
}

nlohmann::json PendingPod(const std::string& name, int64_t memory_mib,
                          int32_t priority) {
  nlohmann::json pod = HamiPodObject({.name = name, .memory_mib = memory_mib});
  pod["spec"]["priority"] = priority;
  return pod;
}

int64_t UsedMemory(const Scheduler& scheduler, const std::string& node) {
  int64_t used = 0;
  scheduler.Inspect([&](const ClusterState& state) {
    const NodeState* found = state.FindNode(node);
    if (found == nullptr) return;
    for (size_t i = 0; i < found->gpu_count(); ++i) {
      used += found->ledger(i).used_memory_mib();
    }
  });
  return used;
}

MetaVictims Victims(std::vector<std::string> uids) {
  return MetaVictims{std::move(uids), 0};
}

class ExtenderPreemptTest : public ::testing::Test, public ExtenderHarness {
 protected:
  ExtenderPreemptTest() : ExtenderHarness(ExtenderOptions{}) {}

  void Bound(const nlohmann::json& pod) {
    extender_.OnPodEvent("ADDED", AddPod(pod));
  }

  std::map<std::string, MetaVictims> Preempt(
      const nlohmann::json& pod, std::map<std::string, MetaVictims> proposed) {
    absl::StatusOr<PreemptionResult> result =
        extender_.Preempt(PreemptionArgs{pod, std::move(proposed)});
    EXPECT_OK(result);
    return result.ok() ? result->node_victims
                       : std::map<std::string, MetaVictims>{};
  }
};

// GPU0: a0 8000 MiB; GPU1: b0 5000 + b1 4000 (10000 MiB each). The pod asks
// 9000 on one GPU. kube-scheduler proposes b0, which leaves GPU1 at 6000
// free: useless. One eviction, a0, makes room.
TEST_F(ExtenderPreemptTest, ReplacesVictimsThatFreeNothingTheGpusCanUse) {
  AddNodes({{.name = "n", .gpus = 2, .memory_mib = 10000}});
  Bound(BoundPod("a0", "n", 0, 8000, 5));
  Bound(BoundPod("b0", "n", 1, 5000, 1));
  Bound(BoundPod("b1", "n", 1, 4000, 1));
  const nlohmann::json pod = AddPod(PendingPod("urgent", 9000, 100));
  ASSERT_THAT(extender_.Filter(FilterArgs(pod, {"n"})).node_names, IsEmpty());

  EXPECT_THAT(Preempt(pod, {{"n", Victims({"uid-b0"})}}),
              ElementsAre(Pair("n", Victims({"uid-a0"}))));
  // Nothing was released: the victims free their room when deleted.
  EXPECT_EQ(UsedMemory(*scheduler_, "n"), 17000);
  extender_.OnPodEvent("DELETED", *writer_.Pod("default/a0"));
  EXPECT_THAT(extender_.Filter(FilterArgs(pod, {"n"})).node_names,
              ElementsAre("n"));
}

// GPU0: eq 5000 (the pod's priority) + lo 4000; GPU1: hi 9000. The pod asks
// 9000: only evicting eq or hi makes room.
TEST_F(ExtenderPreemptTest, EqualAndHigherPriorityPodsAreNeverVictims) {
  AddNodes({{.name = "n", .gpus = 2, .memory_mib = 10000}});
  Bound(BoundPod("eq", "n", 0, 5000, 100));
  Bound(BoundPod("lo", "n", 0, 4000, 1));
  Bound(BoundPod("hi", "n", 1, 9000, 200));
  EXPECT_THAT(
      Preempt(PendingPod("p100", 9000, 100), {{"n", Victims({"uid-lo"})}}),
      IsEmpty());
  EXPECT_THAT(
      Preempt(PendingPod("p150", 9000, 150), {{"n", Victims({"uid-lo"})}}),
      ElementsAre(Pair("n", Victims({"uid-eq", "uid-lo"}))));
  EXPECT_THAT(
      Preempt(PendingPod("p300", 9000, 300), {{"n", Victims({"uid-lo"})}}),
      ElementsAre(Pair("n", Victims({"uid-hi"}))));
}

TEST_F(ExtenderPreemptTest, NodesWhereNothingHelpsOrUnknownAreLeftOut) {
  AddNodes({{.name = "ok", .gpus = 1, .memory_mib = 10000},
            {.name = "full", .gpus = 1, .memory_mib = 10000}});
  Bound(BoundPod("low", "ok", 0, 6000, 0));
  Bound(BoundPod("keep", "full", 0, 8000, 1000));
  Bound(BoundPod("tiny", "full", 0, 1500, 0));
  EXPECT_THAT(
      Preempt(PendingPod("p", 9000, 10), {{"ok", Victims({"uid-low"})},
                                          {"full", Victims({"uid-tiny"})},
                                          {"ghost", Victims({"uid-x"})}}),
      ElementsAre(Pair("ok", Victims({"uid-low"}))));
}

// Where the pod's GPUs fit as they are, kube-scheduler's victims (chosen for
// its own resources) stand, an empty proposal included.
TEST_F(ExtenderPreemptTest, WhereTheGpusFitKubeSchedulersVictimsStand) {
  AddNodes({{.name = "a", .gpus = 1, .memory_mib = 10000},
            {.name = "b", .gpus = 1, .memory_mib = 10000}});
  Bound(BoundPod("x", "a", 0, 1000, 0));
  EXPECT_THAT(
      Preempt(PendingPod("p", 5000, 10),
              {{"a", Victims({"uid-x"})}, {"b", Victims({})}}),
      ElementsAre(Pair("a", Victims({"uid-x"})), Pair("b", Victims({}))));
  // Not our pod (no GPU): the proposal goes back unchanged.
  nlohmann::json plain = PendingPod("plain", 0, 10);
  plain["spec"]["containers"][0].erase("resources");
  EXPECT_THAT(
      Preempt(plain, {{"a", Victims({"uid-x"})}, {"c", Victims({})}}),
      ElementsAre(Pair("a", Victims({"uid-x"})), Pair("c", Victims({}))));
}

// A pod whose earlier filter reserved it on the node: that reservation must
// not count against it (it would make the search want a victim).
TEST_F(ExtenderPreemptTest, ThePodsOwnReservationDoesNotCountAgainstIt) {
  AddNodes({{.name = "n", .gpus = 1, .memory_mib = 10000}});
  Bound(BoundPod("lo", "n", 0, 1000, 0));
  const nlohmann::json pod = AddPod(PendingPod("p", 9000, 10));
  ASSERT_THAT(extender_.Filter(FilterArgs(pod, {"n"})).node_names,
              ElementsAre("n"));
  ASSERT_EQ(UsedMemory(*scheduler_, "n"), 10000);
  EXPECT_THAT(Preempt(pod, {{"n", Victims({"uid-lo"})}}),
              ElementsAre(Pair("n", Victims({"uid-lo"}))));
}

TEST_F(ExtenderPreemptTest, PodsBoundThroughOurBindAreCandidates) {
  AddNodes({{.name = "n", .gpus = 1, .memory_mib = 10000}});
  const nlohmann::json low = AddPod(PendingPod("low", 8000, 1));
  ASSERT_EQ(extender_.Bind(::deviceshare::testing::BindingFor(low, "n")), "");
  // The watch shows the record and the Binding.
  extender_.OnPodEvent("MODIFIED", *writer_.Pod("default/low"));
  EXPECT_THAT(Preempt(PendingPod("p", 9000, 10), {{"n", Victims({})}}),
              ElementsAre(Pair("n", Victims({"uid-low"}))));
}

TEST_F(ExtenderPreemptTest, ABadPendingPriorityIsAnErrorNamingIt) {
  AddNodes({{.name = "n", .gpus = 1}});
  nlohmann::json pod = PendingPod("p", 1000, 0);
  pod["spec"]["priority"] = "high";
  absl::StatusOr<PreemptionResult> result =
      extender_.Preempt(PreemptionArgs{pod, {{"n", Victims({})}}});
  EXPECT_THAT(result.status().message(),
              HasSubstr("ExtenderPreemptionArgs.Pod.spec.priority: \"high\" "
                        "is not an int32"));
  pod["spec"]["priority"] = 4294967296;
  EXPECT_FALSE(extender_.Preempt(PreemptionArgs{pod, {}}).ok());
}

// ---- The wire -------------------------------------------------------------

const nlohmann::json kPod =
    nlohmann::json::parse(R"({"metadata":{"name":"p","uid":"u"}})");

TEST(PreemptionWireTest, DecodesTheMetaFormAndFoldsKeysAsGoDoes) {
  const std::string body =
      R"({"pod":{"metadata":{"name":"p","uid":"u"}},"NODENAMETOMETAVICTIMS":)"
      R"({"n1":{"pods":[{"uid":"a"},{"Uid":"b"}],"numPDBViolations":2},)"
      R"("n2":null}})";
  absl::StatusOr<PreemptionArgs> args = DecodePreemptionArgs(body);
  ASSERT_OK(args);
  EXPECT_EQ(args->pod, kPod);
  EXPECT_THAT(args->node_victims,
              ElementsAre(Pair("n1", MetaVictims{{"a", "b"}, 2}),
                          Pair("n2", MetaVictims{})));
  // Several top-level keys folding to one field: the last in the body wins.
  args =
      DecodePreemptionArgs(R"({"Pod":{"metadata":{"name":"first"}},"POD":null,)"
                           R"("pod":{"metadata":{"name":"last"}}})");
  ASSERT_OK(args);
  EXPECT_EQ(args->pod["metadata"]["name"], "last");
  // In a nested object they are refused: the tree keeps no key order.
  args = DecodePreemptionArgs(
      R"({"Pod":{"metadata":{"name":"p"}},"NodeNameToMetaVictims":)"
      R"({"n":{"Pods":[{"UID":"a"}],"pods":[{"uid":"b"}]}}})");
  EXPECT_THAT(args.status().message(),
              HasSubstr("ExtenderPreemptionArgs.NodeNameToMetaVictims[\"n\"]: "
                        "keys \"Pods\" and \"pods\" both name field Pods"));
}

TEST(PreemptionWireTest, DecodesTheFullPodFormByUid) {
  const std::string body =
      R"({"Pod":{"metadata":{"name":"p"}},"NodeNameToVictims":{"n":)"
      R"({"Pods":[{"metadata":{"name":"v","uid":"uid-v"}}],)"
      R"("NumPDBViolations":1}}})";
  absl::StatusOr<PreemptionArgs> args = DecodePreemptionArgs(body);
  ASSERT_OK(args);
  EXPECT_THAT(args->node_victims,
              ElementsAre(Pair("n", MetaVictims{{"uid-v"}, 1})));
  // Neither map: an empty proposal.
  args = DecodePreemptionArgs(nlohmann::json({{"Pod", kPod}}).dump());
  ASSERT_OK(args);
  EXPECT_THAT(args->node_victims, IsEmpty());
}

TEST(PreemptionWireTest, BadBodiesNameTheFieldAndValue) {
  auto error = [](const std::string& body) {
    absl::StatusOr<PreemptionArgs> args = DecodePreemptionArgs(body);
    EXPECT_FALSE(args.ok()) << body;
    return std::string(args.status().message());
  };
  EXPECT_THAT(error("{\"Pod\": "), HasSubstr("ExtenderPreemptionArgs: body"));
  EXPECT_THAT(error("[]"), HasSubstr("is not a JSON object"));
  EXPECT_THAT(error(R"({"NodeNameToMetaVictims":{}})"),
              HasSubstr("ExtenderPreemptionArgs.Pod: missing"));
  EXPECT_THAT(error(R"({"Pod":{"metadata":{}}})"),
              HasSubstr("ExtenderPreemptionArgs.Pod.metadata.name: missing"));
  const std::string pod = R"({"Pod":{"metadata":{"name":"p"}},)";
  EXPECT_THAT(error(pod + R"("NodeNameToMetaVictims":[]})"),
              HasSubstr("ExtenderPreemptionArgs.NodeNameToMetaVictims: [] is "
                        "not an object"));
  EXPECT_THAT(
      error(pod + R"("NodeNameToMetaVictims":{"n":{"Pods":[{"UID":7}]}}})"),
      HasSubstr("ExtenderPreemptionArgs.NodeNameToMetaVictims[\"n\"].Pods[0]"
                ".UID: 7 is not a string"));
  EXPECT_THAT(error(pod + R"("NodeNameToMetaVictims":{"n":{"Pods":[{}]}}})"),
              HasSubstr("NodeNameToMetaVictims[\"n\"].Pods[0].UID: missing"));
  EXPECT_THAT(
      error(pod + R"("NodeNameToMetaVictims":{"n":{"NumPDBViolations":1.5}}})"),
      HasSubstr("[\"n\"].NumPDBViolations: 1.5 is not an int64"));
  EXPECT_THAT(error(pod + R"("NodeNameToVictims":{"n":{"Pods":[{}]}}})"),
              HasSubstr("NodeNameToVictims[\"n\"].Pods[0].metadata: missing"));
  EXPECT_THAT(error(std::string(300, '[') + std::string(300, ']')),
              HasSubstr("nests deeper"));
}

TEST(PreemptionWireTest, EncodesGoNames) {
  PreemptionResult result;
  EXPECT_EQ(EncodePreemptionResult(result), R"({"NodeNameToMetaVictims":{}})");
  result.node_victims["n1"] = MetaVictims{{"a", "b\""}, 0};
  result.node_victims["n2"] = MetaVictims{{}, 3};
  EXPECT_EQ(EncodePreemptionResult(result),
            R"({"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"a"},)"
            R"({"UID":"b\""}],"NumPDBViolations":0},"n2":{"Pods":[],)"
            R"("NumPDBViolations":3}}})");
}

}  // namespace
}  // namespace deviceshare::extender
