// MIG grants on the wire, both dialects: Volcano's `GPU-x[group-position]`
// and deviceshare's `GPU-x[profile-start]` ids in vgpu-ids-new, HAMi's
// `hami.io/vgpu-mig-allocations` JSON beside vgpu-devices-allocated, and
// both through AllocationAnnotations / AllocationFromAnnotations.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/codec/hami_codec.h"
#include "deviceshare/codec/volcano_codec.h"
#include "deviceshare/hamicore/hamicore_backend.h"
#include "deviceshare/k8s/pod_annotations.h"
#include "deviceshare/mig/mig_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/format_goldens.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::Container;
using ::deviceshare::testing::GpuContainer;
using ::deviceshare::testing::Grant;
using ::deviceshare::testing::MakePod;
using ::deviceshare::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Annotations = std::map<std::string, std::string>;
using Entries = std::vector<std::vector<DeviceGrant>>;
namespace goldens = ::deviceshare::testing::goldens;

constexpr absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;

// A placement-mode MIG grant.
DeviceGrant PlacedGrant(std::string uuid, int64_t memory_mib, int32_t cores,
                        std::string profile, int32_t start, int32_t size) {
  DeviceGrant grant = Grant(std::move(uuid), memory_mib, cores);
  grant.mode = mig::kMode;
  grant.mig.profile = std::move(profile);
  grant.mig.start = start;
  grant.mig.size = size;
  return grant;
}

// A configMap-mode MIG grant as the backend makes it: group, position, and
// the placement its catalog resolved.
DeviceGrant GroupGrant(std::string uuid, int64_t memory_mib, int32_t cores,
                       std::string profile, int32_t start, int32_t size,
                       std::string group, int32_t position) {
  DeviceGrant grant = PlacedGrant(std::move(uuid), memory_mib, cores,
                                  std::move(profile), start, size);
  grant.mig.group = std::move(group);
  grant.mig.position = position;
  return grant;
}

DeviceGrant Created(DeviceGrant grant, std::string mig_uuid, int32_t gi,
                    int32_t ci) {
  grant.mig_uuid = std::move(mig_uuid);
  grant.gpu_instance_id = gi;
  grant.compute_instance_id = ci;
  return grant;
}

// --- Volcano: MIG ids in vgpu-ids-new ---------------------------------------

TEST(VolcanoMigIdTest, GoldenConfigMapIdDecodesToGroupAndPosition) {
  auto entries = DecodeVolcanoAllocation(goldens::kVolcanoMigAllocation);
  ASSERT_OK(entries);
  // Profile, start and size are not on the wire (profile "", start -1, size
  // 0): the mig backend resolves them from its catalog.
  DeviceGrant want = Grant("GPU-a", 10240, 0);
  want.mode = mig::kMode;
  want.mig = MigSlot{.group = "group2", .position = 3};
  EXPECT_THAT(*entries, ElementsAre(ElementsAre(want)));
  PodAllocation allocation;
  allocation.containers = {Container(0, false, {want})};
  EXPECT_EQ(EncodeVolcanoAllocation(allocation),
            goldens::kVolcanoMigAllocation);
}

TEST(VolcanoMigIdTest, PlacementIdDecodesToProfileAndStart) {
  auto entries = DecodeVolcanoAllocation("GPU-a[1g.10gb-6],NVIDIA,9984,14:");
  ASSERT_OK(entries);
  // The size is not carried.
  EXPECT_THAT(*entries, ElementsAre(ElementsAre(
                            PlacedGrant("GPU-a", 9984, 14, "1g.10gb", 6, 0))));
}

