#include "deviceshare/k8s/pod_annotations.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/codec/hami_codec.h"
#include "deviceshare/codec/volcano_codec.h"
#include "deviceshare/mig/mig_backend.h"
#include "deviceshare/mps/mps_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::Container;
using ::deviceshare::testing::Grant;
using ::deviceshare::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;
using Annotations = std::map<std::string, std::string>;

const absl::Time kNow = absl::FromUnixSeconds(1700000123);

ContainerRequest Wants(std::string name, bool is_init, int32_t gpus) {
  ContainerRequest container;
  container.name = std::move(name);
  container.is_init = is_init;
  container.gpu_count = gpus;
  container.memory_mib = gpus > 0 ? 2000 : 0;
  return container;
}

// init (1 GPU), app (2 GPUs), sidecar (none), app (1 GPU).
PodRequest Request(Dialect dialect) {
  PodRequest request;
  request.uid = "uid-1";
  request.namespace_name = "ml";
  request.name = "trainer";
  request.dialect = dialect;
  request.containers = {Wants("warmup", true, 1), Wants("main", false, 2),
                        Wants("sidecar", false, 0), Wants("eval", false, 1)};
  return request;
}

// The allocation the scheduler would make for `request`, as read back: grants
// have gpu_index -1. `init_gets_gpu` is off for Volcano, which does not
// carry init containers.
PodAllocation AllocationFor(const PodRequest& request, bool init_gets_gpu) {
  PodAllocation allocation;
  allocation.pod_uid = request.uid;
  allocation.pod_key = request.Key();
  allocation.node_name = "gpu-node-1";
  const std::vector<std::vector<DeviceGrant>> grants = {
      init_gets_gpu ? std::vector<DeviceGrant>{Grant("GPU-a", 1000, 10)}
                    : std::vector<DeviceGrant>{},
      {Grant("GPU-a", 3000, 50), Grant("GPU-b", 3000, 50)},
      {},
      {Grant("GPU-b", 2000, 0)},
  };
  for (size_t i = 0; i < request.containers.size(); ++i) {
    ContainerAllocation container;
    container.container_index = static_cast<int32_t>(i);
    container.name = request.containers[i].name;
    container.is_init = request.containers[i].is_init;
    container.devices = grants[i];
    allocation.containers.push_back(std::move(container));
  }
  return allocation;
}

TEST(PodAnnotationsTest, HamiDialectWritesTheBindAnnotations) {
  const PodAllocation allocation =
      AllocationFor(Request(Dialect::kHami), /*init_gets_gpu=*/true);
  const std::string record = EncodeHamiAllocation(allocation);
  EXPECT_THAT(AllocationAnnotations(allocation, Dialect::kHami, kNow, 1),
              UnorderedElementsAre(
                  Pair(keys::kHamiBindPhase, keys::kBindPhaseAllocating),
                  Pair(keys::kHamiBindTime, "1700000123"),
                  Pair(keys::kHamiAllocated, record),
                  Pair(keys::kHamiToAllocate, record),
                  Pair(keys::kHamiNode, "gpu-node-1"),
                  Pair(keys::kHamiTime, "1700000123")));
}

TEST(PodAnnotationsTest, VolcanoDialectWritesTheBindAnnotations) {
  const PodAllocation allocation =
      AllocationFor(Request(Dialect::kVolcano), /*init_gets_gpu=*/false);
  const std::string record = EncodeVolcanoAllocation(allocation);
  EXPECT_THAT(AllocationAnnotations(allocation, Dialect::kVolcano, kNow, 1),
              UnorderedElementsAre(
                  Pair(keys::kVolcanoBindPhase, keys::kBindPhaseAllocating),
                  Pair(keys::kVolcanoBindTime, "1700000123"),
                  Pair(keys::kVolcanoToAllocate, record),
                  Pair(keys::kVolcanoNode, "gpu-node-1"),
                  Pair(keys::kVolcanoTime, "1700000123"),
                  Pair(keys::kVolcanoAllocation, record)));
}

TEST(PodAnnotationsTest, HamiRoundTripKeepsInitAndGpuLessContainers) {
  const PodRequest request = Request(Dialect::kHami);
  const PodAllocation allocation = AllocationFor(request, true);
  auto read = AllocationFromAnnotations(
      request, AllocationAnnotations(allocation, Dialect::kHami, kNow, 1),
      "gpu-node-1", 1);
  ASSERT_OK(read);
  ASSERT_TRUE(read->has_value());
  EXPECT_EQ(**read, allocation);
}

TEST(PodAnnotationsTest, VolcanoRoundTripMapsEntriesToAppContainersWithGpus) {
  const PodRequest request = Request(Dialect::kVolcano);
  const PodAllocation allocation = AllocationFor(request, false);
  auto read = AllocationFromAnnotations(
      request, AllocationAnnotations(allocation, Dialect::kVolcano, kNow, 1),
      "gpu-node-1", 1);
  ASSERT_OK(read);
  ASSERT_TRUE(read->has_value());
  EXPECT_EQ(**read, allocation);
}

