// The mig backend in configMap mode (scheduler.migSearch: configmap):
// Volcano/HAMi knownMigGeometries groups, and the two Volcano bugs
// (docs/reference/upstream-volcano.md §11) it must not repeat.
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/mig/geometry_layout.h"
#include "deviceshare/mig/mig_backend.h"
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
using ::deviceshare::testing::MigPod;
using ::deviceshare::testing::OnlyGrant;
using ::deviceshare::testing::Slot;
using ::deviceshare::testing::StatusIs;
using ::deviceshare::testing::VolcanoA100Groups;
using ::deviceshare::testing::WithSevenOneG10gb;
using ::testing::HasSubstr;

constexpr char kA100_80[] = "NVIDIA A100-SXM4-80GB";

Config ConfigMapConfig(
    std::vector<mig::MigGeometry> groups = VolcanoA100Groups()) {
  mig::MigConfig mig;
  mig.search = mig::MigSearch::kConfigMap;
  mig.known_geometries = {
      mig::KnownMigGeometries{{"A100-SXM4-80GB"}, std::move(groups)}};
  return mig::WithMigConfig(Config{}, mig);
}

Gpu A100(int index) {
  return testing::MigGpu(index, kA100_80, 81920, "GPU-a100-");
}

// The laid-out slot of `group` (Volcano's name) at `position` on A100-80GB.
mig::GeometrySlot Laid(const std::string& group, int32_t position) {
  const mig::MigModel& model =
      *mig::MigCatalog::Builtin().FindModel("A100-80GB");
  for (const mig::MigGeometry& geometry : VolcanoA100Groups()) {
    if (geometry.group != group) continue;
    absl::StatusOr<std::vector<mig::GeometrySlot>> slots =
        mig::LayGeometry(model, geometry);
    EXPECT_OK(slots);
    if (slots.ok() && position >= 0 &&
        static_cast<size_t>(position) < slots->size()) {
      return (*slots)[position];
    }
  }
  ADD_FAILURE() << "no " << group << "-" << position;
  return {};
}

std::string ProfileName(int32_t index) {
  return mig::MigCatalog::Builtin()
      .FindModel("A100-80GB")
      ->profiles.at(index)
      .name;
}

// A grant must say where it sits as the geometry lays it out.
void ExpectConsistentWithGeometry(const DeviceGrant& grant) {
  ASSERT_FALSE(grant.mig.group.empty());
  ASSERT_GE(grant.mig.position, 0);
  const mig::GeometrySlot slot = Laid(grant.mig.group, grant.mig.position);
  EXPECT_EQ(grant.mig.profile, ProfileName(slot.profile))
      << grant.mig.group << "-" << grant.mig.position;
  EXPECT_EQ(grant.mig.start, slot.start)
      << grant.mig.group << "-" << grant.mig.position;
  EXPECT_EQ(grant.memory_mib, slot.memory_mib);
}

class MigConfigMapTest : public testing::MigBackendFixture {
 protected:
  void UseConfig(const Config& config) {
    backend_ = testing::MigBackend(config);
    ASSERT_NE(backend_, nullptr);
  }
  void SetUp() override { UseConfig(ConfigMapConfig()); }

  ReasonCode FilterCode(const PodRequest& pod, const NodeState& node) {
    return backend_->Filter(pod, node, options_).code;
  }
};

TEST_F(MigConfigMapTest, FirstPodOnAnIdleGpuTakesTheFirstGroupInOrder) {
  NodeState node = MakeNodeState({A100(0)});
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("a", {GpuContainer("c", 1, 9000)}), node);
  ASSERT_OK(placed);
  const DeviceGrant& grant = OnlyGrant(*placed);
  EXPECT_EQ(grant.mig.group, "group1");
  EXPECT_EQ(grant.mig.position, 0);
  EXPECT_EQ(grant.mig.profile, "1g.10gb");
  EXPECT_EQ(grant.mig.start, 0);
  EXPECT_EQ(grant.mig.size, 1);
  EXPECT_EQ(grant.memory_mib, 9728);  // the config's memory
  EXPECT_EQ(grant.cores, 14);
  EXPECT_EQ(grant.mig_action, MigAction::kCreate);
}

