// The mig backend in placement mode (scheduler.migSearch: placement): which
// profile and start each container gets, hardware instances (reuse, create,
// repartition), the allowlist, Commit's checks, Release and Edits.
#include "deviceshare/mig/mig_backend.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/backend/container_placement.h"
#include "deviceshare/hamicore/hamicore_backend.h"
#include "deviceshare/mig/mig_catalog.h"
#include "deviceshare/mig/mig_config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/mig_builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::GpuContainer;
using ::deviceshare::testing::MakeNodeState;
using ::deviceshare::testing::MakePod;
using ::deviceshare::testing::MigBackend;
using ::deviceshare::testing::MigGpu;
using ::deviceshare::testing::MigPod;
using ::deviceshare::testing::OnlyGrant;
using ::deviceshare::testing::Slot;
using ::deviceshare::testing::StatusIs;
using ::deviceshare::testing::WithSevenOneG10gb;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

constexpr char kH100[] = "NVIDIA H100 80GB HBM3";
constexpr char kA100_40[] = "NVIDIA A100-SXM4-40GB";
constexpr char kA30[] = "NVIDIA A30";

Gpu H100(int index) { return MigGpu(index, kH100, 81559); }

ContainerRequest Named(const std::string& name, const std::string& profile) {
  ContainerRequest c = GpuContainer(name, 1, 0, 0);
  c.mig_profile = profile;
  return c;
}

// The single grant of a one-container, one-GPU pod.
uint32_t MaskOf(const DeviceGrant& grant) { return grant.mig.mask(); }

class MigBackendTest : public testing::MigBackendFixture {};

TEST_F(MigBackendTest, SevenNineGibPodsTakeSevenDistinct1gSlotsTheEighthNone) {
  NodeState node = MakeNodeState({H100(0)});
  std::set<int32_t> starts;
  for (int i = 0; i < 7; ++i) {
    absl::StatusOr<PodAllocation> placed = Allocate(
        MigPod(absl::StrCat("p", i), {GpuContainer("c", 1, 9216)}), node);
    ASSERT_OK(placed) << i;
    const DeviceGrant& grant = OnlyGrant(*placed);
    EXPECT_EQ(grant.mode, mig::kMode);
    EXPECT_EQ(grant.mig.profile, "1g.10gb");
    EXPECT_EQ(grant.mig.size, 1);
    EXPECT_EQ(grant.mig_action, MigAction::kCreate);
    // The grant charges the instance: 9984 MiB, 1 of 7 compute slices.
    EXPECT_EQ(grant.memory_mib, 9984);
    EXPECT_EQ(grant.cores, 14);
    if (i == 0) {
      EXPECT_EQ(grant.mig.start, 6);
    }
    EXPECT_TRUE(starts.insert(grant.mig.start).second)
        << "start " << grant.mig.start << " given twice";
  }
  EXPECT_EQ(starts, (std::set<int32_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(node.ledger(0).mig_mask(), 0x7Fu);
  EXPECT_EQ(node.ledger(0).mig_instances(), 7);

  const PodRequest eighth = MigPod("p7", {GpuContainer("c", 1, 9216)});
  NodeFit fit = backend_->Filter(eighth, node, options_);
  EXPECT_EQ(fit.code, mig::kMigNoSlot);
  EXPECT_THAT(fit.message, HasSubstr("MigNoSlot"));
  EXPECT_THAT(fit.message, HasSubstr("memory=9216MiB"));
  ASSERT_EQ(fit.gpu_verdicts.size(), 1u);
  EXPECT_EQ(fit.gpu_verdicts[0].code, mig::kMigNoSlot);
  EXPECT_THAT(
      Allocate(eighth, node),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("MigNoSlot")));
  EXPECT_EQ(node.ledger(0).pod_count(), 7u);
}

TEST_F(MigBackendTest, ThreeGThenFourGShareOneIdleH100) {
  NodeState node = MakeNodeState({H100(0)});
  absl::StatusOr<PodAllocation> first =
      Allocate(MigPod("a", {GpuContainer("c", 1, 40448)}), node);
  ASSERT_OK(first);
  EXPECT_EQ(OnlyGrant(*first).mig.profile, "3g.40gb");
  EXPECT_EQ(OnlyGrant(*first).mig.start, 4);
  EXPECT_EQ(OnlyGrant(*first).mig.size, 4);

  // 50 % of the SMs is 3.5 compute slices: a 4g.
  absl::StatusOr<PodAllocation> second =
      Allocate(MigPod("b", {GpuContainer("c", 1, 30000, 50)}), node);
  ASSERT_OK(second);
  EXPECT_EQ(OnlyGrant(*second).mig.profile, "4g.40gb");
  EXPECT_EQ(OnlyGrant(*second).mig.start, 0);
  EXPECT_EQ(OnlyGrant(*second).cores, 57);  // 4 of 7 compute slices
  EXPECT_EQ(node.ledger(0).mig_mask(), 0xFFu);
}

TEST_F(MigBackendTest, ThreeGThenNamedFourGShareOneIdleH100) {
  NodeState node = MakeNodeState({H100(0)});
  ASSERT_OK(Allocate(MigPod("a", {GpuContainer("c", 1, 40448)}), node));
  absl::StatusOr<PodAllocation> second =
      Allocate(MigPod("b", {Named("c", "4g.40gb")}), node);
  ASSERT_OK(second);
  EXPECT_EQ(OnlyGrant(*second).mig.profile, "4g.40gb");
  EXPECT_EQ(OnlyGrant(*second).mig.start, 0);
}

TEST_F(MigBackendTest, ExplicitProfileIsHonouredOverTheSmallestFit) {
  NodeState node = MakeNodeState({H100(0)});
  // A tiny memory request would get a 1g; the named 2g wins.
  ContainerRequest c = Named("c", "2g.20gb");
  c.memory_mib = 100;
  absl::StatusOr<PodAllocation> placed = Allocate(MigPod("a", {c}), node);
  ASSERT_OK(placed);
  const DeviceGrant& grant = OnlyGrant(*placed);
  EXPECT_EQ(grant.mig.profile, "2g.20gb");
  EXPECT_THAT(grant.mig.start, ::testing::AnyOf(0, 2, 4));
  EXPECT_EQ(grant.mig.size, 2);
  EXPECT_EQ(grant.memory_mib, 20096);
}

TEST_F(MigBackendTest, ExplicitProfileNamesAreMatchedWithoutCase) {
  NodeState node = MakeNodeState({H100(0)});
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("a", {Named("c", "MIG 3g.40gb")}), node);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).mig.profile, "3g.40gb");
}

