// The mig backend on a GPU that registered its MIG profiles
// (Gpu::mig_profiles, HAMi's `migProfiles`): those profiles, at those
// placements, with that memory and core share, are the GPU's catalogue, as
// in HAMi's scheduler (nvidia/device.go selectMigCandidate); a GPU without
// them keeps the built-in table.
#include <string>
#include <vector>

#include "deviceshare/codec/hami_codec.h"
#include "deviceshare/mig/mig_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/mig_builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::GpuContainer;
using ::deviceshare::testing::MakeNodeState;
using ::deviceshare::testing::MigBackend;
using ::deviceshare::testing::MigGpu;
using ::deviceshare::testing::MigPod;
using ::deviceshare::testing::OnlyGrant;
using ::deviceshare::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kA100_40[] = "NVIDIA-A100-SXM4-40GB";

std::vector<MigPlacement> Singles(std::vector<int32_t> starts) {
  std::vector<MigPlacement> out;
  for (int32_t start : starts) out.push_back({start, 1});
  return out;
}

// An A100-40GB whose registration lists 1g.5gb at `starts` only.
Gpu A100With1g(int index, std::vector<int32_t> starts) {
  Gpu gpu = MigGpu(index, kA100_40, 40960);
  gpu.mig_profiles = {{"1g.5gb", 5120, 14, 1, Singles(std::move(starts))}};
  return gpu;
}

DeviceGrant Restored(const std::string& uuid, int32_t start) {
  DeviceGrant grant;
  grant.uuid = uuid;
  grant.mode = mig::kMode;
  grant.memory_mib = 5120;
  grant.cores = 14;
  grant.mig = MigSlot{"1g.5gb", start, 1, "", -1};
  return grant;
}

PodAllocation OneGrant(const std::string& pod, DeviceGrant grant) {
  PodAllocation allocation;
  allocation.pod_uid = "uid-" + pod;
  allocation.pod_key = "default/" + pod;
  allocation.node_name = "n1";
  allocation.containers.push_back(
      testing::Container(0, false, {std::move(grant)}));
  return allocation;
}

class MigRegisteredTest : public testing::MigBackendFixture {};

// D4: only placement 6 registered.
TEST_F(MigRegisteredTest, OnlyTheRegisteredPlacementIsGivenOut) {
  NodeState node = MakeNodeState({A100With1g(0, {6})});
  absl::StatusOr<PodAllocation> first =
      Allocate(MigPod("a", {GpuContainer("c", 1, 4000)}), node);
  ASSERT_OK(first);
  EXPECT_EQ(OnlyGrant(*first).mig, (MigSlot{"1g.5gb", 6, 1, "", -1}));
  NodeFit fit = backend_->Filter(MigPod("b", {GpuContainer("c", 1, 4000)}),
                                 node, options_);
  EXPECT_EQ(fit.code, mig::kMigNoSlot);
  EXPECT_THAT(fit.message, HasSubstr("slices in use 6"));
}

// D9: the grant (and so vgpu-devices-allocated) carries the registered
// memoryMB and core, not the built-in table's 4864 MiB.
TEST_F(MigRegisteredTest, GrantChargesTheRegisteredMemoryAndCore) {
  Gpu gpu = A100With1g(0, {0, 1, 2, 3, 4, 5, 6});
  gpu.mig_profiles[0].cores = 15;
  NodeState node = MakeNodeState({gpu});
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("a", {GpuContainer("c", 1, 4000)}), node);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).memory_mib, 5120);
  EXPECT_EQ(OnlyGrant(*placed).cores, 15);
  EXPECT_EQ(OnlyGrant(*placed).mig.start, 6);
  EXPECT_EQ(node.ledger(0).used_memory_mib(), 5120);
  EXPECT_EQ(EncodeHamiAllocation(*placed), "GPU-mig-0,NVIDIA,5120,15:;");
}

// D5: a record restored at the one registered placement leaves nothing.
TEST_F(MigRegisteredTest, RestoredReservationHoldsTheOnlyPlacement) {
  NodeState node = MakeNodeState({A100With1g(0, {6})});
  const PodRequest held = MigPod("held", {GpuContainer("c", 1, 4000)});
  ASSERT_OK(
      backend_->Commit(held, OneGrant("held", Restored("GPU-mig-0", 6)), node));
  EXPECT_EQ(node.ledger(0).mig_mask(), 1u << 6);
  EXPECT_EQ(
      backend_
          ->Filter(MigPod("b", {GpuContainer("c", 1, 4000)}), node, options_)
          .code,
      mig::kMigNoSlot);
  // A reservation at a placement the node no longer registers still holds
  // its slice, charged as recorded (HAMi restores by placement alone).
  ASSERT_OK(backend_->Commit(MigPod("x", {GpuContainer("c", 1, 4000)}),
                             OneGrant("x", Restored("GPU-mig-0", 5)), node));
  EXPECT_EQ(node.ledger(0).mig_mask(), 0x3u << 5);
  EXPECT_EQ(node.ledger(0).used_memory_mib(), 2 * 5120);
  EXPECT_OK(node.CheckInvariants());
}