TEST_F(MigConfigMapTest, ThirtyGibPodOnAnIdleGpuTakesGroup3) {
  NodeState node = MakeNodeState({A100(0)});
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("a", {GpuContainer("c", 1, 30000)}), node);
  ASSERT_OK(placed);
  const DeviceGrant& grant = OnlyGrant(*placed);
  EXPECT_EQ(grant.mig.group, "group3");
  EXPECT_EQ(grant.mig.position, 0);
  EXPECT_EQ(grant.mig.profile, "3g.40gb");
  EXPECT_EQ(grant.memory_mib, 40192);
  ExpectConsistentWithGeometry(grant);
}

TEST_F(MigConfigMapTest, SizesPickTheFirstGroupThatHoldsThem) {
  NodeState node = MakeNodeState({A100(0)});
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("a", {GpuContainer("c", 1, 19000)}), node);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).mig.group, "group2");
  EXPECT_EQ(OnlyGrant(*placed).mig.profile, "2g.20gb");
  ExpectConsistentWithGeometry(OnlyGrant(*placed));

  NodeState whole = MakeNodeState({A100(0)});
  placed = Allocate(MigPod("b", {GpuContainer("c", 1, 0)}), whole);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).mig.group, "group4");
  EXPECT_EQ(OnlyGrant(*placed).mig.profile, "7g.80gb");

  NodeState too_big = MakeNodeState({A100(0)});
  EXPECT_FALSE(backend_
                   ->Filter(MigPod("c", {GpuContainer("c", 1, 81000)}), too_big,
                            options_)
                   .fits());
}

TEST_F(MigConfigMapTest, ExplicitProfilePicksTheGroupThatHasIt) {
  NodeState node = MakeNodeState({A100(0)});
  ContainerRequest c = GpuContainer("c", 1, 0);
  c.mig_profile = "2g.20gb";
  absl::StatusOr<PodAllocation> placed = Allocate(MigPod("a", {c}), node);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).mig.group, "group2");
  EXPECT_EQ(OnlyGrant(*placed).mig.profile, "2g.20gb");

  c.mig_profile = "4g.40gb";  // in no group
  EXPECT_FALSE(
      backend_->Filter(MigPod("b", {c}), MakeNodeState({A100(0)}), options_)
          .fits());
}

TEST_F(MigConfigMapTest, OnceAGroupIsInUseOnlyItIsUsed) {
  NodeState node = MakeNodeState({A100(0)});
  ASSERT_OK(Allocate(MigPod("small", {GpuContainer("c", 1, 9000)}), node));
  NodeFit fit = backend_->Filter(MigPod("big", {GpuContainer("c", 1, 30000)}),
                                 node, options_);
  EXPECT_EQ(fit.code, mig::kMigNoSlot);
  EXPECT_THAT(fit.message, HasSubstr("knownMigGeometries"));
  // Further small pods stay in group1.
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("small2", {GpuContainer("c", 1, 9000)}), node);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).mig.group, "group1");

  // When every pod has left, another group may be chosen.
  backend_->Release("uid-small", node);
  EXPECT_EQ(FilterCode(MigPod("big", {GpuContainer("c", 1, 30000)}), node),
            mig::kMigNoSlot);
  backend_->Release("uid-small2", node);
  placed = Allocate(MigPod("big", {GpuContainer("c", 1, 30000)}), node);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).mig.group, "group3");
}

// 1g@6 is group1's position 6 and also group2's position 3: a pod that
// group1 cannot hold must not switch the busy GPU to group2 (Volcano's node
// plugin would re-partition it under the running pod).
TEST_F(MigConfigMapTest, GroupInUseIsKeptEvenWhenAnotherContainsItsInstances) {
  NodeState node = MakeNodeState({A100(0)});
  DeviceGrant grant;
  grant.uuid = "GPU-a100-0";
  grant.mode = mig::kMode;
  grant.memory_mib = 9728;
  grant.cores = 14;
  grant.mig.group = "group1";
  grant.mig.position = 6;
  PodAllocation allocation;
  allocation.pod_uid = "uid-a";
  allocation.pod_key = "default/a";
  allocation.node_name = "n1";
  allocation.containers.push_back(testing::Container(0, false, {grant}));
  ASSERT_OK(backend_->Commit(MigPod("a", {GpuContainer("c0", 1, 9000)}),
                             allocation, node));
  EXPECT_EQ(FilterCode(MigPod("b", {GpuContainer("c", 1, 19000)}), node),
            mig::kMigNoSlot);
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("c", {GpuContainer("c", 1, 9000)}), node);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).mig.group, "group1");
}