TEST_F(MigBackendTest, MediaExtensionProfileIsCappedAtOnePerGpu) {
  NodeState node = MakeNodeState({H100(0), H100(1)});
  absl::StatusOr<PodAllocation> first =
      Allocate(MigPod("a", {Named("c", "1g.10gb+me")}), node);
  ASSERT_OK(first);
  EXPECT_EQ(OnlyGrant(*first).mig.profile, "1g.10gb+me");
  absl::StatusOr<PodAllocation> second =
      Allocate(MigPod("b", {Named("c", "1g.10gb+me")}), node);
  ASSERT_OK(second);
  EXPECT_NE(OnlyGrant(*second).uuid, OnlyGrant(*first).uuid);

  const PodRequest third = MigPod("c", {Named("c", "1g.10gb+me")});
  NodeFit fit = backend_->Filter(third, node, options_);
  EXPECT_EQ(fit.code, mig::kMigNoSlot);
  // A plain 1g still fits beside each +me.
  ASSERT_OK(Allocate(MigPod("d", {GpuContainer("c", 1, 9216)}), node));
}

TEST_F(MigBackendTest, MediaExtensionProfileIsNeverChosenBySize) {
  NodeState node = MakeNodeState({H100(0)});
  for (int i = 0; i < 7; ++i) {
    absl::StatusOr<PodAllocation> placed = Allocate(
        MigPod(absl::StrCat("p", i), {GpuContainer("c", 1, 1000)}), node);
    ASSERT_OK(placed);
    EXPECT_EQ(OnlyGrant(*placed).mig.profile, "1g.10gb");
  }
}

TEST_F(MigBackendTest, WholeCardRequestGetsTheLargestProfile) {
  NodeState node = MakeNodeState({H100(0)});
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("a", {GpuContainer("c", 1, 0, 0)}), node);
  ASSERT_OK(placed);
  const DeviceGrant& grant = OnlyGrant(*placed);
  EXPECT_EQ(grant.mig.profile, "7g.80gb");
  EXPECT_EQ(grant.mig.start, 0);
  EXPECT_EQ(grant.mig.size, 8);
  EXPECT_EQ(grant.memory_mib, 81152);
  EXPECT_EQ(grant.cores, 100);
}

TEST_F(MigBackendTest, MemoryPercentIsOfTheLargestProfile) {
  NodeState node = MakeNodeState({H100(0)});
  ContainerRequest c = GpuContainer("c", 1, 0, 0);
  c.memory_percent = 50;  // 40576 MiB of 7g's 81152: more than a 3g
  absl::StatusOr<PodAllocation> placed = Allocate(MigPod("a", {c}), node);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).mig.profile, "7g.80gb");

  NodeState other = MakeNodeState({H100(0)});
  c.memory_percent = 49;  // 39764 MiB: a 3g.40gb
  placed = Allocate(MigPod("b", {c}), other);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).mig.profile, "3g.40gb");
}

TEST_F(MigBackendTest, MemoryAboveTheLargestProfileHasNoProfile) {
  NodeState node = MakeNodeState({H100(0)});
  NodeFit fit = backend_->Filter(MigPod("a", {GpuContainer("c", 1, 81153)}),
                                 node, options_);
  EXPECT_EQ(fit.code, mig::kMigNoProfile);
  EXPECT_THAT(fit.message, HasSubstr("MigNoProfile"));
  EXPECT_THAT(fit.message, HasSubstr("largest 81152MiB"));
  EXPECT_EQ(node.ledger(0).pod_count(), 0u);
}

TEST_F(MigBackendTest, UnknownExplicitProfileHasNoProfile) {
  NodeState node = MakeNodeState({H100(0)});
  NodeFit fit =
      backend_->Filter(MigPod("a", {Named("c", "5g.50gb")}), node, options_);
  EXPECT_EQ(fit.code, mig::kMigNoProfile);
}

