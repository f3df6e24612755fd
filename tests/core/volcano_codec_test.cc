#include "deviceshare/codec/volcano_codec.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/codec/dialect_modes.h"
#include "deviceshare/hamicore/hamicore_backend.h"
#include "deviceshare/mig/mig_backend.h"
#include "deviceshare/mps/mps_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/format_goldens.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::Container;
using ::deviceshare::testing::Grant;
using ::deviceshare::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace goldens = ::deviceshare::testing::goldens;

// What the Volcano format can carry: index = position, core capacity 100,
// NUMA 0, capability bits derived from the mode.
Gpu VolcanoGpu(int32_t index, std::string uuid, int64_t memory_mib,
               SharingMode mode, bool healthy) {
  Gpu gpu;
  gpu.index = index;
  gpu.uuid = std::move(uuid);
  gpu.model = "NVIDIA-NVIDIA H100 80GB HBM3";
  gpu.memory_mib = memory_mib;
  gpu.split_count = 4 + index;
  gpu.mode = mode;
  gpu.mig_capable = mode == mig::kMode;
  gpu.mps_capable = mode == mps::kMode;
  gpu.healthy = healthy;
  return gpu;
}

TEST(VolcanoCodecTest, GoldenNodeRegisterDecodesEveryFieldAndReencodes) {
  auto gpus = DecodeVolcanoNodeRegister(goldens::kVolcanoRegister);
  ASSERT_OK(gpus);
  ASSERT_EQ(gpus->size(), 1u);
  const Gpu& gpu = (*gpus)[0];
  EXPECT_EQ(gpu.uuid, "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448");
  EXPECT_EQ(gpu.index, 0);
  EXPECT_EQ(gpu.split_count, 10);
  EXPECT_EQ(gpu.memory_mib, 81920);
  EXPECT_EQ(gpu.model, "NVIDIA-NVIDIA A100-SXM4-80GB");
  EXPECT_TRUE(gpu.healthy);
  EXPECT_EQ(gpu.mode, mig::kMode);
  EXPECT_TRUE(gpu.mig_capable);
  EXPECT_FALSE(gpu.mps_capable);
  EXPECT_EQ(gpu.core_capacity, 100);
  EXPECT_EQ(gpu.numa_node, 0);
  EXPECT_EQ(EncodeVolcanoNodeRegister(*gpus), goldens::kVolcanoRegister);
}

TEST(VolcanoCodecTest, GoldenAllocationDecodesEveryFieldAndReencodes) {
  auto entries = DecodeVolcanoAllocation(goldens::kVolcanoAllocation);
  ASSERT_OK(entries);
  // Grants carry gpu_index -1 and mode hami-core: the string has neither.
  EXPECT_THAT(*entries, ElementsAre(ElementsAre(Grant("GPU-a", 3000, 50),
                                                Grant("GPU-b", 3000, 50)),
                                    ElementsAre(Grant("GPU-c", 2000, 0))));

  PodAllocation allocation;
  allocation.containers = {Container(0, false, (*entries)[0]),
                           Container(1, false, (*entries)[1])};
  EXPECT_EQ(EncodeVolcanoAllocation(allocation), goldens::kVolcanoAllocation);
}

TEST(VolcanoCodecTest, GoldenMigIdKeepsThePhysicalUuidAndMarksMig) {
  auto entries = DecodeVolcanoAllocation(goldens::kVolcanoMigAllocation);
  ASSERT_OK(entries);
  DeviceGrant want = Grant("GPU-a", 10240, 0);
  want.mode = mig::kMode;
  want.mig.group = "group2";
  want.mig.position = 3;
  // Re-encoding and the other MIG cases: mig_codec_test.cc.
  EXPECT_THAT(*entries, ElementsAre(ElementsAre(want)));
}

TEST(VolcanoCodecTest, NodeRegisterRoundTripsManyGpus) {
  const std::vector<Gpu> gpus = {
      VolcanoGpu(0, "GPU-0", 81920, hamicore::kMode, true),
      VolcanoGpu(1, "GPU-1", 40960, mig::kMode, false),
      VolcanoGpu(2, "GPU-2", 24576, mps::kMode, true),
  };
  const std::string text = EncodeVolcanoNodeRegister(gpus);
  EXPECT_EQ(text,
            "GPU-0,4,81920,NVIDIA-NVIDIA H100 80GB HBM3,true,hami-core:"
            "GPU-1,5,40960,NVIDIA-NVIDIA H100 80GB HBM3,false,mig:"
            "GPU-2,6,24576,NVIDIA-NVIDIA H100 80GB HBM3,true,mps:");
  auto decoded = DecodeVolcanoNodeRegister(text);
  ASSERT_OK(decoded);
  EXPECT_EQ(*decoded, gpus);
  EXPECT_EQ(EncodeVolcanoNodeRegister(*decoded), text);
}

