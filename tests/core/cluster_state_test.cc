#include "deviceshare/scheduler/cluster_state.h"

#include "deviceshare/builtin_backends.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::GpuContainer;
using ::deviceshare::testing::MakeNode;
using ::deviceshare::testing::MakePod;
using ::deviceshare::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ClusterStateTest : public ::testing::Test {
 protected:
  ClusterStateTest() {
    BackendRegistry registry;
    EXPECT_OK(RegisterBuiltinBackends(registry));
    backends_ =
        std::make_unique<BackendSet>(*BackendSet::Create(registry, Config{}));
    state_ = std::make_unique<ClusterState>(backends_.get());
  }

  // Places `pod` on `node` with the hami-core backend's own choice.
  PodAllocation Place(const PodRequest& pod, const std::string& node) {
    NodeFit fit =
        backends_->all().front()->Filter(pod, *state_->FindNode(node), {});
    EXPECT_TRUE(fit.fits()) << fit.message;
    return fit.allocation;
  }

  std::unique_ptr<BackendSet> backends_;
  std::unique_ptr<ClusterState> state_;
};

// Config{} (no scheduler.modes) enables every registered backend, in name
// order; the state counts the registered GPUs of each mode.
TEST_F(ClusterStateTest, EveryBackendIsEnabledAndGpuModesAreCounted) {
  std::vector<std::string> modes;
  for (const auto& backend : backends_->all()) {
    modes.emplace_back(backend->mode().name());
  }
  EXPECT_THAT(modes, ElementsAre("hami-core", "mig", "mps"));
  const SharingMode hami_core("hami-core");
  const SharingMode mps("mps");
  NodeInventory node = MakeNode("n1", 2, 10000);
  node.gpus[1].mode = mps;
  ASSERT_OK(state_->UpsertNode(node));
  EXPECT_TRUE(state_->HasGpusInMode(hami_core));
  EXPECT_TRUE(state_->HasGpusInMode(mps));
  EXPECT_FALSE(state_->HasGpusInMode(SharingMode("mig")));
  node.gpus[1].mode = hami_core;  // registered again, in another mode
  ASSERT_OK(state_->UpsertNode(node));
  EXPECT_TRUE(state_->HasGpusInMode(hami_core));
  EXPECT_FALSE(state_->HasGpusInMode(mps));
  EXPECT_OK(state_->CheckInvariants());
  state_->RemoveNode("n1");
  EXPECT_FALSE(state_->HasGpusInMode(hami_core));
  EXPECT_OK(state_->CheckInvariants());
}

// A node past the documented maxima is refused with the field named, the
// others still served: a GPU count that made every decision over that node
// take seconds, a memory figure whose totals wrapped negative.
TEST_F(ClusterStateTest, NodesPastTheMaximaAreRefusedNamingTheField) {
  EXPECT_THAT(state_->UpsertNode(MakeNode("many", kMaxGpusPerNode + 1, 1000)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("node many: 1025 GPUs, more than the 1024")));
  EXPECT_THAT(
      state_->UpsertNode(MakeNode("huge", 1, kMaxGpuMemoryMib + 1)),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("memory_mib")));
  ASSERT_OK(
      state_->UpsertNode(MakeNode("edge", kMaxGpusPerNode, kMaxGpuMemoryMib)));
  EXPECT_EQ(state_->FindNode("many"), nullptr);
  EXPECT_NE(state_->FindNode("edge"), nullptr);
  EXPECT_OK(state_->CheckInvariants());
}

TEST_F(ClusterStateTest, PodAddedAndRemovedIncrementally) {
  ASSERT_OK(state_->UpsertNode(MakeNode("n1", 2, 10000)));
  PodRequest pod = MakePod("p", {GpuContainer("c", 1, 6000, 20)});
  pod.cpu_milli = 500;
  PodAllocation allocation = Place(pod, "n1");
  ASSERT_OK(state_->AddPod(pod, allocation));
  const NodeState* node = state_->FindNode("n1");
  EXPECT_EQ(node->total_used_memory_mib(), 6000);
  EXPECT_EQ(node->used_cpu_milli(), 500);
  // Same event again: a no-op, not a double charge.
  ASSERT_OK(state_->AddPod(pod, allocation));
  EXPECT_EQ(node->total_used_memory_mib(), 6000);
  state_->RemovePod(pod.uid);
  state_->RemovePod(pod.uid);
  EXPECT_EQ(node->total_used_memory_mib(), 0);
  EXPECT_EQ(node->used_cpu_milli(), 0);
  EXPECT_EQ(state_->pod_count(), 0u);
}

TEST_F(ClusterStateTest, SameUidWithAnotherAllocationIsAlreadyExists) {
  ASSERT_OK(state_->UpsertNode(MakeNode("n1", 2, 10000)));
  PodRequest pod = MakePod("p", {GpuContainer("c", 1, 1000, 0)});
  PodAllocation allocation = Place(pod, "n1");
  ASSERT_OK(state_->AddPod(pod, allocation));
  allocation.containers[0].devices[0].memory_mib = 2000;
  EXPECT_THAT(
      state_->AddPod(pod, allocation),
      StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("default/p")));
}

