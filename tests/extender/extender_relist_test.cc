// A relist (a watch that expired, 410) replaces serve's view of the pods
// with a list whose snapshot may predate serve's own latest binds: the
// pods it bound after the snapshot are missing from the list, and their
// events arrive on the watch that follows. Found by bench/churn_soak: the
// charge of such a pod was dropped, its GPU offered again, and the API
// server ended up with bound pods whose records overcommit one GPU.
#include <string>
#include <vector>

#include "deviceshare/extender/extender.h"
#include "gtest/gtest.h"
#include "testing/extender_calls.h"
#include "testing/kube_objects.h"

namespace deviceshare::extender {
namespace {

using ::deviceshare::testing::BindingFor;
using ::deviceshare::testing::ExtenderHarness;
using ::deviceshare::testing::FilterArgs;
using ::deviceshare::testing::HamiPodObject;

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

ExtenderOptions Options() {
  ExtenderOptions options;
  options.in_flight_timeout = absl::ZeroDuration();
  options.reservation_ttl = absl::Seconds(30);
  return options;
}

class ExtenderRelistTest : public ::testing::Test, public ExtenderHarness {
 protected:
  ExtenderRelistTest() : ExtenderHarness(Options()) {}

  // Filters and binds a new pod of `memory_mib` to node "a".
  nlohmann::json BindNew(const std::string& name, int64_t memory_mib) {
    nlohmann::json pod =
        AddPod(HamiPodObject({.name = name, .memory_mib = memory_mib}));
    EXPECT_EQ(extender_.Filter(FilterArgs(pod, {"a"})).error, "");
    EXPECT_EQ(extender_.Bind(BindingFor(pod, "a")), "");
    return pod;
  }
};

TEST_F(ExtenderRelistTest, APodBoundAfterTheListsSnapshotStaysCharged) {
  AddNodes({{.name = "a", .gpus = 1}});
  BindNew("p", 60000);
  extender_.OnPodsReplaced({});  // listed before p was created
  EXPECT_EQ(UsedMemory(*scheduler_, "a"), 60000);
  // So its GPU is not offered again.
  nlohmann::json next =
      AddPod(HamiPodObject({.name = "next", .memory_mib = 60000}));
  EXPECT_TRUE(extender_.Filter(FilterArgs(next, {"a"})).node_names.empty());
  // The watch from the list's resourceVersion then brings p: charged once,
  // and for good.
  extender_.OnPodEvent("ADDED", *writer_.Pod("default/p"));
  EXPECT_EQ(UsedMemory(*scheduler_, "a"), 60000);
  clock_.Advance(absl::Seconds(31));
  extender_.ExpireReservations();
  EXPECT_EQ(UsedMemory(*scheduler_, "a"), 60000);
  extender_.OnPodEvent("DELETED", *writer_.Pod("default/p"));
  EXPECT_EQ(UsedMemory(*scheduler_, "a"), 0);
}

// If the pod was in fact deleted before that list was taken, no event
// will say so: its charge ends one reservation TTL after the relist.
TEST_F(ExtenderRelistTest, APodGoneBeforeTheListIsReleasedAfterOneTtl) {
  AddNodes({{.name = "a", .gpus = 1}});
  BindNew("p", 60000);
  extender_.OnPodsReplaced({});
  clock_.Advance(absl::Seconds(29));
  EXPECT_EQ(extender_.ExpireReservations(), 0);
  EXPECT_EQ(UsedMemory(*scheduler_, "a"), 60000);
  clock_.Advance(absl::Seconds(2));
  EXPECT_EQ(extender_.ExpireReservations(), 1);
  EXPECT_EQ(UsedMemory(*scheduler_, "a"), 0);
}

// Pods the watch had shown bound before the list, and that the list no
// longer holds, are gone: released at once, as before.
TEST_F(ExtenderRelistTest, AConfirmedPodMissingFromTheListIsReleased) {
  AddNodes({{.name = "a", .gpus = 1}});
  BindNew("p", 60000);
  extender_.OnPodEvent("MODIFIED", *writer_.Pod("default/p"));
  extender_.OnPodsReplaced({});
  EXPECT_EQ(UsedMemory(*scheduler_, "a"), 0);
}

}  // namespace
}  // namespace deviceshare::extender