TEST(VolcanoCodecTest, EmptyTextsAreEmptyLists) {
  EXPECT_EQ(EncodeVolcanoNodeRegister({}), "");
  EXPECT_EQ(EncodeVolcanoAllocation(PodAllocation{}), "");
  auto gpus = DecodeVolcanoNodeRegister("");
  ASSERT_OK(gpus);
  EXPECT_TRUE(gpus->empty());
  auto entries = DecodeVolcanoAllocation("");
  ASSERT_OK(entries);
  EXPECT_TRUE(entries->empty());
}

TEST(VolcanoCodecTest, AllocationWritesOnlyAppContainersWithDevices) {
  PodAllocation allocation;
  allocation.containers = {
      Container(0, /*is_init=*/true, {Grant("GPU-i", 1000, 10)}),
      Container(1, false, {Grant("GPU-a", 3000, 50), Grant("GPU-b", 3000, 50)}),
      Container(2, false, {}),
      Container(3, false, {Grant("GPU-a", 2000, 0)}),
  };
  const std::string text = EncodeVolcanoAllocation(allocation);
  EXPECT_EQ(text,
            "GPU-a,NVIDIA,3000,50:GPU-b,NVIDIA,3000,50:;GPU-a,NVIDIA,2000,0:");
  auto entries = DecodeVolcanoAllocation(text);
  ASSERT_OK(entries);
  EXPECT_THAT(*entries, ElementsAre(allocation.containers[1].devices,
                                    allocation.containers[3].devices));
}

TEST(VolcanoCodecTest, AllocationAcceptsEntriesEmptiedByTheNodePlugin) {
  // The node plugin empties each served container in devices-to-allocate.
  auto entries = DecodeVolcanoAllocation(";GPU-c,NVIDIA,2000,0:");
  ASSERT_OK(entries);
  EXPECT_THAT(*entries,
              ElementsAre(ElementsAre(), ElementsAre(Grant("GPU-c", 2000, 0))));
}

struct BadInput {
  const char* text;
  const char* where;  // the entry / position named in the message
  const char* field;
  const char* value;
};

TEST(VolcanoCodecTest, MalformedNodeRegisterIsInvalidArgumentNamingAll) {
  const BadInput cases[] = {
      {"GPU-0,10,81920,T,true:", "entry 0", "UUID,split,memMiB,type", "T,true"},
      {"GPU-0,10,8x,T,true,mig:", "entry 0", "memMiB", "\"8x\""},
      {"GPU-0,10,1,T,true,mig:GPU-1,-1,1,T,true,mig:", "entry 1", "split",
       "\"-1\""},
      {"GPU-0,2147483648,1,T,true,mig:", "entry 0", "split", "\"2147483648\""},
      {"GPU-0,1,9223372036854775808,T,true,mig:", "entry 0", "memMiB",
       "\"9223372036854775808\""},
      {",10,81920,T,true,mig:", "entry 0", "uuid", "\"\""},
      {"GPU-0,10,81920,T,yes,mig:", "entry 0", "health", "\"yes\""},
      {"GPU-0,10,81920,T,TRUE,mig:", "entry 0", "health", "\"TRUE\""},
      {"GPU-0,10,81920,T,true,VGPU:", "entry 0", "mode", "\"VGPU\""},
      {"GPU-0,10,,T,true,mig:", "entry 0", "memMiB", "\"\""},
      {"GPU-0,10,81920,T,true,mig", "", "has no ':'", "mig"},
  };
  for (const BadInput& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_THAT(DecodeVolcanoNodeRegister(c.text),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(HasSubstr(keys::kVolcanoNodeRegister),
                               HasSubstr(c.where), HasSubstr(c.field),
                               HasSubstr(c.value))));
  }
}