TEST(VolcanoMigIdTest, SplitsAtTheLastDash) {
  auto entries = DecodeVolcanoAllocation(
      "GPU-a[2g.48gb-me-3],NVIDIA,1,0:GPU-b[my-group-12],NVIDIA,2,0:"
      "GPU-c[1g.24gb+me.all-0],NVIDIA,3,0:");
  ASSERT_OK(entries);
  ASSERT_EQ((*entries)[0].size(), 3u);
  const MigSlot& variant = (*entries)[0][0].mig;
  EXPECT_EQ(variant.profile, "2g.48gb-me");
  EXPECT_EQ(variant.start, 3);
  const MigSlot& group = (*entries)[0][1].mig;
  EXPECT_EQ(group.group, "my-group");
  EXPECT_EQ(group.position, 12);
  EXPECT_EQ(group.profile, "");
  const MigSlot& all = (*entries)[0][2].mig;
  EXPECT_EQ(all.profile, "1g.24gb+me.all");
  EXPECT_EQ(all.start, 0);
}

TEST(VolcanoMigIdTest, EncoderPrefersGroupThenPlacementThenPlainUuid) {
  DeviceGrant bare = Grant("GPU-d", 4, 0);
  bare.mode = mig::kMode;  // nothing to write in brackets
  DeviceGrant not_mig = PlacedGrant("GPU-e", 5, 0, "1g.10gb", 1, 1);
  not_mig.mode = hamicore::kMode;
  DeviceGrant no_position = PlacedGrant("GPU-f", 6, 0, "1g.10gb", 2, 1);
  no_position.mig.group = "group1";  // position -1: the group is not written
  PodAllocation allocation;
  allocation.containers = {Container(
      0, false,
      {GroupGrant("GPU-a", 1, 0, "2g.20gb", 0, 2, "group2", 0),
       PlacedGrant("GPU-b", 2, 0, "1g.10gb", 6, 1),
       Created(PlacedGrant("GPU-c", 3, 0, "3g.40gb", 4, 4), "MIG-x", 1, 0),
       bare, not_mig, no_position})};
  EXPECT_EQ(EncodeVolcanoAllocation(allocation),
            "GPU-a[group2-0],NVIDIA,1,0:GPU-b[1g.10gb-6],NVIDIA,2,0:"
            "GPU-c[3g.40gb-4],NVIDIA,3,0:GPU-d,NVIDIA,4,0:GPU-e,NVIDIA,5,0:"
            "GPU-f[1g.10gb-2],NVIDIA,6,0:");
}

TEST(VolcanoMigIdTest, MalformedIdsAreSkippedAndReportedNamingAll) {
  struct Case {
    const char* id;
    const char* field;
    const char* value;
  };
  const Case cases[] = {
      {"GPU-a[]", "uuid", "\"GPU-a[]\""},
      {"GPU-a[group2]", "uuid", "\"GPU-a[group2]\""},
      {"GPU-a[-3]", "uuid", "\"GPU-a[-3]\""},
      {"GPU-a[group2-]", "uuid", "\"GPU-a[group2-]\""},
      {"GPU-a[--1]", "uuid", "\"GPU-a[--1]\""},
      {"GPU-a[gr]p-1]", "uuid", "\"GPU-a[gr]p-1]\""},
      {"GPU-a[group2-3]x", "uuid", "\"GPU-a[group2-3]x\""},
      {"GPU-a[[group2-3]", "uuid", "\"GPU-a[[group2-3]\""},
      {"[group2-3]", "uuid", "\"[group2-3]\""},
      {"GPU-a[group2-x]", "MIG position", "\"x\" is not a decimal integer"},
      {"GPU-a[group2-3 ]", "MIG position", "\"3 \""},
      {"GPU-a[group2--1]", "MIG position", "\"-1\" is negative"},
      {"GPU-a[1g.10gb--1]", "MIG start", "\"-1\" is negative"},
      {"GPU-a[1g.10gb-+1]", "MIG start", "\"+1\""},
      {"GPU-a[1g.10gb-2147483648]", "MIG start", "out of range"},
  };
  for (const Case& c : cases) {
    const std::string text = absl::StrCat(
        "GPU-z,NVIDIA,1,0:;GPU-y,NVIDIA,1,0:", c.id, ",NVIDIA,10240,0:");
    SCOPED_TRACE(text);
    // Volcano skips a device it cannot read; the error is reported.
    std::vector<absl::Status> skipped;
    ASSERT_OK(DecodeVolcanoAllocation(text, 1, &skipped));
    ASSERT_EQ(skipped.size(), 1);
    EXPECT_THAT(skipped[0],
                StatusIs(kInvalid,
                         AllOf(HasSubstr(keys::kVolcanoAllocation),
                               HasSubstr("container 1 device 1"),
                               HasSubstr(absl::StrCat("field ", c.field, ": ")),
                               HasSubstr(c.value))));
  }
}