TEST_F(MigBackendTest, GpuModelWithoutProfileTableIsUnknownModel) {
  Gpu t4 = MigGpu(0, "Tesla T4", 15360);
  NodeState node = MakeNodeState({t4});
  NodeFit fit = backend_->Filter(MigPod("a", {GpuContainer("c", 1, 1000)}),
                                 node, options_);
  EXPECT_EQ(fit.code, mig::kMigUnknownModel);
  EXPECT_THAT(fit.message, HasSubstr("Tesla T4"));
  EXPECT_FALSE(
      backend_->MayFit(MigPod("a", {GpuContainer("c", 1, 1000)}), node));
}

TEST_F(MigBackendTest, TwoGpuContainerGetsInstancesOnTwoDistinctGpus) {
  NodeState node = MakeNodeState({H100(0), H100(1), H100(2)});
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("a", {GpuContainer("c", 2, 9216)}), node);
  ASSERT_OK(placed);
  ASSERT_EQ(placed->containers[0].devices.size(), 2u);
  const DeviceGrant& a = placed->containers[0].devices[0];
  const DeviceGrant& b = placed->containers[0].devices[1];
  EXPECT_NE(a.uuid, b.uuid);
  EXPECT_EQ(a.mig.profile, "1g.10gb");
  EXPECT_EQ(b.mig.profile, "1g.10gb");
  int gpus_used = 0;
  for (size_t pos = 0; pos < node.gpu_count(); ++pos) {
    gpus_used += node.ledger(pos).mig_instances();
  }
  EXPECT_EQ(gpus_used, 2);
}

// HAMi gives a container asking N GPUs N instances of one MIG GPU when
// fewer GPUs are there (mig_allocation_test.go:207); more instances than
// the GPU holds do not fit.
TEST_F(MigBackendTest, TwoGpuContainerOnOneGpuNodeGetsTwoInstances) {
  NodeState node = MakeNodeState({H100(0)});
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("a", {GpuContainer("c", 2, 9216)}), node);
  ASSERT_OK(placed);
  const std::vector<DeviceGrant>& devices = placed->containers[0].devices;
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].uuid, devices[1].uuid);
  EXPECT_EQ(MaskOf(devices[0]) & MaskOf(devices[1]), 0u);
  EXPECT_EQ(node.ledger(0).mig_instances(), 2);

  NodeState fresh = MakeNodeState({H100(0)});
  NodeFit fit = backend_->Filter(MigPod("b", {GpuContainer("c", 8, 9216)}),
                                 fresh, options_);
  EXPECT_EQ(fit.code, ReasonCode::kInsufficientGpus);
}

TEST_F(MigBackendTest, TwoContainersOnOneGpuGetDisjointSlots) {
  NodeState node = MakeNodeState({H100(0)});
  absl::StatusOr<PodAllocation> placed = Allocate(
      MigPod("a", {GpuContainer("x", 1, 9216), GpuContainer("y", 1, 9216)}),
      node);
  ASSERT_OK(placed);
  ASSERT_EQ(placed->containers.size(), 2u);
  const DeviceGrant& x = placed->containers[0].devices.at(0);
  const DeviceGrant& y = placed->containers[1].devices.at(0);
  EXPECT_NE(x.mig.start, y.mig.start);
  EXPECT_EQ(MaskOf(x) & MaskOf(y), 0u);
  EXPECT_EQ(node.ledger(0).mig_instances(), 2);
}

TEST_F(MigBackendTest, LargeSiblingsOfOnePodAreLaidOutTogether) {
  NodeState node = MakeNodeState({H100(0)});
  // 4g + 3g: the second container must take the start the first left.
  absl::StatusOr<PodAllocation> placed = Allocate(
      MigPod("a", {Named("x", "3g.40gb"), Named("y", "4g.40gb")}), node);
  ASSERT_OK(placed);
  EXPECT_EQ(placed->containers[0].devices.at(0).mig.start, 4);
  EXPECT_EQ(placed->containers[1].devices.at(0).mig.start, 0);
  // A third 3g has no room left.
  NodeFit fit =
      backend_->Filter(MigPod("b", {Named("z", "3g.40gb")}), node, options_);
  EXPECT_EQ(fit.code, mig::kMigNoSlot);
}

TEST_F(MigBackendTest, InitContainerGetsItsOwnInstance) {
  NodeState node = MakeNodeState({H100(0)});
  ContainerRequest init = GpuContainer("init", 1, 9216);
  init.is_init = true;
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("a", {init, GpuContainer("app", 1, 9216)}), node);
  ASSERT_OK(placed);
  const DeviceGrant& i = placed->containers[0].devices.at(0);
  const DeviceGrant& a = placed->containers[1].devices.at(0);
  EXPECT_TRUE(placed->containers[0].is_init);
  EXPECT_EQ(MaskOf(i) & MaskOf(a), 0u);
  EXPECT_EQ(node.ledger(0).mig_instances(), 2);
  EXPECT_EQ(node.ledger(0).used_slots(), 2);
}

TEST_F(MigBackendTest, A100_40GbNineGibPodGetsTheTwoSlice1g) {
  NodeState node = MakeNodeState({MigGpu(0, kA100_40, 40960)});
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("a", {GpuContainer("c", 1, 9216)}), node);
  ASSERT_OK(placed);
  // 1g.5gb (4864 MiB) is too small; 1g.10gb covers two memory slices with
  // one compute slice, before 2g.10gb.
  EXPECT_EQ(OnlyGrant(*placed).mig.profile, "1g.10gb");
  EXPECT_EQ(OnlyGrant(*placed).mig.size, 2);
  EXPECT_EQ(OnlyGrant(*placed).mig.start % 2, 0);
  EXPECT_EQ(OnlyGrant(*placed).memory_mib, 9984);
}