// Volcano's pickFromGroup only considers instance types already in use.
TEST_F(MigConfigMapTest, FreeInstanceOfATypeNotYetUsedInTheGroupIsTaken) {
  NodeState node = MakeNodeState({A100(0)});
  absl::StatusOr<PodAllocation> big =
      Allocate(MigPod("big", {GpuContainer("c", 1, 19000)}), node);
  ASSERT_OK(big);
  EXPECT_EQ(OnlyGrant(*big).mig.group, "group2");
  EXPECT_EQ(OnlyGrant(*big).mig.position, 0);

  absl::StatusOr<PodAllocation> small =
      Allocate(MigPod("small", {GpuContainer("c", 1, 9000)}), node);
  ASSERT_OK(small);
  const DeviceGrant& grant = OnlyGrant(*small);
  EXPECT_EQ(grant.mig.group, "group2");
  EXPECT_EQ(grant.mig.position, 3);
  EXPECT_EQ(grant.mig.profile, "1g.10gb");
  EXPECT_EQ(grant.mig.start, 6);
  ExpectConsistentWithGeometry(grant);
}

// Volcano's TryAddPod/Allocate never record the usage they add, so two pods
// of one session may get the same group-position.
TEST_F(MigConfigMapTest, PodsPlacedOneAfterAnotherNeverShareAPosition) {
  NodeState node = MakeNodeState({A100(0)});
  std::set<int32_t> positions;
  for (int i = 0; i < 7; ++i) {
    absl::StatusOr<PodAllocation> placed = Allocate(
        MigPod(absl::StrCat("p", i), {GpuContainer("c", 1, 9000)}), node);
    ASSERT_OK(placed) << i;
    const DeviceGrant& grant = OnlyGrant(*placed);
    EXPECT_EQ(grant.mig.group, "group1");
    EXPECT_TRUE(positions.insert(grant.mig.position).second)
        << "position " << grant.mig.position << " given twice";
    ExpectConsistentWithGeometry(grant);
  }
  EXPECT_EQ(positions, (std::set<int32_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(FilterCode(MigPod("p7", {GpuContainer("c", 1, 9000)}), node),
            mig::kMigNoSlot);
}

TEST_F(MigConfigMapTest, MixedGroupFillsEveryPositionOnce) {
  NodeState node = MakeNodeState({A100(0)});
  std::set<int32_t> positions;
  const int64_t sizes[] = {19000, 9000, 19000, 19000};
  for (int i = 0; i < 4; ++i) {
    absl::StatusOr<PodAllocation> placed = Allocate(
        MigPod(absl::StrCat("p", i), {GpuContainer("c", 1, sizes[i])}), node);
    ASSERT_OK(placed) << i;
    EXPECT_EQ(OnlyGrant(*placed).mig.group, "group2");
    EXPECT_TRUE(positions.insert(OnlyGrant(*placed).mig.position).second);
    ExpectConsistentWithGeometry(OnlyGrant(*placed));
  }
  EXPECT_EQ(positions, (std::set<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(FilterCode(MigPod("p4", {GpuContainer("c", 1, 9000)}), node),
            mig::kMigNoSlot);
}

TEST_F(MigConfigMapTest, ContainersOfOnePodGetDistinctPositions) {
  NodeState node = MakeNodeState({A100(0)});
  absl::StatusOr<PodAllocation> placed = Allocate(
      MigPod("a", {GpuContainer("x", 1, 9000), GpuContainer("y", 1, 9000),
                   GpuContainer("z", 1, 9000)}),
      node);
  ASSERT_OK(placed);
  std::set<int32_t> positions;
  for (const ContainerAllocation& c : placed->containers) {
    ASSERT_EQ(c.devices.size(), 1u);
    EXPECT_EQ(c.devices[0].mig.group, "group1");
    positions.insert(c.devices[0].mig.position);
    ExpectConsistentWithGeometry(c.devices[0]);
  }
  EXPECT_EQ(positions.size(), 3u);
}

TEST_F(MigConfigMapTest, VolcanoGrantWithOnlyGroupAndPositionCommits) {
  NodeState node = MakeNodeState({A100(0)});
  DeviceGrant grant;
  grant.uuid = "GPU-a100-0";
  grant.mode = mig::kMode;
  grant.memory_mib = 9728;
  grant.cores = 14;
  grant.mig.group = "group2";
  grant.mig.position = 3;
  ASSERT_EQ(grant.mig.start, -1);
  ASSERT_TRUE(grant.mig.profile.empty());
  PodAllocation allocation;
  allocation.pod_uid = "uid-a";
  allocation.pod_key = "default/a";
  allocation.node_name = "n1";
  allocation.containers.push_back(testing::Container(0, false, {grant}));
  ASSERT_OK(backend_->Commit(MigPod("a", {GpuContainer("c0", 1, 9000)}),
                             allocation, node));
  absl::Span<const ContainerShare> shares = node.ledger(0).SharesOf("uid-a");
  ASSERT_EQ(shares.size(), 1u);
  EXPECT_EQ(shares[0].mig.profile, "1g.10gb");
  EXPECT_EQ(shares[0].mig.start, 6);
  EXPECT_EQ(shares[0].mig.size, 1);
  EXPECT_EQ(shares[0].mig.group, "group2");
  EXPECT_EQ(shares[0].mig.position, 3);
  EXPECT_EQ(node.ledger(0).mig_mask(), 1u << 6);

  // The GPU is now on group2: a 19000 MiB pod gets its 2g.
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("b", {GpuContainer("c", 1, 19000)}), node);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).mig.group, "group2");
  EXPECT_EQ(OnlyGrant(*placed).mig.profile, "2g.20gb");

  // The same position twice is refused.
  allocation.pod_uid = "uid-c";
  allocation.pod_key = "default/c";
  EXPECT_THAT(backend_->Commit(MigPod("c", {GpuContainer("c0", 1, 9000)}),
                               allocation, node),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

// Volcano's mig.go findMatch/pickFromGroup compare the instance memory
// alone (upstream-volcano.md §11 "Cores ... ignored"; upstream-cases.md row
// G6), as HAMi's knownMigGeometries search did (device.go before 2.8): 10
// MiB with 50% of the cores takes group1's first 1g.10gb. The grant charges
// the instance and remembers the ask for Volcano's record (row G1).
TEST_F(MigConfigMapTest, CoresDoNotChooseTheInstance) {
  NodeState node = MakeNodeState({A100(0)});
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("a", {GpuContainer("c", 1, 10, 50)}), node);
  ASSERT_OK(placed);
  const DeviceGrant& grant = OnlyGrant(*placed);
  EXPECT_EQ(grant.mig.group, "group1");
  EXPECT_EQ(grant.mig.position, 0);
  EXPECT_EQ(grant.mig.profile, "1g.10gb");
  EXPECT_EQ(grant.memory_mib, 9728);
  EXPECT_EQ(grant.cores, 14);
  EXPECT_EQ(grant.mig.asked_memory_mib, 10);
  EXPECT_EQ(grant.mig.asked_cores, 50);
  // A container that asks no memory still wants the whole card.
  NodeState idle = MakeNodeState({A100(0)});
  placed = Allocate(MigPod("b", {GpuContainer("c", 1, 0)}), idle);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).mig.group, "group4");
}