// --- HAMi: hami.io/vgpu-mig-allocations
// ---------------------------------------

// init (MIG, placed), app (hami-core), app (no GPU), app (a configMap-mode
// instance and a created placement-mode one).
PodAllocation MixedAllocation() {
  PodAllocation allocation;
  allocation.pod_uid = "uid-trainer";
  allocation.pod_key = "default/trainer";
  allocation.node_name = "gpu-node-1";
  allocation.containers = {
      Container(0, true, {PlacedGrant("GPU-a", 9984, 14, "1g.10gb", 6, 1)}),
      Container(1, false, {Grant("GPU-b", 3000, 50)}),
      Container(2, false, {}),
      Container(3, false,
                {GroupGrant("GPU-a", 19968, 28, "2g.20gb", 0, 2, "group2", 0),
                 Created(PlacedGrant("GPU-c", 40192, 42, "3g.40gb", 4, 4),
                         "MIG-0c0f6a9e-1f6c-5c2f-9d54-3f2b8c1e7a10", 2, 0)}),
  };
  return allocation;
}

constexpr char kMixedHamiRecord[] =
    "GPU-a,NVIDIA,9984,14:;GPU-b,NVIDIA,3000,50:;;"
    "GPU-a,NVIDIA,19968,28:GPU-c,NVIDIA,40192,42:;";
constexpr char kMixedHamiMig[] =
    R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-a",)"
    R"("profile":"1g.10gb","placement":{"start":6,"size":1}},)"
    R"({"containerIndex":3,"deviceIndex":0,"gpuUUID":"GPU-a",)"
    R"("profile":"2g.20gb","placement":{"start":0,"size":2},)"
    R"("group":"group2","position":0},)"
    R"({"containerIndex":3,"deviceIndex":1,"gpuUUID":"GPU-c",)"
    R"("profile":"3g.40gb","placement":{"start":4,"size":4},)"
    R"("migUUID":"MIG-0c0f6a9e-1f6c-5c2f-9d54-3f2b8c1e7a10",)"
    R"("gpuInstanceID":2,"computeInstanceID":0}])";

Entries DevicesOf(const PodAllocation& allocation) {
  Entries entries;
  for (const ContainerAllocation& c : allocation.containers) {
    entries.push_back(c.devices);
  }
  return entries;
}

TEST(HamiMigAllocationsTest, EncodesMigGrantsBesidePlainUuids) {
  const PodAllocation allocation = MixedAllocation();
  EXPECT_EQ(EncodeHamiAllocation(allocation), kMixedHamiRecord);
  EXPECT_EQ(EncodeHamiMigAllocations(allocation), kMixedHamiMig);
}

TEST(HamiMigAllocationsTest, DecodeAndMergeRoundTrips) {
  const PodAllocation allocation = MixedAllocation();
  auto entries = DecodeHamiAllocation(kMixedHamiRecord);
  ASSERT_OK(entries);
  ASSERT_OK(MergeHamiMigAllocations(kMixedHamiMig, *entries));
  EXPECT_EQ(*entries, DevicesOf(allocation));
}

TEST(HamiMigAllocationsTest, NoMigGrantWritesNothingAndEmptyMergesNothing) {
  PodAllocation allocation;
  allocation.containers = {Container(0, false, {Grant("GPU-a", 1, 1)})};
  EXPECT_EQ(EncodeHamiMigAllocations(allocation), "");
  Entries entries = DevicesOf(allocation);
  for (const char* text : {"", "  ", "[]"}) {
    SCOPED_TRACE(text);
    EXPECT_OK(MergeHamiMigAllocations(text, entries));
    EXPECT_EQ(entries, DevicesOf(allocation));
  }
}