TEST_F(MigBackendTest, A30TakesFour1gAndRefusesTheFifth) {
  NodeState node = MakeNodeState({MigGpu(0, kA30, 24576)});
  std::set<int32_t> starts;
  for (int i = 0; i < 4; ++i) {
    absl::StatusOr<PodAllocation> placed = Allocate(
        MigPod(absl::StrCat("p", i), {GpuContainer("c", 1, 5000)}), node);
    ASSERT_OK(placed);
    EXPECT_EQ(OnlyGrant(*placed).mig.profile, "1g.6gb");
    EXPECT_EQ(OnlyGrant(*placed).cores, 25);  // 1 of 4 compute slices
    starts.insert(OnlyGrant(*placed).mig.start);
  }
  EXPECT_EQ(starts, (std::set<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(
      backend_
          ->Filter(MigPod("p4", {GpuContainer("c", 1, 5000)}), node, options_)
          .code,
      mig::kMigNoSlot);
}

TEST_F(MigBackendTest, MixedNodeSendsEachPodToAGpuWhoseProfilesHoldIt) {
  NodeState node = MakeNodeState({MigGpu(0, kA30, 24576), H100(1)});
  // More than A30's 4g.24gb: only the H100 holds it.
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("a", {GpuContainer("c", 1, 30000)}), node);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).uuid, "GPU-mig-1");
  EXPECT_EQ(OnlyGrant(*placed).mig.profile, "3g.40gb");
  // A named A30 profile only exists on the A30.
  placed = Allocate(MigPod("b", {Named("c", "2g.12gb")}), node);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).uuid, "GPU-mig-0");
}

// ---- Hardware instances (Gpu::mig_instances) ----

TEST_F(MigBackendTest, FreeAdequateHardwareInstanceIsReused) {
  Gpu gpu = H100(0);
  gpu.mig_instances = {Slot("2g.20gb", 0, 2), Slot("1g.10gb", 2, 1),
                       Slot("1g.10gb", 3, 1)};
  NodeState node = MakeNodeState({gpu});
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("a", {GpuContainer("c", 1, 9216)}), node);
  ASSERT_OK(placed);
  // The smallest adequate instance, highest start first.
  EXPECT_EQ(OnlyGrant(*placed).mig_action, MigAction::kReuse);
  EXPECT_EQ(OnlyGrant(*placed).mig.profile, "1g.10gb");
  EXPECT_EQ(OnlyGrant(*placed).mig.start, 3);

  placed = Allocate(MigPod("b", {GpuContainer("c", 1, 9216)}), node);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).mig_action, MigAction::kReuse);
  EXPECT_EQ(OnlyGrant(*placed).mig.start, 2);

  // 15000 MiB: the free 2g instance would do, but a 1g.20gb (one compute
  // slice fewer) can be created in the free slices beside it.
  placed = Allocate(MigPod("c", {GpuContainer("c", 1, 15000)}), node);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).mig_action, MigAction::kCreate);
  EXPECT_EQ(OnlyGrant(*placed).mig.profile, "1g.20gb");
  EXPECT_EQ(OnlyGrant(*placed).mig.start, 6);

  placed = Allocate(MigPod("d", {GpuContainer("c", 1, 15000)}), node);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).mig.profile, "1g.20gb");
  EXPECT_EQ(OnlyGrant(*placed).mig.start, 4);

  // Slices 4-7 are taken now: the free 2g instance is reused.
  placed = Allocate(MigPod("e", {GpuContainer("c", 1, 15000)}), node);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).mig_action, MigAction::kReuse);
  EXPECT_EQ(OnlyGrant(*placed).mig.profile, "2g.20gb");
  EXPECT_EQ(OnlyGrant(*placed).mig.start, 0);
}

TEST_F(MigBackendTest, NewInstanceIsCreatedOnlyInUncoveredSlices) {
  Gpu gpu = H100(0);
  gpu.mig_instances = {Slot("1g.10gb", 6, 1)};  // too small for 30000 MiB
  NodeState node = MakeNodeState({gpu});
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("a", {GpuContainer("c", 1, 30000)}), node);
  ASSERT_OK(placed);
  const DeviceGrant& grant = OnlyGrant(*placed);
  EXPECT_EQ(grant.mig_action, MigAction::kCreate);
  EXPECT_EQ(grant.mig.profile, "3g.40gb");
  // 3g@4 would cover the existing 1g@6.
  EXPECT_EQ(grant.mig.start, 0);
  EXPECT_EQ(MaskOf(grant) & (1u << 6), 0u);
}

TEST_F(MigBackendTest, HardwareInstancesCountTowardsProfileCaps) {
  Gpu gpu = H100(0);
  gpu.mig_instances = {Slot("1g.10gb+me", 0, 1)};
  NodeState node = MakeNodeState({gpu});
  // The free +me instance is reused...
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("a", {Named("c", "1g.10gb+me")}), node);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).mig_action, MigAction::kReuse);
  EXPECT_EQ(OnlyGrant(*placed).mig.start, 0);
  // ... and no second one is created beside it.
  EXPECT_EQ(
      backend_->Filter(MigPod("b", {Named("c", "1g.10gb+me")}), node, options_)
          .code,
      mig::kMigNoSlot);
}