// utils.go decodeNodeDevices: split on ':', pieces without ',' skipped.
TEST(VolcanoCodecTest, NodeRegisterReadsAsVolcanoReadsIt) {
  auto gpus = DecodeVolcanoNodeRegister(
      "GPU-0,10,81920,T,true,mig::GPU-1,4,1024,T,false,hami-core");
  ASSERT_OK(gpus);
  ASSERT_EQ(gpus->size(), 2);
  EXPECT_EQ((*gpus)[0].uuid, "GPU-0");
  EXPECT_EQ((*gpus)[1].uuid, "GPU-1");
  EXPECT_EQ((*gpus)[1].memory_mib, 1024);
  auto stray = DecodeVolcanoNodeRegister("GPU-0,10,81920,T,true,mig:x:");
  ASSERT_OK(stray);
  EXPECT_EQ(stray->size(), 1);
}

// utils.go decodeContainerDevices / DecodePodDevices, and the rows of
// utils_test.go and device_info_test.go that restate them
// (docs/reference/upstream-cases.md F14-F19).
TEST(VolcanoCodecTest, AllocationReadsAsVolcanoReadsIt) {
  struct Case {
    const char* upstream;
    const char* text;
  };
  const Case cases[] = {
      {"device_info_test TestAddResource: no ':' nor ';'",
       "GPU-a,NVIDIA,3000,50"},
      {"one container with a trailing ';'", "GPU-a,NVIDIA,3000,50:;"},
      {"a fifth field is ignored", "GPU-a,NVIDIA,3000,50,x:"},
      {"the type column is not checked", "GPU-a,AMD,3000,50:"},
      {"utils_test decode: a bad entry is skipped, the valid one kept",
       "GPU-a,NVIDIA,-5,30:GPU-a,NVIDIA,3000,50:"},
      {"too few fields: skipped", "GPU-a,NVIDIA,3000:GPU-a,NVIDIA,3000,50:"},
      {"non-numeric memory: skipped",
       "GPU-a,NVIDIA,3000,50:GPU-b,NVIDIA,lots,50:"},
      {"negative cores: skipped", "GPU-a,NVIDIA,3000,50:GPU-b,NVIDIA,1,-5:"},
      {"memory above 64 bits: skipped",
       "GPU-b,NVIDIA,99999999999999999999,1:GPU-a,NVIDIA,3000,50:"},
      {"an empty uuid: skipped", ",NVIDIA,3000,50:GPU-a,NVIDIA,3000,50:"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.upstream, ": ", c.text));
    auto entries = DecodeVolcanoAllocation(c.text);
    ASSERT_OK(entries);
    ASSERT_GE(entries->size(), 1);
    EXPECT_THAT((*entries)[0], ElementsAre(Grant("GPU-a", 3000, 50)));
  }
  // A deliberate difference (docs/compatibility.md row 13): a device whose
  // MIG id does not read is kept as a MIG grant on the GPU it names, with
  // no slot, which holds that GPU whole; Volcano skips it and hands its
  // instance out again.
  auto mig = DecodeVolcanoAllocation(
      "GPU-a[group2-3,NVIDIA,1,0:GPU-a,NVIDIA,3000,50:");
  ASSERT_OK(mig);
  ASSERT_EQ(mig->size(), 1u);
  ASSERT_EQ((*mig)[0].size(), 2u);
  const DeviceGrant& held = (*mig)[0][0];
  EXPECT_EQ(held.uuid, "GPU-a");
  EXPECT_EQ(held.mode, dialect::kMigMode);
  EXPECT_FALSE(held.has_partition());
  EXPECT_EQ(held.memory_mib, 1);
  EXPECT_EQ((*mig)[0][1], Grant("GPU-a", 3000, 50));
  // Cores above 100 fill the GPU either way.
  auto over = DecodeVolcanoAllocation("GPU-a,NVIDIA,3000,150:");
  ASSERT_OK(over);
  EXPECT_THAT(*over, ElementsAre(ElementsAre(Grant("GPU-a", 3000, 100))));
}