TEST(HamiMigAllocationsTest, EncoderSkipsWhatHamiCouldNotRead) {
  DeviceGrant no_profile = PlacedGrant("GPU-a", 1, 0, "", 0, 1);
  DeviceGrant unplaced = PlacedGrant("GPU-a", 1, 0, "1g.10gb", -1, 0);
  DeviceGrant group_only = unplaced;
  group_only.mig.group = "0";
  group_only.mig.position = 5;
  DeviceGrant partial = PlacedGrant("GPU-a", 1, 0, "1g.10gb", 3, 1);
  partial.mig_uuid = "MIG-1";  // instance ids still -1
  PodAllocation allocation;
  allocation.containers = {
      Container(0, false, {no_profile, unplaced, group_only, partial})};
  EXPECT_EQ(EncodeHamiMigAllocations(allocation),
            R"([{"containerIndex":0,"deviceIndex":2,"gpuUUID":"GPU-a",)"
            R"("profile":"1g.10gb","group":"0","position":5},)"
            R"({"containerIndex":0,"deviceIndex":3,"gpuUUID":"GPU-a",)"
            R"("profile":"1g.10gb","placement":{"start":3,"size":1}}])");
}

TEST(HamiMigAllocationsTest, MergeKeepsWhatAnEntryLacks) {
  // A legacy HAMi (<= 2.9) id carries the group; the JSON adds the rest.
  auto entries = DecodeHamiAllocation("GPU-a[1-2],NVIDIA,20480,28:;");
  ASSERT_OK(entries);
  ASSERT_OK(MergeHamiMigAllocations(
      R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-a",)"
      R"("profile":"2g.20gb","placement":{"start":2,"size":2},"extra":1}])",
      *entries));
  EXPECT_THAT(*entries, ElementsAre(ElementsAre(GroupGrant(
                            "GPU-a", 20480, 28, "2g.20gb", 2, 2, "1", 2))));
}

// HAMi's mig_allocation_test.go TestGetNodesUsageRestoresUnconsumedMig
// Reservations: the record lists one device, the JSON reserves two
// placements for container 0; both are restored, the second as a grant of
// its own (deviceIndex order, whatever the JSON's order).
TEST(HamiMigAllocationsTest, ReservationsPastTheRecordBecomeGrants) {
  auto entries = DecodeHamiAllocation("GPU-a,NVIDIA,5120,14:;");
  ASSERT_OK(entries);
  ASSERT_OK(MergeHamiMigAllocations(
      R"([{"containerIndex":0,"deviceIndex":1,"gpuUUID":"GPU-a",)"
      R"("profile":"1g.5gb","placement":{"start":5,"size":1}},)"
      R"({"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-a",)"
      R"("profile":"1g.5gb","placement":{"start":6,"size":1}}])",
      *entries));
  EXPECT_THAT(*entries, ElementsAre(ElementsAre(
                            PlacedGrant("GPU-a", 5120, 14, "1g.5gb", 6, 1),
                            PlacedGrant("GPU-a", 0, 0, "1g.5gb", 5, 1))));
}