TEST_F(MigBackendTest, IdleGpuWhoseInstancesAreInTheWayIsRepartitioned) {
  Gpu gpu = WithSevenOneG10gb(H100(0));
  NodeState node = MakeNodeState({gpu});
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("a", {GpuContainer("c", 1, 40448)}), node);
  ASSERT_OK(placed);
  const DeviceGrant& grant = OnlyGrant(*placed);
  EXPECT_EQ(grant.mig_action, MigAction::kRepartition);
  EXPECT_EQ(grant.mig.profile, "3g.40gb");
  EXPECT_EQ(grant.mig.start, 4);
}

TEST_F(MigBackendTest, InstancesARepartitionDestroyedAreNotReusedLater) {
  Gpu gpu = WithSevenOneG10gb(H100(0));
  NodeState node = MakeNodeState({gpu});
  ASSERT_OK(Allocate(MigPod("a", {GpuContainer("c", 1, 40448)}), node));
  // The hardware is not re-reported yet, but the repartition destroyed every
  // unused instance, 1g@0..3 too: a later pod creates its own.
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("b", {GpuContainer("c", 1, 9216)}), node);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).mig_action, MigAction::kCreate);
  EXPECT_EQ(OnlyGrant(*placed).mig.profile, "1g.10gb");
  EXPECT_LT(OnlyGrant(*placed).mig.start, 4);
}

TEST_F(MigBackendTest, InstancesARepartitionDestroyedDoNotCountTowardsCaps) {
  Gpu gpu = H100(0);
  gpu.mig_instances.push_back(Slot("1g.10gb+me", 0, 1));
  for (int s = 1; s < 7; ++s)
    gpu.mig_instances.push_back(Slot("1g.10gb", s, 1));
  NodeState node = MakeNodeState({gpu});
  // The first container repartitions; the +me instance at 0 goes with it,
  // so the second container may create a new +me.
  absl::StatusOr<PodAllocation> placed = Allocate(
      MigPod("a", {GpuContainer("x", 1, 40448), Named("y", "1g.10gb+me")}),
      node);
  ASSERT_OK(placed);
  EXPECT_EQ(placed->containers[0].devices.at(0).mig_action,
            MigAction::kRepartition);
  const DeviceGrant& me = placed->containers[1].devices.at(0);
  EXPECT_EQ(me.mig.profile, "1g.10gb+me");
  EXPECT_EQ(me.mig_action, MigAction::kCreate);
}

TEST_F(MigBackendTest, BusyGpuIsNeverRepartitioned) {
  Gpu gpu = WithSevenOneG10gb(H100(0));
  NodeState node = MakeNodeState({gpu});
  absl::StatusOr<PodAllocation> small =
      Allocate(MigPod("a", {GpuContainer("c", 1, 9216)}), node);
  ASSERT_OK(small);
  EXPECT_EQ(OnlyGrant(*small).mig_action, MigAction::kReuse);

  NodeFit fit = backend_->Filter(MigPod("b", {GpuContainer("c", 1, 40448)}),
                                 node, options_);
  EXPECT_EQ(fit.code, mig::kMigNoSlot);
  // Whole card too.
  fit =
      backend_->Filter(MigPod("c", {GpuContainer("c", 1, 0)}), node, options_);
  EXPECT_EQ(fit.code, mig::kMigNoSlot);
}

TEST_F(MigBackendTest, RepartitionIsTheLastResortAcrossGpus) {
  Gpu in_the_way = H100(0);
  in_the_way.mig_instances = {Slot("3g.40gb", 0, 4), Slot("3g.40gb", 4, 4)};
  NodeState node = MakeNodeState({in_the_way, H100(1)});
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("a", {GpuContainer("c", 1, 0)}), node);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).uuid, "GPU-mig-1");
  EXPECT_EQ(OnlyGrant(*placed).mig_action, MigAction::kCreate);
  // Only the repartition is left for the second whole-card pod.
  placed = Allocate(MigPod("b", {GpuContainer("c", 1, 0)}), node);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).uuid, "GPU-mig-0");
  EXPECT_EQ(OnlyGrant(*placed).mig_action, MigAction::kRepartition);
}

// ---- migProfileAllowlist ----

TEST_F(MigBackendTest, AllowlistRestrictsProfilesOfListedModels) {
  mig::MigConfig mig;
  mig.profile_allowlist = {
      mig::MigProfileAllowlist{{"H100"}, {"3g.40gb", "7g.80gb"}}};
  backend_ = MigBackend(mig::WithMigConfig(Config{}, mig));
  NodeState node = MakeNodeState({H100(0)});
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("a", {GpuContainer("c", 1, 9216)}), node);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).mig.profile, "3g.40gb");
  NodeFit fit =
      backend_->Filter(MigPod("b", {Named("c", "1g.10gb")}), node, options_);
  EXPECT_EQ(fit.code, mig::kMigNoProfile);
  EXPECT_THAT(fit.message, HasSubstr("no allowed profile"));

  // A model the allowlist does not name keeps every profile.
  NodeState a30 = MakeNodeState({MigGpu(0, kA30, 24576)});
  placed = Allocate(MigPod("c", {GpuContainer("c", 1, 5000)}), a30);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).mig.profile, "1g.6gb");
}