// gpuMemoryFactor: Volcano's strings count units of that many MiB.
TEST(VolcanoCodecTest, MemoryFactorScalesBothStrings) {
  auto gpus = DecodeVolcanoNodeRegister("GPU-0,4,8192,T,true,hami-core:", 2);
  ASSERT_OK(gpus);
  EXPECT_EQ((*gpus)[0].memory_mib, 16384);
  EXPECT_EQ(EncodeVolcanoNodeRegister(*gpus, 2),
            "GPU-0,4,8192,T,true,hami-core:");
  auto entries = DecodeVolcanoAllocation("GPU-0,NVIDIA,3000,25:", 2);
  ASSERT_OK(entries);
  EXPECT_THAT(*entries, ElementsAre(ElementsAre(Grant("GPU-0", 6000, 25))));
  // A share that is not a whole number of units is written rounded up.
  PodAllocation allocation;
  allocation.containers.push_back(
      Container(0, false, {Grant("GPU-0", 6001, 25)}));
  EXPECT_EQ(EncodeVolcanoAllocation(allocation, 2), "GPU-0,NVIDIA,3001,25:");
  EXPECT_THAT(
      DecodeVolcanoNodeRegister("GPU-0,4,9223372036854775807,T,true,mig:", 2),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("memMiB"), HasSubstr("gpuMemoryFactor 2"))));
}

// Volcano writes the request's memory and cores for a MIG instance it chose
// (utils.go encodePodDevices; mig_test.go:37 TestFindMatch "Match 1g.10gb and
// available", upstream-cases.md row G1), not the instance's 9728/14; under
// gpuMemoryFactor 2 the 12288 MiB asked are 6144 units (row G13).
TEST(VolcanoCodecTest, MigGrantThatKnowsItsAskIsWrittenWithIt) {
  DeviceGrant grant = Grant("GPU-a", 9728, 14);
  grant.mode = SharingMode("mig");
  grant.mig = MigSlot{.profile = "1g.10gb",
                      .start = 0,
                      .size = 1,
                      .group = "group1",
                      .position = 0};
  grant.mig.asked_memory_mib = 10;
  grant.mig.asked_cores = 0;
  PodAllocation allocation;
  allocation.containers.push_back(Container(0, false, {grant}));
  EXPECT_EQ(EncodeVolcanoAllocation(allocation),
            "GPU-a[group1-0],NVIDIA,10,0:");
  grant.memory_mib = 19968;
  grant.mig.group = "group2";
  grant.mig.asked_memory_mib = 12288;
  grant.mig.asked_cores = 50;
  allocation.containers[0].devices = {grant};
  EXPECT_EQ(EncodeVolcanoAllocation(allocation, 2),
            "GPU-a[group2-0],NVIDIA,6144,50:");
  // A grant that does not know its ask (read back) writes what it carries.
  grant.mig.asked_memory_mib = -1;
  grant.mig.asked_cores = -1;
  allocation.containers[0].devices = {grant};
  EXPECT_EQ(EncodeVolcanoAllocation(allocation),
            "GPU-a[group2-0],NVIDIA,19968,14:");
}

TEST(VolcanoCodecTest, SkippedDevicesAreReportedNamingFieldAndValue) {
  const BadInput cases[] = {
      {"GPU-a,NVIDIA,3000", "container 0 device 0", "UUID,NVIDIA",
       "GPU-a,NVIDIA,3000"},
      {"GPU-a,NVIDIA,3000,50:;GPU-b,NVIDIA,lots,50:", "container 1 device 0",
       "memMiB", "\"lots\""},
      {"GPU-a,NVIDIA,3000,50:GPU-b,NVIDIA,3000,-5:", "container 0 device 1",
       "cores", "\"-5\""},
      {"GPU-a,NVIDIA,3000,4294967296:", "container 0 device 0", "cores",
       "\"4294967296\""},
      {",NVIDIA,3000,50:", "container 0 device 0", "uuid", "\"\""},
      {"[g1-1],NVIDIA,1,0:", "container 0 device 0", "uuid", "\"[g1-1]\""},
  };
  for (const BadInput& c : cases) {
    SCOPED_TRACE(c.text);
    std::vector<absl::Status> skipped;
    ASSERT_OK(DecodeVolcanoAllocation(c.text, 1, &skipped));
    ASSERT_EQ(skipped.size(), 1);
    EXPECT_THAT(
        skipped[0],
        StatusIs(absl::StatusCode::kInvalidArgument,
                 AllOf(HasSubstr(keys::kVolcanoAllocation), HasSubstr(c.where),
                       HasSubstr(c.field), HasSubstr(c.value))));
  }
}

}  // namespace
}  // namespace deviceshare