TEST(PodAnnotationsTest, VolcanoCannotCarryInitContainerGrants) {
  // Volcano's record has entries for app containers only, so an init
  // container's grants are not written and do not come back.
  PodRequest request = Request(Dialect::kVolcano);
  const PodAllocation with_init = AllocationFor(request, true);
  auto read = AllocationFromAnnotations(
      request, AllocationAnnotations(with_init, Dialect::kVolcano, kNow, 1),
      "gpu-node-1", 1);
  ASSERT_OK(read);
  ASSERT_TRUE(read->has_value());
  EXPECT_THAT((*read)->containers[0].devices, IsEmpty());
  EXPECT_EQ(**read, AllocationFor(request, false));
}

TEST(PodAnnotationsTest, NoRecordIsNullopt) {
  auto read = AllocationFromAnnotations(
      Request(Dialect::kHami),
      {{keys::kHamiNode, "gpu-node-1"}, {"other", "x"}}, "gpu-node-1", 1);
  ASSERT_OK(read);
  EXPECT_FALSE(read->has_value());
}

TEST(PodAnnotationsTest, HamiRecordWinsOverVolcano) {
  const PodRequest request = Request(Dialect::kHami);
  const PodAllocation allocation = AllocationFor(request, true);
  Annotations annotations =
      AllocationAnnotations(allocation, Dialect::kHami, kNow, 1);
  // A Volcano record that would not even fit this request.
  annotations[keys::kVolcanoAllocation] = "GPU-z,NVIDIA,1,1:";
  auto read = AllocationFromAnnotations(request, annotations, "gpu-node-1", 1);
  ASSERT_OK(read);
  ASSERT_TRUE(read->has_value());
  EXPECT_EQ(**read, allocation);
}

TEST(PodAnnotationsTest, ToAllocateIsTheFallbackRecord) {
  const PodRequest request = Request(Dialect::kVolcano);
  const PodAllocation allocation = AllocationFor(request, false);
  const Annotations annotations = {
      {keys::kVolcanoToAllocate, EncodeVolcanoAllocation(allocation)}};
  auto read = AllocationFromAnnotations(request, annotations, "gpu-node-1", 1);
  ASSERT_OK(read);
  ASSERT_TRUE(read->has_value());
  EXPECT_EQ(**read, allocation);
}

TEST(PodAnnotationsTest, ModeComesFromTheRequestOrTheMigId) {
  PodRequest request = Request(Dialect::kHami);
  request.mode = mps::kMode;
  const Annotations annotations = {
      {keys::kHamiAllocated,
       ";GPU-a,NVIDIA,3000,50:GPU-b[group1-0],NVIDIA,3000,0:;;"
       "GPU-b,NVIDIA,2000,0:;"}};
  auto read = AllocationFromAnnotations(request, annotations, "n", 1);
  ASSERT_OK(read);
  ASSERT_TRUE(read->has_value());
  const auto& main = (*read)->containers[1].devices;
  ASSERT_EQ(main.size(), 2u);
  EXPECT_EQ(main[0].mode, mps::kMode);
  EXPECT_EQ(main[1].mode, mig::kMode);
  EXPECT_EQ(main[1].uuid, "GPU-b");
  EXPECT_EQ(main[1].gpu_index, -1);
  EXPECT_EQ((*read)->node_name, "n");
}

// HAMi's DecodePodDevices maps entries by position and counts none
// (scheduler_test.go's records with fewer entries than containers): a
// container past the last entry has no device.
TEST(PodAnnotationsTest, HamiEntriesMapByPositionWithoutACount) {
  const PodRequest hami = Request(Dialect::kHami);
  absl::StatusOr<std::optional<PodAllocation>> read = AllocationFromAnnotations(
      hami, {{keys::kHamiAllocated, "GPU-a,NVIDIA,1,1:;GPU-b,NVIDIA,2,2:"}},
      "n", 1);
  ASSERT_OK(read);
  ASSERT_TRUE(read->has_value());
  const PodAllocation& allocation = **read;
  ASSERT_EQ(allocation.containers.size(), 4);
  ASSERT_EQ(allocation.containers[0].devices.size(), 1);
  ASSERT_EQ(allocation.containers[1].devices.size(), 1);
  EXPECT_EQ(allocation.containers[1].devices[0].memory_mib, 2);
  EXPECT_TRUE(allocation.containers[2].devices.empty());
  EXPECT_TRUE(allocation.containers[3].devices.empty());
  // Empty entries past the last container are nothing.
  EXPECT_OK(AllocationFromAnnotations(
      hami, {{keys::kHamiAllocated, "GPU-a,NVIDIA,1,1:;;;;;;"}}, "n", 1));
}