TEST_F(MigBackendTest, AllowlistOfOnlyUnknownNamesAllowsNothing) {
  mig::MigConfig mig;
  mig.profile_allowlist = {mig::MigProfileAllowlist{{"H100"}, {"9g.99gb"}}};
  backend_ = MigBackend(mig::WithMigConfig(Config{}, mig));
  NodeState node = MakeNodeState({H100(0)});
  EXPECT_EQ(
      backend_
          ->Filter(MigPod("a", {GpuContainer("c", 1, 1000)}), node, options_)
          .code,
      mig::kMigNoProfile);
}

// ---- Commit and Release ----

DeviceGrant MigGrant(const std::string& uuid, const std::string& profile,
                     int32_t start, int32_t size = 0) {
  DeviceGrant grant;
  grant.uuid = uuid;
  grant.mode = mig::kMode;
  grant.memory_mib = 1000;
  grant.cores = 10;
  grant.mig = MigSlot{profile, start, size, "", -1};
  return grant;
}

PodAllocation OneGrantAllocation(const std::string& pod, DeviceGrant grant) {
  PodAllocation allocation;
  allocation.pod_uid = absl::StrCat("uid-", pod);
  allocation.pod_key = absl::StrCat("default/", pod);
  allocation.node_name = "n1";
  allocation.containers.push_back(
      testing::Container(0, false, {std::move(grant)}));
  return allocation;
}

PodRequest OneContainerPod(const std::string& name) {
  return MigPod(name, {GpuContainer("c0", 1, 1000)});
}

TEST_F(MigBackendTest, CommitFillsTheSizeFromTheCatalog) {
  NodeState node = MakeNodeState({H100(0)});
  ASSERT_OK(backend_->Commit(
      OneContainerPod("a"),
      OneGrantAllocation("a", MigGrant("GPU-mig-0", "3g.40gb", 4)), node));
  ASSERT_EQ(node.ledger(0).SharesOf("uid-a").size(), 1u);
  EXPECT_EQ(node.ledger(0).SharesOf("uid-a")[0].mig.size, 4);
  EXPECT_EQ(node.ledger(0).mig_mask(), 0xF0u);
}

// A record naming an instance the GPU's catalog cannot place (an illegal
// start, a size its profile contradicts, a profile the model lacks, a model
// without a table) is charged, and holds the whole GPU until its pod
// leaves: the instance is somewhere on it, and refusing the record would
// hand its slices out again (HAMi fails such a GPU closed).
TEST_F(MigBackendTest, CommitHoldsTheGpuForAnInstanceItCannotPlace) {
  struct Case {
    const char* why;
    Gpu gpu;
    DeviceGrant grant;
  };
  const Case cases[] = {
      {"illegal start", H100(0), MigGrant("GPU-mig-0", "3g.40gb", 2)},
      {"start past the slices", H100(0), MigGrant("GPU-mig-0", "1g.10gb", 7)},
      {"size the profile contradicts", H100(0),
       MigGrant("GPU-mig-0", "2g.20gb", 0, 4)},
      {"profile the model lacks", H100(0), MigGrant("GPU-mig-0", "5g.50gb", 0)},
      {"model without a table", MigGpu(0, "Tesla T4", 15360),
       MigGrant("GPU-mig-0", "1g.10gb", 0)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.why);
    NodeState node = MakeNodeState({c.gpu});
    ASSERT_OK(backend_->Commit(OneContainerPod("a"),
                               OneGrantAllocation("a", c.grant), node));
    ASSERT_EQ(node.ledger(0).SharesOf("uid-a").size(), 1u);
    EXPECT_TRUE(node.ledger(0).SharesOf("uid-a")[0].mig.holds_gpu);
    EXPECT_EQ(node.ledger(0).gpu_holders(), 1);
    EXPECT_OK(node.ledger(0).CheckInvariants());
    NodeState copy = node;
    EXPECT_FALSE(Allocate(OneContainerPod("b"), copy).ok());
  }
}

TEST_F(MigBackendTest, CommitRejectsAnOverlappingSlot) {
  NodeState node = MakeNodeState({H100(0)});
  ASSERT_OK(backend_->Commit(
      OneContainerPod("a"),
      OneGrantAllocation("a", MigGrant("GPU-mig-0", "3g.40gb", 4)), node));
  const DeviceLedger before = node.ledger(0);
  EXPECT_THAT(
      backend_->Commit(
          OneContainerPod("b"),
          OneGrantAllocation("b", MigGrant("GPU-mig-0", "2g.20gb", 4)), node),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               HasSubstr("PartitionTaken")));
  EXPECT_TRUE(node.ledger(0) == before);

  // Two containers of one pod on the same slices.
  PodAllocation twins =
      OneGrantAllocation("c", MigGrant("GPU-mig-0", "1g.10gb", 1));
  twins.containers.push_back(
      testing::Container(1, false, {MigGrant("GPU-mig-0", "2g.20gb", 0)}));
  EXPECT_THAT(backend_->Commit(MigPod("c", {GpuContainer("c0", 1, 1000),
                                            GpuContainer("c1", 1, 1000)}),
                               twins, node),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_TRUE(node.ledger(0) == before);
}