// Volcano's record carries the request's figures (row G1); read back
// (addMigUsed, row G8) it holds the whole instance it names: the ledger is
// charged the geometry's 19968 MiB and the 2g's 28%, never the record's
// 10 MiB.
TEST_F(MigConfigMapTest, RecordWithTheRequestFiguresIsChargedTheInstance) {
  NodeState node = MakeNodeState({A100(0)});
  DeviceGrant grant;
  grant.uuid = "GPU-a100-0";
  grant.mode = mig::kMode;
  grant.memory_mib = 10;
  grant.cores = 0;
  grant.mig.group = "group2";
  grant.mig.position = 0;
  PodAllocation allocation;
  allocation.pod_uid = "uid-a";
  allocation.pod_key = "default/a";
  allocation.node_name = "n1";
  allocation.containers.push_back(testing::Container(0, false, {grant}));
  ASSERT_OK(backend_->Commit(MigPod("a", {GpuContainer("c0", 1, 10)}),
                             allocation, node));
  absl::Span<const ContainerShare> shares = node.ledger(0).SharesOf("uid-a");
  ASSERT_EQ(shares.size(), 1u);
  EXPECT_EQ(shares[0].memory_mib, 19968);
  EXPECT_EQ(shares[0].cores, 28);
  EXPECT_EQ(shares[0].mig.profile, "2g.20gb");
  EXPECT_EQ(node.ledger(0).used_memory_mib(), 19968);
  EXPECT_OK(node.CheckInvariants());
}

