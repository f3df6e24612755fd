// The extender's DRA feed and claim binds in process, without HTTP: watch
// events of ResourceSlices, DeviceClasses and ResourceClaims into the
// Scheduler, and what a bind does without a claim writer.
#include "absl/strings/str_cat.h"
#include "deviceshare/extender/extender.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/extender_calls.h"
#include "testing/kube_objects_dra.h"

namespace deviceshare::extender {
namespace {

using ::deviceshare::testing::BindingFor;
using ::deviceshare::testing::ClaimPodObject;
using ::deviceshare::testing::ExtenderHarness;
using ::deviceshare::testing::FilterArgs;
using ::deviceshare::testing::GpuClassObject;
using ::deviceshare::testing::GpuSliceObject;
using ::deviceshare::testing::ShareClaimObject;
using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

// status.allocation of one 8 GiB, 10-core share of `node`'s gpu-0.
json AllocationOn(const std::string& node) {
  return json::parse(absl::StrCat(R"({
    "devices": {"results": [{
      "request": "gpu", "driver": "gpu.deviceshare.io", "pool": ")",
                                  node, R"(",
      "device": "gpu-0", "shareID": "2a4c8e3f-0000-4000-8000-00000000000a",
      "consumedCapacity": {"memory": "8Gi", "cores": "10", "shares": "1"}}]},
    "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
      {"key": "metadata.name", "operator": "In", "values": [")",
                                  node, R"("]}]}]}})"));
}

class ExtenderDraTest : public ::testing::Test, public ExtenderHarness {
 protected:
  ExtenderDraTest() : ExtenderHarness(ExtenderOptions{}) {
    extender_.OnDeviceClassesReplaced({GpuClassObject()});
  }

  // A claim "c" at `version`, allocated on `node` ("" for not allocated).
  json ClaimAt(const std::string& version, const std::string& node) {
    json claim = ShareClaimObject("default", "c", 8, 10);
    claim["metadata"]["uid"] = "uid-c";
    claim["metadata"]["resourceVersion"] = version;
    if (!node.empty()) claim["status"]["allocation"] = AllocationOn(node);
    return claim;
  }

  std::vector<std::string> Fits(const json& pod) {
    return extender_.Filter(FilterArgs(pod, {"n1", "n2"})).node_names;
  }
};

TEST_F(ExtenderDraTest, AnOlderClaimEventDoesNotUndoANewerOne) {
  extender_.OnResourceSlicesReplaced(
      {GpuSliceObject("n1", 1), GpuSliceObject("n2", 1)});
  extender_.OnResourceClaimsReplaced({ClaimAt("5", "n2")});
  const json pod = AddPod(ClaimPodObject({.name = "p", .claims = {"c"}}));
  EXPECT_THAT(Fits(pod), ElementsAre("n2"));
  // A copy older than what was applied (a write of ours answered before the
  // watch caught up) changes nothing...
  extender_.OnResourceClaimEvent("MODIFIED", ClaimAt("4", ""));
  EXPECT_THAT(Fits(pod), ElementsAre("n2"));
  // ...a newer one does.
  extender_.OnResourceClaimEvent("MODIFIED", ClaimAt("6", ""));
  EXPECT_THAT(Fits(pod), UnorderedElementsAre("n1", "n2"));
  // A claim that is gone leaves its pods waiting for it.
  extender_.OnResourceClaimEvent("DELETED", ClaimAt("7", ""));
  FilterResult gone = extender_.Filter(FilterArgs(pod, {"n1"}));
  EXPECT_THAT(gone.node_names, IsEmpty());
  EXPECT_THAT(
      gone.failed_nodes["n1"] + gone.failed_and_unresolvable_nodes["n1"],
      HasSubstr("ClaimNotReady"));
}

TEST_F(ExtenderDraTest, SlicesAndClassesFollowTheirEventsAndRelists) {
  extender_.OnResourceSlicesReplaced({GpuSliceObject("n1", 1)});
  extender_.OnResourceClaimsReplaced({ClaimAt("1", "")});
  const json pod = AddPod(ClaimPodObject({.name = "p", .claims = {"c"}}));
  EXPECT_THAT(Fits(pod), ElementsAre("n1"));
  extender_.OnResourceSliceEvent("ADDED", GpuSliceObject("n2", 1));
  EXPECT_THAT(Fits(pod), UnorderedElementsAre("n1", "n2"));
  // A relist without n1's slice: n1 has no devices any more.
  extender_.OnResourceSlicesReplaced({GpuSliceObject("n2", 1)});
  EXPECT_THAT(Fits(pod), ElementsAre("n2"));
  // Without the class the claim asks for, nothing fits.
  extender_.OnDeviceClassEvent("DELETED", GpuClassObject());
  EXPECT_THAT(Fits(pod), IsEmpty());
  extender_.OnDeviceClassesReplaced({GpuClassObject()});
  EXPECT_THAT(Fits(pod), ElementsAre("n2"));
}

TEST_F(ExtenderDraTest, WithoutAClaimWriterABindFailsAndFreesTheRoom) {
  // One GPU that takes one share.
  extender_.OnResourceSlicesReplaced({GpuSliceObject("n1", 1, 80, 1)});
  json other = ShareClaimObject("default", "d", 8, 10);
  other["metadata"]["resourceVersion"] = "1";
  extender_.OnResourceClaimsReplaced({ClaimAt("1", ""), other});
  const json pod = AddPod(ClaimPodObject({.name = "p", .claims = {"c"}}));
  const json next = AddPod(ClaimPodObject({.name = "q", .claims = {"d"}}));
  ASSERT_THAT(extender_.Filter(FilterArgs(pod, {"n1"})).node_names,
              ElementsAre("n1"));
  EXPECT_THAT(extender_.Bind(BindingFor(pod, "n1")),
              HasSubstr("no claim writer"));
  EXPECT_EQ(extender_.stats().bind_failures["Claims"], 1);
  EXPECT_THAT(writer_.BindingsByPod(), IsEmpty());
  EXPECT_THAT(extender_.Filter(FilterArgs(next, {"n1"})).node_names,
              ElementsAre("n1"));
}

}  // namespace
}  // namespace deviceshare::extender