TEST_F(ClusterStateTest, AllocationThatDoesNotFitIsRejectedAndNotRecorded) {
  ASSERT_OK(state_->UpsertNode(MakeNode("n1", 1, 10000)));
  PodRequest big = MakePod("big", {GpuContainer("c", 1, 8000, 0)});
  PodAllocation placed = Place(big, "n1");
  ASSERT_OK(state_->AddPod(big, placed));
  PodRequest other = MakePod("other", {GpuContainer("c", 1, 8000, 0)});
  PodAllocation forged = placed;  // as if decided before `big` landed
  forged.pod_uid = other.uid;
  forged.pod_key = other.Key();
  EXPECT_THAT(state_->AddPod(other, forged),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("InsufficientMemory")));
  EXPECT_EQ(state_->FindPod(other.uid), nullptr);
  EXPECT_OK(state_->CheckInvariants());
}

TEST_F(ClusterStateTest, MismatchedAllocationIsInvalidArgument) {
  ASSERT_OK(state_->UpsertNode(MakeNode("n1", 1, 10000)));
  PodRequest pod = MakePod("p", {GpuContainer("c", 1, 1000, 0)});
  PodAllocation allocation = Place(pod, "n1");
  allocation.containers.clear();
  EXPECT_THAT(state_->AddPod(pod, allocation),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("0 containers, the pod has 1")));
  allocation = Place(pod, "n1");
  allocation.pod_uid = "someone-else";
  EXPECT_THAT(state_->AddPod(pod, allocation),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("uid")));
}

TEST_F(ClusterStateTest, PodBeforeItsNodeIsChargedWhenTheNodeRegisters) {
  ASSERT_OK(state_->UpsertNode(MakeNode("n1", 1, 10000)));
  PodRequest pod = MakePod("p", {GpuContainer("c", 1, 3000, 0)});
  PodAllocation allocation = Place(pod, "n1");
  allocation.node_name = "n2";
  for (auto& c : allocation.containers) {
    for (auto& d : c.devices) d.uuid = "GPU-n2-0";
  }
  ASSERT_OK(state_->AddPod(pod, allocation));
  EXPECT_FALSE(state_->FindPod(pod.uid)->on_ledger);
  ASSERT_OK(state_->UpsertNode(MakeNode("n2", 1, 10000)));
  EXPECT_TRUE(state_->FindPod(pod.uid)->on_ledger);
  EXPECT_EQ(state_->FindNode("n2")->ledger(0).used_memory_mib(), 3000);
}

TEST_F(ClusterStateTest, ShrunkNodeDisplacesPodsWithoutLosingThem) {
  ASSERT_OK(state_->UpsertNode(MakeNode("n1", 2, 10000)));
  PodRequest a = MakePod("a", {GpuContainer("c", 1, 4000, 0)});
  a.use_uuids = {"GPU-n1-0"};
  PodRequest b = MakePod("b", {GpuContainer("c", 1, 4000, 0)});
  b.use_uuids = {"GPU-n1-1"};
  ASSERT_OK(state_->AddPod(a, Place(a, "n1")));
  ASSERT_OK(state_->AddPod(b, Place(b, "n1")));
  // GPU 1 disappears (e.g. fell off the bus).
  auto displaced = state_->UpsertNode(MakeNode("n1", 1, 10000));
  ASSERT_OK(displaced);
  EXPECT_THAT(*displaced, ElementsAre("default/b"));
  EXPECT_NE(state_->FindPod(b.uid), nullptr);
  EXPECT_FALSE(state_->FindPod(b.uid)->on_ledger);
  EXPECT_OK(state_->CheckInvariants());
  // It comes back: the pod is charged again.
  displaced = state_->UpsertNode(MakeNode("n1", 2, 10000));
  ASSERT_OK(displaced);
  EXPECT_TRUE(displaced->empty());
  EXPECT_EQ(state_->FindNode("n1")->ledger(1).used_memory_mib(), 4000);
}

TEST_F(ClusterStateTest, RemovedNodeKeepsPodsUntilTheyAreDeleted) {
  ASSERT_OK(state_->UpsertNode(MakeNode("n1", 1, 10000)));
  PodRequest pod = MakePod("p", {GpuContainer("c", 1, 3000, 0)});
  ASSERT_OK(state_->AddPod(pod, Place(pod, "n1")));
  state_->RemoveNode("n1");
  state_->RemoveNode("n1");
  EXPECT_EQ(state_->FindNode("n1"), nullptr);
  EXPECT_NE(state_->FindPod(pod.uid), nullptr);
  state_->RemovePod(pod.uid);
  EXPECT_EQ(state_->pod_count(), 0u);
}

TEST_F(ClusterStateTest, InvalidInventoryIsRejectedNamingTheField) {
  NodeInventory node = MakeNode("n1", 2, 10000);
  node.gpus[1].uuid = node.gpus[0].uuid;
  EXPECT_THAT(
      state_->UpsertNode(node),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("appears twice")));
  node = MakeNode("n1", 1, 10000);
  node.gpus[0].split_count = 0;
  EXPECT_THAT(
      state_->UpsertNode(node),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("split_count")));
  EXPECT_THAT(state_->RebuildNode("ghost"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("ghost")));
}

}  // namespace
}  // namespace deviceshare

namespace deviceshare {
namespace {

// What a search remembers of a state is keyed by its id: a state made
// where another was destroyed must not share it.
TEST_F(ClusterStateTest, EveryStateHasItsOwnId) {
  const uint64_t first = state_->id();
  state_.reset();
  state_ = std::make_unique<ClusterState>(backends_.get());
  EXPECT_NE(state_->id(), first);
  EXPECT_NE(ClusterState(backends_.get()).id(), state_->id());
}

}  // namespace
}  // namespace deviceshare
