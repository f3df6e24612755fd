// The mps backend: client limits, mode separation from hami-core, and the
// environment and mounts a client container gets.
#include "deviceshare/mps/mps_backend.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/hamicore/hamicore_backend.h"
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
using ::deviceshare::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

Gpu ModeGpu(int index, SharingMode mode, int split = 10) {
  Gpu gpu = testing::MakeGpu("n1", index, 81920, split);
  gpu.mode = mode;
  gpu.mps_capable = true;
  return gpu;
}

std::unique_ptr<SharingBackend> Mps(const DeviceConfig& config = {}) {
  absl::StatusOr<std::unique_ptr<SharingBackend>> backend =
      mps::NewMpsBackend(config);
  EXPECT_OK(backend);
  return backend.ok() ? *std::move(backend) : nullptr;
}

std::unique_ptr<SharingBackend> HamiCore() {
  absl::StatusOr<std::unique_ptr<SharingBackend>> backend =
      hamicore::NewHamiCoreBackend(DeviceConfig{});
  EXPECT_OK(backend);
  return backend.ok() ? *std::move(backend) : nullptr;
}

DeviceGrant MpsGrant(std::string uuid, int64_t memory_mib, int32_t cores) {
  DeviceGrant grant = testing::Grant(std::move(uuid), memory_mib, cores);
  grant.mode = mps::kMode;
  return grant;
}

TEST(MpsBackendTest, NameAndMode) {
  std::unique_ptr<SharingBackend> backend = Mps();
  EXPECT_EQ(backend->name(), "mps");
  EXPECT_EQ(backend->mode(), mps::kMode);
}