// A Volcano record naming a group or position the configuration lacks is
// charged and holds the whole GPU (its instance is somewhere on it).
TEST_F(MigConfigMapTest, VolcanoGrantWithUnknownGroupOrPositionHoldsTheGpu) {
  for (const auto& [group, position] :
       {std::pair<std::string, int>{"group2", 4}, {"group9", 0}}) {
    SCOPED_TRACE(absl::StrCat(group, "-", position));
    NodeState node = MakeNodeState({A100(0)});
    DeviceGrant grant;
    grant.uuid = "GPU-a100-0";
    grant.mode = mig::kMode;
    grant.mig.group = group;
    grant.mig.position = position;
    PodAllocation allocation;
    allocation.pod_uid = "uid-a";
    allocation.pod_key = "default/a";
    allocation.containers.push_back(testing::Container(0, false, {grant}));
    const PodRequest pod = MigPod("a", {GpuContainer("c0", 1, 9000)});
    ASSERT_OK(backend_->Commit(pod, allocation, node));
    EXPECT_EQ(node.ledger(0).gpu_holders(), 1);
    EXPECT_NE(FilterCode(MigPod("b", {GpuContainer("c0", 1, 9000)}), node),
              ReasonCode::kFits);
  }
}

// Volcano needs only the configMap for a MIG GPU (its MIG utils match the
// entry by substring of the type): an A800, which the built-in catalog
// lacks, is served from the entry naming it, and a record Volcano wrote
// for it is read back and charged.
TEST_F(MigConfigMapTest, AModelTheCatalogLacksIsServedFromItsEntry) {
  mig::MigConfig mig;
  mig.search = mig::MigSearch::kConfigMap;
  mig.known_geometries = {
      mig::KnownMigGeometries{{"A800-SXM4-80GB"}, VolcanoA100Groups()}};
  UseConfig(mig::WithMigConfig(Config{}, mig));
  const Gpu a800 =
      testing::MigGpu(0, "NVIDIA A800-SXM4-80GB", 81920, "GPU-a800-");
  NodeState node = MakeNodeState({a800});
  absl::StatusOr<PodAllocation> first =
      Allocate(MigPod("a", {GpuContainer("c", 1, 9000)}), node);
  ASSERT_OK(first);
  EXPECT_EQ(OnlyGrant(*first).mig.group, "group1");
  EXPECT_EQ(OnlyGrant(*first).mig.position, 0);
  EXPECT_EQ(OnlyGrant(*first).mig.profile, "1g.10gb");
  // A record of the next position, as Volcano writes it, is charged.
  DeviceGrant grant;
  grant.uuid = a800.uuid;
  grant.mode = mig::kMode;
  grant.mig.group = "group1";
  grant.mig.position = 1;
  PodAllocation recorded;
  recorded.pod_uid = "uid-r";
  recorded.pod_key = "default/r";
  recorded.containers.push_back(testing::Container(0, false, {grant}));
  ASSERT_OK(backend_->Commit(MigPod("r", {GpuContainer("c", 1, 9000)}),
                             recorded, node));
  EXPECT_EQ(node.ledger(0).gpu_holders(), 0);
  absl::StatusOr<PodAllocation> third =
      Allocate(MigPod("c", {GpuContainer("c", 1, 9000)}), node);
  ASSERT_OK(third);
  EXPECT_EQ(OnlyGrant(*third).mig.position, 2);
  // Another model no entry names still has no table.
  NodeState t4 =
      MakeNodeState({testing::MigGpu(0, "Tesla T4", 15360, "GPU-t4-")});
  EXPECT_EQ(FilterCode(MigPod("d", {GpuContainer("c", 1, 9000)}), t4),
            mig::kMigUnknownModel);
}