TEST(HamiMigAllocationsTest, MalformedIsInvalidArgumentNamingAll) {
  // Two containers: GPU-a; GPU-b, GPU-c.
  const Entries base = {{Grant("GPU-a", 1, 0)},
                        {Grant("GPU-b", 1, 0), Grant("GPU-c", 1, 0)}};
  const std::string ok_head =
      R"("containerIndex":1,"deviceIndex":1,"gpuUUID":"GPU-c",)";
  const std::string ok_placement = R"("placement":{"start":4,"size":4})";
  auto entry = [&](const std::string& members) {
    return absl::StrCat(R"([{"containerIndex":0,"deviceIndex":0,)",
                        R"("gpuUUID":"GPU-a","profile":"1g.10gb",)",
                        R"("placement":{"start":0,"size":1}},{)", members,
                        "}]");
  };
  const std::string good =
      absl::StrCat(R"("profile":"3g.40gb",)", ok_placement);
  struct Case {
    std::string text;
    const char* where;  // "" for document-level errors
    const char* field;
    const char* detail;
  };
  const Case cases[] = {
      {"[{", "", "", "not valid JSON"},
      {R"({"containerIndex":0})", "", "", "want a list"},
      {"[1]", " entry 0", "allocation", "is not a JSON object"},
      {entry(ok_head + good), "", "", ""},  // the control: no error
      {entry(absl::StrCat(R"("deviceIndex":1,"gpuUUID":"GPU-c",)", good)),
       " entry 1", "containerIndex", "is missing"},
      {entry(absl::StrCat(R"("containerIndex":2,"deviceIndex":0,)",
                          R"("gpuUUID":"GPU-c",)", good)),
       " entry 1", "containerIndex", "names no container"},
      {entry(absl::StrCat(R"("containerIndex":-1,"deviceIndex":0,)",
                          R"("gpuUUID":"GPU-c",)", good)),
       " entry 1", "containerIndex", "-1 is negative"},
      {entry(absl::StrCat(R"("containerIndex":"1","deviceIndex":0,)",
                          R"("gpuUUID":"GPU-c",)", good)),
       " entry 1", "containerIndex", "is not an integer"},
      {entry(absl::StrCat(R"("containerIndex":1,"deviceIndex":-1,)",
                          R"("gpuUUID":"GPU-c",)", good)),
       " entry 1", "deviceIndex", "-1 is negative"},
      {entry(absl::StrCat(R"("containerIndex":1,"deviceIndex":2,)",
                          R"("gpuUUID":"",)", good)),
       " entry 1", "gpuUUID", "is empty"},
      {entry(absl::StrCat(R"("containerIndex":1,"gpuUUID":"GPU-c",)", good)),
       " entry 1", "deviceIndex", "is missing"},
      {entry(absl::StrCat(R"("containerIndex":1,"deviceIndex":1,)", good)),
       " entry 1", "gpuUUID", "is missing"},
      {entry(absl::StrCat(R"("containerIndex":1,"deviceIndex":1,)",
                          R"("gpuUUID":"GPU-b",)", good)),
       " entry 1", "gpuUUID", "\"GPU-b\" is not the uuid of container 1"},
      {entry(absl::StrCat(ok_head, ok_placement)), " entry 1", "profile",
       "is missing"},
      {entry(absl::StrCat(ok_head, R"("profile":"",)", ok_placement)),
       " entry 1", "profile", "is not a MIG profile name"},
      {entry(absl::StrCat(ok_head, R"("profile":"3g",)", ok_placement)),
       " entry 1", "profile", "\"3g\" is not a MIG profile name"},
      {entry(absl::StrCat(ok_head, R"("profile":3,)", ok_placement)),
       " entry 1", "profile", "is not a string"},
      {entry(absl::StrCat(ok_head, R"("profile":"3g.40gb")")), " entry 1",
       "placement", "is missing"},
      {entry(absl::StrCat(ok_head, R"("profile":"3g.40gb","placement":[4,4])")),
       " entry 1", "placement", "is not a JSON object"},
      {entry(absl::StrCat(ok_head, R"("profile":"3g.40gb",)",
                          R"("placement":{"start":-1,"size":4})")),
       " entry 1", "placement.start", "-1 is negative"},
      {entry(absl::StrCat(ok_head, R"("profile":"3g.40gb",)",
                          R"("placement":{"size":4})")),
       " entry 1", "placement.start", "is missing"},
      {entry(absl::StrCat(ok_head, R"("profile":"3g.40gb",)",
                          R"("placement":{"start":4,"size":0})")),
       " entry 1", "placement.size", "0 is below 1"},
      {entry(absl::StrCat(ok_head, R"("profile":"3g.40gb",)",
                          R"("placement":{"start":4,"size":1.5})")),
       " entry 1", "placement.size", "is not an integer"},
      {entry(absl::StrCat(ok_head, good, R"(,"position":1)")), " entry 1",
       "group", "is missing (position is set)"},
      {entry(absl::StrCat(ok_head, good, R"(,"group":"group2")")), " entry 1",
       "position", "is missing"},
      {entry(absl::StrCat(ok_head, good, R"(,"group":"","position":1)")),
       " entry 1", "group", "is empty"},
      {entry(absl::StrCat(ok_head, good, R"(,"group":"g","position":-2)")),
       " entry 1", "position", "-2 is negative"},
      {entry(absl::StrCat(ok_head, good, R"(,"migUUID":"MIG-1")")), " entry 1",
       "gpuInstanceID", "is missing (migUUID, gpuInstanceID and"},
      {entry(absl::StrCat(ok_head, good,
                          R"(,"gpuInstanceID":1,"computeInstanceID":0)")),
       " entry 1", "migUUID", "is missing"},
      {entry(absl::StrCat(ok_head, good, R"(,"migUUID":"","gpuInstanceID":1,)",
                          R"("computeInstanceID":0)")),
       " entry 1", "migUUID", "is empty"},
      {entry(absl::StrCat(ok_head, good,
                          R"(,"migUUID":"MIG-1","gpuInstanceID":1,)",
                          R"("computeInstanceID":-1)")),
       " entry 1", "computeInstanceID", "-1 is negative"},
      {entry(absl::StrCat(R"("containerIndex":0,"deviceIndex":0,)",
                          R"("gpuUUID":"GPU-a",)", good)),
       " entry 1", "deviceIndex", "container 0 device 0 already has entry 0"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    Entries entries = base;
    absl::Status status = MergeHamiMigAllocations(c.text, entries);
    if (c.detail[0] == '\0') {
      EXPECT_OK(status);
      continue;
    }
    const std::string field =
        c.field[0] == '\0' ? "" : absl::StrCat(" field ", c.field, ": ");
    EXPECT_THAT(status, StatusIs(kInvalid,
                                 AllOf(HasSubstr(absl::StrCat(
                                           keys::kHamiMigAllocations, c.where)),
                                       HasSubstr(field), HasSubstr(c.detail))));
    // Nothing is merged when one entry is bad, even the good entry 0.
    EXPECT_EQ(entries, base);
  }
}

// --- Both dialects through the pod annotations
// --------------------------------

// The request MixedAllocation() answers.
PodRequest MixedRequest(Dialect dialect) {
  PodRequest request =
      MakePod("trainer", {GpuContainer("c0", 1, 0), GpuContainer("c1", 1, 0),
                          GpuContainer("c2", 0, 0), GpuContainer("c3", 2, 0)});
  request.containers[0].is_init = true;
  request.dialect = dialect;
  return request;
}

const absl::Time kNow = absl::FromUnixSeconds(1700000123);

TEST(MigAnnotationsTest, HamiRoundTripsEveryMigField) {
  PodAllocation allocation = MixedAllocation();
  // The action is the node agent's business; it does not travel.
  allocation.containers[0].devices[0].mig_action = MigAction::kCreate;
  const Annotations annotations =
      AllocationAnnotations(allocation, Dialect::kHami, kNow, 1);
  EXPECT_EQ(annotations.at(keys::kHamiAllocated), kMixedHamiRecord);
  EXPECT_EQ(annotations.at(keys::kHamiToAllocate), kMixedHamiRecord);
  EXPECT_EQ(annotations.at(keys::kHamiMigAllocations), kMixedHamiMig);
  auto read = AllocationFromAnnotations(MixedRequest(Dialect::kHami),
                                        annotations, "gpu-node-1", 1);
  ASSERT_OK(read);
  ASSERT_TRUE(read->has_value());
  allocation.containers[0].devices[0].mig_action = MigAction::kNone;
  EXPECT_EQ(**read, allocation);
}

TEST(MigAnnotationsTest, VolcanoRoundTripsWhatItsIdsCarry) {
  const PodAllocation allocation = MixedAllocation();
  const Annotations annotations =
      AllocationAnnotations(allocation, Dialect::kVolcano, kNow, 1);
  const std::string record =
      "GPU-b,NVIDIA,3000,50:;GPU-a[group2-0],NVIDIA,19968,28:"
      "GPU-c[3g.40gb-4],NVIDIA,40192,42:";
  EXPECT_EQ(annotations.at(keys::kVolcanoAllocation), record);
  EXPECT_EQ(annotations.at(keys::kVolcanoToAllocate), record);
  EXPECT_FALSE(annotations.contains(keys::kHamiMigAllocations));

  auto read = AllocationFromAnnotations(MixedRequest(Dialect::kVolcano),
                                        annotations, "gpu-node-1", 1);
  ASSERT_OK(read);
  ASSERT_TRUE(read->has_value());
  // Volcano carries no init containers, no size, no profile beside a group
  // and no runtime ids.
  PodAllocation want = allocation;
  want.containers[0].devices.clear();
  DeviceGrant& grouped = want.containers[3].devices[0];
  grouped.mig = MigSlot{.group = "group2", .position = 0};
  DeviceGrant& created = want.containers[3].devices[1];
  created = PlacedGrant("GPU-c", 40192, 42, "3g.40gb", 4, 0);
  EXPECT_EQ(**read, want);
  // And it writes back the same record.
  EXPECT_EQ(AllocationAnnotations(**read, Dialect::kVolcano, kNow, 1)
                .at(keys::kVolcanoAllocation),
            record);
}

TEST(MigAnnotationsTest, HamiGrantsWithoutEntryTakeTheRequestMode) {
  PodRequest request = MixedRequest(Dialect::kHami);
  request.mode = mig::kMode;
  auto read = AllocationFromAnnotations(
      request, {{keys::kHamiAllocated, kMixedHamiRecord}}, "n", 1);
  ASSERT_OK(read);
  ASSERT_TRUE(read->has_value());
  for (const ContainerAllocation& c : (*read)->containers) {
    for (const DeviceGrant& grant : c.devices) {
      EXPECT_EQ(grant.mode, mig::kMode);
      EXPECT_EQ(grant.mig, MigSlot{});
    }
  }
}

TEST(MigAnnotationsTest, BadMigAnnotationNamesThePodKeyEntryAndField) {
  const PodRequest request = MixedRequest(Dialect::kHami);
  Annotations annotations = {
      {keys::kHamiAllocated, kMixedHamiRecord},
      {keys::kHamiMigAllocations,
       R"([{"containerIndex":1,"deviceIndex":0,"gpuUUID":"GPU-b",)"
       R"("profile":"1g.10gb","placement":{"start":0,"size":0}}])"}};
  EXPECT_THAT(AllocationFromAnnotations(request, annotations, "n", 1),
              StatusIs(kInvalid, AllOf(HasSubstr("pod default/trainer"),
                                       HasSubstr(keys::kHamiMigAllocations),
                                       HasSubstr("entry 0"),
                                       HasSubstr("placement.size"))));
  // Entries index HAMi's record: without one they mean nothing.
  for (const char* record_key :
       {keys::kVolcanoAllocation, static_cast<const char*>(nullptr)}) {
    Annotations alone = {{keys::kHamiMigAllocations, kMixedHamiMig}};
    if (record_key != nullptr) {
      alone[record_key] = "GPU-b,NVIDIA,3000,50:;GPU-a,NVIDIA,1,0:";
    }
    EXPECT_THAT(AllocationFromAnnotations(request, alone, "n", 1),
                StatusIs(kInvalid, AllOf(HasSubstr("pod default/trainer"),
                                         HasSubstr(keys::kHamiMigAllocations),
                                         HasSubstr(keys::kHamiAllocated))));
  }
}

TEST(MigAnnotationsTest, HamiWithoutMigGrantsWritesNoMigAnnotation) {
  PodAllocation allocation;
  allocation.containers = {Container(0, false, {Grant("GPU-a", 1, 1)})};
  EXPECT_FALSE(AllocationAnnotations(allocation, Dialect::kHami, kNow, 1)
                   .contains(keys::kHamiMigAllocations));
}

}  // namespace
}  // namespace deviceshare