TEST(MpsBackendTest, EditsSetLimitsDirectoriesMountsAndDevices) {
  std::unique_ptr<SharingBackend> backend = Mps();
  ContainerAllocation container = testing::Container(
      0, false, {MpsGrant("GPU-a", 4096, 30), MpsGrant("GPU-b", 8192, 30)});
  EditOptions options;
  options.mps_root = "/run/mps";
  ContainerEdits edits = backend->Edits(container, options);
  EXPECT_THAT(
      edits.env,
      ElementsAre(Pair("NVIDIA_VISIBLE_DEVICES", "GPU-a,GPU-b"),
                  Pair("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "30"),
                  Pair("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "0=4096M,1=8192M"),
                  Pair("CUDA_MPS_PIPE_DIRECTORY", "/tmp/nvidia-mps"),
                  Pair("CUDA_MPS_LOG_DIRECTORY", "/tmp/nvidia-log")));
  EXPECT_THAT(edits.mounts,
              ElementsAre(Mount{"/run/mps/pipe", "/tmp/nvidia-mps", false},
                          Mount{"/run/mps/log", "/tmp/nvidia-log", false},
                          Mount{"/run/mps/shm", "/dev/shm", false}));
  EXPECT_THAT(edits.device_ids, ElementsAre("GPU-a", "GPU-b"));
}

TEST(MpsBackendTest, EditsUseTheDefaultMpsRoot) {
  std::unique_ptr<SharingBackend> backend = Mps();
  ContainerEdits edits = backend->Edits(
      testing::Container(0, false, {MpsGrant("GPU-a", 1024, 10)}),
      EditOptions{});
  ASSERT_EQ(edits.mounts.size(), 3u);
  EXPECT_EQ(edits.mounts[0].host_path, "/run/deviceshare/mps/pipe");
  EXPECT_EQ(edits.mounts[2].host_path, "/run/deviceshare/mps/shm");
}

TEST(MpsBackendTest, ZeroCoresSetsNoActiveThreadPercentage) {
  std::unique_ptr<SharingBackend> backend = Mps();
  ContainerEdits edits =
      backend->Edits(testing::Container(0, false, {MpsGrant("GPU-a", 2048, 0)}),
                     EditOptions{});
  EXPECT_THAT(edits.env,
              ElementsAre(Pair("NVIDIA_VISIBLE_DEVICES", "GPU-a"),
                          Pair("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "0=2048M"),
                          Pair("CUDA_MPS_PIPE_DIRECTORY", "/tmp/nvidia-mps"),
                          Pair("CUDA_MPS_LOG_DIRECTORY", "/tmp/nvidia-log")));
}

TEST(MpsBackendTest, ExclusiveClientGetsAllThreads) {
  std::unique_ptr<SharingBackend> backend = Mps();
  ContainerEdits edits = backend->Edits(
      testing::Container(0, false, {MpsGrant("GPU-a", 81920, 100)}),
      EditOptions{});
  EXPECT_THAT(edits.env, ::testing::Contains(
                             Pair("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "100")));
}

TEST(MpsBackendTest, ContainerWithoutGpusGetsNothingUnlessOverwriteEnv) {
  EXPECT_EQ(Mps()->Edits(testing::Container(0, false, {}), EditOptions{}),
            ContainerEdits{});
  DeviceConfig config;
  config.overwrite_env = true;
  ContainerEdits edits =
      Mps(config)->Edits(testing::Container(0, false, {}), EditOptions{});
  EXPECT_THAT(edits.env, ElementsAre(Pair("NVIDIA_VISIBLE_DEVICES", "none")));
  EXPECT_THAT(edits.mounts, IsEmpty());
  EXPECT_THAT(edits.device_ids, IsEmpty());
}

TEST(MpsBackendTest, AllocatedGrantsCarryTheRequestIntoTheEdits) {
  std::unique_ptr<SharingBackend> backend = Mps();
  NodeState node = MakeNodeState({ModeGpu(0, mps::kMode)});
  absl::StatusOr<PodAllocation> placed = backend->Allocate(
      MakePod("a", {GpuContainer("c", 1, 6000, 25)}), node, {});
  ASSERT_OK(placed);
  ASSERT_EQ(placed->containers.at(0).devices.size(), 1u);
  EXPECT_EQ(placed->containers[0].devices[0].mode, mps::kMode);
  ContainerEdits edits = backend->Edits(placed->containers[0], EditOptions{});
  EXPECT_THAT(edits.env, ::testing::Contains(
                             Pair("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "25")));
  EXPECT_THAT(edits.env, ::testing::Contains(Pair(
                             "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "0=6000M")));
  EXPECT_THAT(edits.device_ids, ElementsAre("GPU-n1-0"));
}

TEST(MpsBackendTest, FortyEightClientsFitTheFortyNinthIsRefused) {
  std::unique_ptr<SharingBackend> backend = Mps();
  NodeState node = MakeNodeState({ModeGpu(0, mps::kMode, /*split=*/64)});
  // The ledger holds the split count; the mps backend caps its clients.
  EXPECT_EQ(node.ledger(0).slot_capacity(), 64);
  for (int i = 0; i < 48; ++i) {
    ASSERT_OK(backend->Allocate(
        MakePod(absl::StrCat("p", i), {GpuContainer("c", 1, 1000, 1)}), node,
        {}))
        << i;
  }
  NodeFit fit = backend->Filter(MakePod("p48", {GpuContainer("c", 1, 1000, 1)}),
                                node, {});
  EXPECT_EQ(fit.code, mps::kMpsClientsExhausted);
  EXPECT_THAT(fit.message, HasSubstr("MpsClientsExhausted"));
  EXPECT_THAT(fit.message, HasSubstr("max=48"));
  EXPECT_OK(node.CheckInvariants());
}

TEST(MpsBackendTest, EveryContainerIsOneClient) {
  std::unique_ptr<SharingBackend> backend = Mps();
  NodeState node = MakeNodeState({ModeGpu(0, mps::kMode, /*split=*/64)});
  for (int i = 0; i < 23; ++i) {
    ASSERT_OK(backend->Allocate(
        MakePod(absl::StrCat("p", i),
                {GpuContainer("a", 1, 1000, 1), GpuContainer("b", 1, 1000, 1)}),
        node, {}));
  }
  EXPECT_EQ(node.ledger(0).used_slots(), 46);
  EXPECT_EQ(backend
                ->Filter(MakePod("x", {GpuContainer("a", 1, 1000, 1),
                                       GpuContainer("b", 1, 1000, 1),
                                       GpuContainer("c", 1, 1000, 1)}),
                         node, {})
                .code,
            mps::kMpsClientsExhausted);
  EXPECT_OK(backend->Allocate(MakePod("y", {GpuContainer("a", 1, 1000, 1),
                                            GpuContainer("b", 1, 1000, 1)}),
                              node, {}));
}

TEST(MpsBackendTest, SplitCountBelowFortyEightIsTheLimit) {
  std::unique_ptr<SharingBackend> backend = Mps();
  NodeState node = MakeNodeState({ModeGpu(0, mps::kMode, /*split=*/10)});
  for (int i = 0; i < 10; ++i) {
    ASSERT_OK(backend->Allocate(
        MakePod(absl::StrCat("p", i), {GpuContainer("c", 1, 1000, 1)}), node,
        {}));
  }
  NodeFit fit = backend->Filter(MakePod("p10", {GpuContainer("c", 1, 1000, 1)}),
                                node, {});
  EXPECT_EQ(fit.code, ReasonCode::kSplitExhausted);
}

TEST(MpsBackendTest, MemoryAndCoresAreSharedLikeHamiCore) {
  std::unique_ptr<SharingBackend> backend = Mps();
  NodeState node = MakeNodeState({ModeGpu(0, mps::kMode)});
  ASSERT_OK(backend->Allocate(MakePod("a", {GpuContainer("c", 1, 60000, 60)}),
                              node, {}));
  EXPECT_EQ(
      backend->Filter(MakePod("b", {GpuContainer("c", 1, 30000, 10)}), node, {})
          .code,
      ReasonCode::kInsufficientMemory);
  EXPECT_EQ(
      backend->Filter(MakePod("c", {GpuContainer("c", 1, 1000, 50)}), node, {})
          .code,
      ReasonCode::kInsufficientCores);
}

TEST(MpsBackendTest, ClientLimitShrinksWithTheComputeInstance) {
  EXPECT_EQ(mps::MpsClientLimit(1, 7), 6);
  EXPECT_EQ(mps::MpsClientLimit(3, 7), 20);
  EXPECT_EQ(mps::MpsClientLimit(4, 7), 27);
  EXPECT_EQ(mps::MpsClientLimit(7, 7), 48);
  EXPECT_EQ(mps::MpsClientLimit(1, 4), 12);
  // A whole GPU, and degenerate inputs: never below one client.
  EXPECT_EQ(mps::MpsClientLimit(0, 0), 48);
  EXPECT_EQ(mps::MpsClientLimit(8, 7), 48);
  EXPECT_EQ(mps::MpsClientLimit(0, 7), 1);
  EXPECT_EQ(mps::MpsClientLimit(1, 100), 1);
}

TEST(MpsBackendTest, MpsGpuNeverTakesAHamiCoreTenant) {
  NodeState node = MakeNodeState({ModeGpu(0, mps::kMode)});
  const PodRequest pod = MakePod("a", {GpuContainer("c", 1, 1000, 10)});
  NodeFit fit = HamiCore()->Filter(pod, node, {});
  EXPECT_EQ(fit.code, ReasonCode::kModeMismatch);
  EXPECT_FALSE(HamiCore()->MayFit(pod, node));

  // Nor a hami-core grant committed by either backend.
  PodAllocation allocation;
  allocation.pod_uid = "uid-a";
  allocation.pod_key = "default/a";
  allocation.containers.push_back(
      testing::Container(0, false, {testing::Grant("GPU-n1-0", 1000, 10)}));
  EXPECT_THAT(Mps()->Commit(pod, allocation, node),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(HamiCore()->Commit(pod, allocation, node),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(node.ledger(0).pod_count(), 0u);
}

TEST(MpsBackendTest, HamiCoreGpuNeverTakesAnMpsTenant) {
  NodeState node = MakeNodeState({ModeGpu(0, hamicore::kMode)});
  const PodRequest pod = MakePod("a", {GpuContainer("c", 1, 1000, 10)});
  NodeFit fit = Mps()->Filter(pod, node, {});
  EXPECT_EQ(fit.code, ReasonCode::kModeMismatch);
  EXPECT_THAT(fit.message, HasSubstr("want=mps"));
  EXPECT_FALSE(Mps()->MayFit(pod, node));

  PodAllocation allocation;
  allocation.pod_uid = "uid-a";
  allocation.pod_key = "default/a";
  allocation.containers.push_back(
      testing::Container(0, false, {MpsGrant("GPU-n1-0", 1000, 10)}));
  EXPECT_THAT(Mps()->Commit(pod, allocation, node),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(node.ledger(0).pod_count(), 0u);
}

TEST(MpsBackendTest, PodInsistingOnAnotherModeIsRefused) {
  NodeState node = MakeNodeState({ModeGpu(0, mps::kMode)});
  PodRequest pod = MakePod("a", {GpuContainer("c", 1, 1000, 10)});
  pod.mode = hamicore::kMode;
  EXPECT_EQ(Mps()->Filter(pod, node, {}).code, ReasonCode::kModeMismatch);
  pod.mode = mps::kMode;
  EXPECT_TRUE(Mps()->Filter(pod, node, {}).fits());
}

TEST(MpsBackendTest, MixedNodeSeparatesTheModes) {
  NodeState node =
      MakeNodeState({ModeGpu(0, hamicore::kMode), ModeGpu(1, mps::kMode)});
  absl::StatusOr<PodAllocation> mps =
      Mps()->Allocate(MakePod("m", {GpuContainer("c", 1, 1000, 10)}), node, {});
  ASSERT_OK(mps);
  EXPECT_EQ(mps->containers[0].devices.at(0).uuid, "GPU-n1-1");
  absl::StatusOr<PodAllocation> hami = HamiCore()->Allocate(
      MakePod("h", {GpuContainer("c", 1, 1000, 10)}), node, {});
  ASSERT_OK(hami);
  EXPECT_EQ(hami->containers[0].devices.at(0).uuid, "GPU-n1-0");
  // Two GPUs wanted, one of each mode: neither backend can.
  EXPECT_FALSE(
      Mps()
          ->Filter(MakePod("x", {GpuContainer("c", 2, 1000, 10)}), node, {})
          .fits());

  // Releasing through the wrong backend leaves the tenant in place.
  HamiCore()->Release("uid-m", node);
  EXPECT_TRUE(node.ledger(1).HasPod("uid-m"));
  Mps()->Release("uid-m", node);
  EXPECT_FALSE(node.ledger(1).HasPod("uid-m"));
  EXPECT_TRUE(node.ledger(0).HasPod("uid-h"));
}

TEST(MpsBackendTest, RegistersUnderItsName) {
  BackendRegistry registry;
  ASSERT_OK(mps::RegisterMpsBackend(registry));
  absl::StatusOr<std::unique_ptr<SharingBackend>> backend =
      registry.Create("mps", Config{});
  ASSERT_OK(backend);
  EXPECT_EQ((*backend)->mode(), mps::kMode);
}

}  // namespace
}  // namespace deviceshare