TEST_F(MigBackendTest, CommitRejectsASecondMediaExtensionInstance) {
  NodeState node = MakeNodeState({H100(0)});
  // Within one pod.
  PodAllocation twins =
      OneGrantAllocation("a", MigGrant("GPU-mig-0", "1g.10gb+me", 0));
  twins.containers.push_back(
      testing::Container(1, false, {MigGrant("GPU-mig-0", "1g.10gb+me", 1)}));
  EXPECT_THAT(
      backend_->Commit(MigPod("a", {GpuContainer("c0", 1, 1000),
                                    GpuContainer("c1", 1, 1000)}),
                       twins, node),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("at most 1")));
  EXPECT_EQ(node.ledger(0).pod_count(), 0u);
  // Across pods.
  ASSERT_OK(backend_->Commit(
      OneContainerPod("b"),
      OneGrantAllocation("b", MigGrant("GPU-mig-0", "1g.10gb+me", 0)), node));
  EXPECT_THAT(backend_->Commit(OneContainerPod("c"),
                               OneGrantAllocation(
                                   "c", MigGrant("GPU-mig-0", "1g.10gb+me", 3)),
                               node),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("2 instances of 1g.10gb+me")));
  EXPECT_EQ(node.ledger(0).pod_count(), 1u);
}

TEST_F(MigBackendTest, CommitStoresTheCanonicalProfileName) {
  NodeState node = MakeNodeState({H100(0)});
  ASSERT_OK(backend_->Commit(
      OneContainerPod("a"),
      OneGrantAllocation("a", MigGrant("GPU-mig-0", "MIG 1G.10GB+ME", 0)),
      node));
  ASSERT_EQ(node.ledger(0).SharesOf("uid-a").size(), 1u);
  EXPECT_EQ(node.ledger(0).SharesOf("uid-a")[0].mig.profile, "1g.10gb+me");
  // So the cap sees it, however the next grant spells the name.
  EXPECT_THAT(
      backend_->Commit(
          OneContainerPod("b"),
          OneGrantAllocation("b", MigGrant("GPU-mig-0", "1g.10gb+me", 1)),
          node),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("at most 1")));
}

TEST_F(MigBackendTest, CommitRejectsAnyProfileOverItsInstanceCap) {
  // A30's 2g.12gb+me has two legal starts but at most one instance.
  NodeState node = MakeNodeState({MigGpu(0, kA30, 24576)});
  ASSERT_OK(backend_->Commit(
      OneContainerPod("a"),
      OneGrantAllocation("a", MigGrant("GPU-mig-0", "2g.12gb+me", 0)), node));
  EXPECT_THAT(
      backend_->Commit(
          OneContainerPod("b"),
          OneGrantAllocation("b", MigGrant("GPU-mig-0", "2g.12gb+me", 2)),
          node),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("at most 1")));
  // The plain 2g.12gb (at most 2) still fits there.
  EXPECT_OK(backend_->Commit(
      OneContainerPod("c"),
      OneGrantAllocation("c", MigGrant("GPU-mig-0", "2g.12gb", 2)), node));
  EXPECT_EQ(node.ledger(0).mig_mask(), 0xFu);
}

TEST_F(MigBackendTest, CommitIsAllOrNothingAcrossGpus) {
  NodeState node = MakeNodeState({H100(0), H100(1)});
  ASSERT_OK(backend_->Commit(
      OneContainerPod("a"),
      OneGrantAllocation("a", MigGrant("GPU-mig-1", "7g.80gb", 0)), node));
  const DeviceLedger gpu0 = node.ledger(0);
  PodAllocation both =
      OneGrantAllocation("b", MigGrant("GPU-mig-0", "1g.10gb", 0));
  both.containers[0].devices.push_back(MigGrant("GPU-mig-1", "1g.10gb", 0));
  EXPECT_THAT(
      backend_->Commit(MigPod("b", {GpuContainer("c0", 2, 1000)}), both, node),
      StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_TRUE(node.ledger(0) == gpu0);
  EXPECT_OK(node.CheckInvariants());
}

TEST_F(MigBackendTest, ReleaseUndoesCommitExactly) {
  NodeState node = MakeNodeState({H100(0), H100(1)});
  ASSERT_OK(Allocate(MigPod("keep", {GpuContainer("c", 1, 20000)}), node));
  const DeviceLedger gpu0 = node.ledger(0);
  const DeviceLedger gpu1 = node.ledger(1);
  const int64_t used_memory = node.total_used_memory_mib();
  const int64_t used_slots = node.total_used_slots();

  ContainerRequest init = GpuContainer("init", 1, 9216);
  init.is_init = true;
  ASSERT_OK(Allocate(MigPod("go", {init, GpuContainer("app", 2, 30000),
                                   Named("named", "1g.10gb+me")}),
                     node));
  EXPECT_FALSE(node.ledger(0) == gpu0 && node.ledger(1) == gpu1);
  backend_->Release("uid-go", node);
  EXPECT_TRUE(node.ledger(0) == gpu0);
  EXPECT_TRUE(node.ledger(1) == gpu1);
  EXPECT_EQ(node.total_used_memory_mib(), used_memory);
  EXPECT_EQ(node.total_used_slots(), used_slots);
  // Idempotent.
  backend_->Release("uid-go", node);
  backend_->Release("uid-never-there", node);
  EXPECT_TRUE(node.ledger(0) == gpu0);
  EXPECT_TRUE(node.ledger(1) == gpu1);
  EXPECT_OK(node.CheckInvariants());
}

TEST_F(MigBackendTest, ReleasedSlotsAreGivenOutAgain) {
  NodeState node = MakeNodeState({H100(0)});
  ASSERT_OK(Allocate(MigPod("a", {GpuContainer("c", 1, 0)}), node));
  EXPECT_EQ(
      backend_->Filter(MigPod("b", {GpuContainer("c", 1, 0)}), node, options_)
          .code,
      mig::kMigNoSlot);
  backend_->Release("uid-a", node);
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("b", {GpuContainer("c", 1, 0)}), node);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).mig.profile, "7g.80gb");
}