TEST_F(MigConfigMapTest, HamiUnnamedGroupsAreNamedByIndex) {
  std::vector<mig::MigGeometry> groups = VolcanoA100Groups();
  for (mig::MigGeometry& g : groups) g.group.clear();
  UseConfig(ConfigMapConfig(groups));
  NodeState node = MakeNodeState({A100(0)});
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("a", {GpuContainer("c", 1, 30000)}), node);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).mig.group, "2");
  EXPECT_EQ(OnlyGrant(*placed).mig.profile, "3g.40gb");
}

TEST_F(MigConfigMapTest, ModelWithoutGeometriesHasNoProfile) {
  Gpu h100 = A100(0);
  h100.model = "NVIDIA H100 80GB HBM3";
  NodeState node = MakeNodeState({h100});
  NodeFit fit = backend_->Filter(MigPod("a", {GpuContainer("c", 1, 9000)}),
                                 node, options_);
  EXPECT_EQ(fit.code, mig::kMigNoProfile);
  EXPECT_THAT(fit.message, HasSubstr("no knownMigGeometries entry"));
}

TEST_F(MigConfigMapTest, GeometryThatCannotBeLaidOutHasNoProfile) {
  UseConfig(
      ConfigMapConfig({mig::MigGeometry{"bad", {{"1g.10gb", 9728, 0, 8}}}}));
  NodeState node = MakeNodeState({A100(0)});
  EXPECT_EQ(FilterCode(MigPod("a", {GpuContainer("c", 1, 9000)}), node),
            mig::kMigNoProfile);
}

TEST_F(MigConfigMapTest, HardwareInstancesOfTheGroupAreReused) {
  Gpu gpu = WithSevenOneG10gb(A100(0));
  NodeState node = MakeNodeState({gpu});
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("a", {GpuContainer("c", 1, 9000)}), node);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).mig_action, MigAction::kReuse);
  EXPECT_EQ(OnlyGrant(*placed).mig.group, "group1");
}

TEST_F(MigConfigMapTest, IdleGpuIsRepartitionedBusyOneIsNot) {
  Gpu gpu = WithSevenOneG10gb(A100(0));
  NodeState idle = MakeNodeState({gpu});
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("a", {GpuContainer("c", 1, 30000)}), idle);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).mig_action, MigAction::kRepartition);
  EXPECT_EQ(OnlyGrant(*placed).mig.group, "group3");

  NodeState busy = MakeNodeState({gpu});
  ASSERT_OK(Allocate(MigPod("b", {GpuContainer("c", 1, 9000)}), busy));
  EXPECT_EQ(FilterCode(MigPod("c", {GpuContainer("c", 1, 30000)}), busy),
            mig::kMigNoSlot);
}

TEST_F(MigConfigMapTest, ReleaseUndoesCommitExactly) {
  NodeState node = MakeNodeState({A100(0)});
  ASSERT_OK(Allocate(MigPod("keep", {GpuContainer("c", 1, 19000)}), node));
  const DeviceLedger before = node.ledger(0);
  ASSERT_OK(Allocate(
      MigPod("go", {GpuContainer("c", 1, 9000), GpuContainer("d", 1, 19000)}),
      node));
  EXPECT_FALSE(node.ledger(0) == before);
  backend_->Release("uid-go", node);
  EXPECT_TRUE(node.ledger(0) == before);
}

}  // namespace
}  // namespace deviceshare