// B13: a percentage is of the registered memory, 50 % of 8192 MiB does not
// fit a 1024 MiB profile; 10 % does. The type has no built-in table.
TEST_F(MigRegisteredTest, MemoryPercentIsOfTheRegisteredMemory) {
  Gpu gpu = MigGpu(0, "NVIDIA", 8192);
  gpu.mig_profiles = {{"1g.5gb", 1024, 14, 1, Singles({0, 1, 2, 3, 4, 5, 6})}};
  NodeState node = MakeNodeState({gpu});
  ContainerRequest half = GpuContainer("c", 1, 0);
  half.memory_percent = 50;
  NodeFit fit = backend_->Filter(MigPod("a", {half}), node, options_);
  EXPECT_EQ(fit.code, mig::kMigNoProfile);
  EXPECT_THAT(fit.message, HasSubstr("memory=4096MiB"));
  ContainerRequest tenth = GpuContainer("c", 1, 0);
  tenth.memory_percent = 10;
  absl::StatusOr<PodAllocation> placed = Allocate(MigPod("b", {tenth}), node);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).memory_mib, 1024);
}

TEST_F(MigRegisteredTest, SmallestRegisteredProfileThatHoldsTheMemoryWins) {
  Gpu gpu = MigGpu(0, kA100_40, 40960);
  gpu.mig_profiles = {
      {"1g.5gb", 4864, 15, 1, Singles({6})},
      {"2g.10gb", 9856, 29, 2, {{0, 2}, {2, 2}, {4, 2}}},
  };
  NodeState node = MakeNodeState({gpu});
  absl::StatusOr<PodAllocation> placed =
      Allocate(MigPod("a", {GpuContainer("c", 1, 6000)}), node);
  ASSERT_OK(placed);
  EXPECT_EQ(OnlyGrant(*placed).mig.profile, "2g.10gb");
  EXPECT_EQ(OnlyGrant(*placed).mig.size, 2);
  EXPECT_EQ(OnlyGrant(*placed).cores, 29);
}

TEST_F(MigRegisteredTest, EachGpuKeepsItsOwnRegistration) {
  // Same type, different registrations: one placement vs the built-in
  // table (no registration).
  NodeState node = MakeNodeState(
      {A100With1g(0, {6}), MigGpu(1, "NVIDIA A100-SXM4-40GB", 40960)});
  int on_first = 0;
  for (int i = 0; i < 8; ++i) {
    absl::StatusOr<PodAllocation> placed = Allocate(
        MigPod("p" + std::to_string(i), {GpuContainer("c", 1, 4000)}), node);
    ASSERT_OK(placed) << i;
    on_first += OnlyGrant(*placed).uuid == "GPU-mig-0";
  }
  EXPECT_EQ(on_first, 1);
  EXPECT_EQ(node.ledger(1).mig_instances(), 7);
}

TEST_F(MigRegisteredTest, ProfilesThatMakeNoModelLeaveTheGpuUnused) {
  Gpu gpu = MigGpu(0, kA100_40, 40960);
  gpu.mig_profiles = {{"1g.5gb", 5120, 14, 1, {}}};
  NodeState node = MakeNodeState({gpu});
  NodeFit fit = backend_->Filter(MigPod("a", {GpuContainer("c", 1, 1000)}),
                                 node, options_);
  EXPECT_EQ(fit.code, mig::kMigUnknownModel);
  EXPECT_THAT(fit.message, HasSubstr("registered MIG profiles has placements"));
  // A reservation read back still holds its placement; one without a
  // placement cannot be resolved and holds the whole GPU (fail closed).
  ASSERT_OK(backend_->Commit(MigPod("x", {GpuContainer("c", 1, 4000)}),
                             OneGrant("x", Restored("GPU-mig-0", 6)), node));
  EXPECT_EQ(node.ledger(0).mig_mask(), 1u << 6);
  DeviceGrant unplaced = Restored("GPU-mig-0", 6);
  unplaced.mig.start = -1;
  unplaced.mig.size = 0;
  ASSERT_OK(backend_->Commit(MigPod("y", {GpuContainer("c", 1, 4000)}),
                             OneGrant("y", unplaced), node));
  EXPECT_EQ(node.ledger(0).gpu_holders(), 1);
}

TEST_F(MigRegisteredTest, DraDevicesAreTheRegisteredPlacements) {
  absl::StatusOr<dra::GpuDevices> devices =
      backend_->DraDevices(A100With1g(0, {5, 6}), dra::DeviceNaming{"gpu-0"});
  ASSERT_OK(devices);
  ASSERT_EQ(devices->devices.size(), 2u);
  EXPECT_EQ(devices->devices[0].name, "gpu-0-mig-1g5gb-5");
  EXPECT_EQ(devices->devices[1].name, "gpu-0-mig-1g5gb-6");
}

}  // namespace
}  // namespace deviceshare