TEST(PodAnnotationsTest, EntryCountMismatchNamesPodAndCounts) {
  // A device past the last container would be charged to no container.
  const PodRequest hami = Request(Dialect::kHami);
  EXPECT_THAT(
      AllocationFromAnnotations(
          hami, {{keys::kHamiAllocated, ";;;;GPU-a,NVIDIA,1,1:;"}}, "n", 1),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          AllOf(HasSubstr("ml/trainer"), HasSubstr(keys::kHamiAllocated),
                HasSubstr("has 5 container entries"), HasSubstr("wants 4"))));
  const PodRequest volcano = Request(Dialect::kVolcano);
  EXPECT_THAT(
      AllocationFromAnnotations(
          volcano,
          {{keys::kVolcanoAllocation,
            "GPU-a,NVIDIA,1,1:;GPU-a,NVIDIA,1,1:;GPU-a,NVIDIA,1,1:"}},
          "n", 1),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          AllOf(HasSubstr("ml/trainer"), HasSubstr(keys::kVolcanoAllocation),
                HasSubstr("has 3 container entries"), HasSubstr("wants 2"))));
}

TEST(PodAnnotationsTest, VolcanoEntriesMapByPositionAndSkipWhatVolcanoSkips) {
  // utils.go DecodePodDevices: positional, no count; a device that does not
  // read is skipped, the rest of the record still charged.
  absl::StatusOr<std::optional<PodAllocation>> read = AllocationFromAnnotations(
      Request(Dialect::kVolcano),
      {{keys::kVolcanoToAllocate, "GPU-a,NVIDIA,1:GPU-b,NVIDIA,300,20;"}}, "n",
      1);
  ASSERT_OK(read);
  ASSERT_TRUE(read->has_value());
  const PodAllocation& allocation = **read;
  EXPECT_THAT(allocation.containers[1].devices,
              ElementsAre(Grant("GPU-b", 300, 20)));
  EXPECT_TRUE(allocation.containers[3].devices.empty());
}

TEST(PodAnnotationsTest, MalformedRecordNamesPodAndAnnotation) {
  EXPECT_THAT(
      AllocationFromAnnotations(
          Request(Dialect::kHami),
          {{keys::kHamiAllocated, ";GPU-a,NVIDIA,x,1:;;GPU-b,NVIDIA,1,1:;"}},
          "n", 1),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("ml/trainer"), HasSubstr(keys::kHamiAllocated),
                     HasSubstr("container 1 device 0"), HasSubstr("memMiB"),
                     HasSubstr("\"x\""))));
  EXPECT_THAT(
      AllocationFromAnnotations(
          Request(Dialect::kVolcano),
          {{keys::kVolcanoToAllocate, "GPU-a,NVIDIA,1,1:;;GPU-b,NVIDIA,1,1:"}},
          "n", 1),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          AllOf(HasSubstr("ml/trainer"), HasSubstr(keys::kVolcanoToAllocate))));
}

// A MIG record that does not read: the node agent (no `unread`) refuses
// the pod; a scheduler charging running pods (`unread`) reads HAMi's record
// without it, so its grants hold their MIG GPUs whole, and is told why.
TEST(PodAnnotationsTest, UnreadMigRecordIsLeftOutWhenTheCallerSaysSo) {
  const Annotations annotations = {
      {keys::kHamiAllocated,
       "GPU-w,NVIDIA,5,0:;GPU-a,NVIDIA,10,0:;;GPU-b,"
       "NVIDIA,1,0:;"},
      {keys::kHamiMigAllocations,
       R"([{"containerIndex":1,"deviceIndex":0,"gpuUUID":"GPU-a",)"
       R"("profile":"2g.10gb","placement":[0,2]}])"}};
  EXPECT_THAT(
      AllocationFromAnnotations(Request(Dialect::kHami), annotations, "n", 1),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          AllOf(HasSubstr("ml/trainer"), HasSubstr(keys::kHamiMigAllocations),
                HasSubstr("placement"))));
  std::vector<absl::Status> unread;
  absl::StatusOr<std::optional<PodAllocation>> read = AllocationFromAnnotations(
      Request(Dialect::kHami), annotations, "n", 1, &unread);
  ASSERT_OK(read);
  ASSERT_TRUE(read->has_value());
  ASSERT_EQ((**read).containers[1].devices.size(), 1u);
  const DeviceGrant& grant = (**read).containers[1].devices[0];
  EXPECT_EQ(grant.uuid, "GPU-a");
  EXPECT_FALSE(grant.has_partition());
  ASSERT_EQ(unread.size(), 1u);
  EXPECT_THAT(unread[0].message(),
              AllOf(HasSubstr("ml/trainer"), HasSubstr("entry 0"),
                    HasSubstr("placement")));
  // A Volcano record beside HAMi's MIG JSON: the JSON indexes no record.
  unread.clear();
  read = AllocationFromAnnotations(
      Request(Dialect::kVolcano),
      {{keys::kVolcanoToAllocate, "GPU-a,NVIDIA,1,1:;GPU-b,NVIDIA,1,1:"},
       {keys::kHamiMigAllocations, "[]"}},
      "n", 1, &unread);
  ASSERT_OK(read);
  ASSERT_TRUE(read->has_value());
  ASSERT_EQ(unread.size(), 1u);
}

}  // namespace
}  // namespace deviceshare