TEST_F(MigBackendTest, FilterNeverChangesTheNode) {
  NodeState node = MakeNodeState({H100(0)});
  ASSERT_OK(Allocate(MigPod("a", {GpuContainer("c", 1, 9216)}), node));
  const DeviceLedger before = node.ledger(0);
  NodeFit fit = backend_->Filter(MigPod("b", {GpuContainer("c", 1, 9216)}),
                                 node, options_);
  EXPECT_TRUE(fit.fits());
  EXPECT_TRUE(node.ledger(0) == before);
}

TEST_F(MigBackendTest, QuietFilterGivesTheSameCodeWithoutText) {
  NodeState node = MakeNodeState({H100(0)});
  PlacementOptions quiet;
  quiet.explain = false;
  NodeFit fit =
      backend_->Filter(MigPod("a", {GpuContainer("c", 1, 90000)}), node, quiet);
  EXPECT_EQ(fit.code, mig::kMigNoProfile);
  EXPECT_THAT(fit.message, IsEmpty());
}

TEST_F(MigBackendTest, GpuInAnotherModeIsNotUsed) {
  Gpu hami = H100(0);
  hami.mode = hamicore::kMode;
  NodeState node = MakeNodeState({hami});
  NodeFit fit = backend_->Filter(MigPod("a", {GpuContainer("c", 1, 9216)}),
                                 node, options_);
  EXPECT_EQ(fit.code, ReasonCode::kModeMismatch);
}

// ---- Edits ----

TEST(MigBackendEditsTest, EmptyUntilTheRuntimeIdsExist) {
  std::unique_ptr<SharingBackend> backend = MigBackend();
  ContainerAllocation container =
      testing::Container(0, false, {MigGrant("GPU-a", "1g.10gb", 6, 1)});
  EXPECT_EQ(backend->Edits(container, EditOptions{}), ContainerEdits{});
  // One of two instances created: still nothing.
  container.devices.push_back(MigGrant("GPU-b", "1g.10gb", 6, 1));
  container.devices[0].mig_uuid = "MIG-1111";
  EXPECT_EQ(backend->Edits(container, EditOptions{}), ContainerEdits{});
  // No GPU at all: nothing either.
  EXPECT_EQ(backend->Edits(testing::Container(1, false, {}), EditOptions{}),
            ContainerEdits{});
}

TEST(MigBackendEditsTest, VisibleDevicesFromMigUuids) {
  std::unique_ptr<SharingBackend> backend = MigBackend();
  ContainerAllocation container = testing::Container(
      0, false,
      {MigGrant("GPU-a", "1g.10gb", 6, 1), MigGrant("GPU-b", "3g.40gb", 4, 4)});
  container.devices[0].mig_uuid = "MIG-1111";
  container.devices[1].mig_uuid = "MIG-2222";
  // A runtime uuid wins over the GPU/GI/CI form.
  container.devices[1].gpu_instance_id = 2;
  container.devices[1].compute_instance_id = 0;
  ContainerEdits edits = backend->Edits(container, EditOptions{});
  EXPECT_THAT(edits.env,
              ElementsAre(Pair("NVIDIA_VISIBLE_DEVICES", "MIG-1111,MIG-2222")));
  EXPECT_THAT(edits.device_ids, ElementsAre("MIG-1111", "MIG-2222"));
  EXPECT_THAT(edits.mounts, IsEmpty());
}

TEST(MigBackendEditsTest, VisibleDevicesFromGpuAndInstanceIds) {
  std::unique_ptr<SharingBackend> backend = MigBackend();
  ContainerAllocation container =
      testing::Container(0, false, {MigGrant("GPU-a", "1g.10gb", 6, 1)});
  container.devices[0].gpu_instance_id = 13;
  container.devices[0].compute_instance_id = 0;
  ContainerEdits edits = backend->Edits(container, EditOptions{});
  EXPECT_THAT(edits.env,
              ElementsAre(Pair("NVIDIA_VISIBLE_DEVICES", "MIG-GPU-a/13/0")));
  EXPECT_THAT(edits.device_ids, ElementsAre("MIG-GPU-a/13/0"));

  // A GPU instance without its compute instance is not enough.
  container.devices[0].compute_instance_id = -1;
  EXPECT_EQ(backend->Edits(container, EditOptions{}), ContainerEdits{});
}

TEST(MigBackendRegistryTest, RegistersUnderItsName) {
  BackendRegistry registry;
  ASSERT_OK(mig::RegisterMigBackend(registry));
  absl::StatusOr<std::unique_ptr<SharingBackend>> backend =
      registry.Create("mig", Config{});
  ASSERT_OK(backend);
  EXPECT_EQ((*backend)->name(), "mig");
  EXPECT_EQ((*backend)->mode(), mig::kMode);
}

}  // namespace
}  // namespace deviceshare
