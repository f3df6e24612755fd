#include "deviceshare/codec/hami_codec.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/codec/annotation_keys.h"
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
using ::testing::IsEmpty;
namespace goldens = ::deviceshare::testing::goldens;

// Every field HAMi's register carries set to a non-default value, so a field
// dropped by either direction shows up as a mismatch.
Gpu HamiGpu(int32_t index, std::string uuid, SharingMode mode, bool healthy) {
  Gpu gpu;
  gpu.uuid = std::move(uuid);
  gpu.index = index;
  gpu.model = "NVIDIA H200 NVL";
  gpu.memory_mib = 143771 - index;
  gpu.core_capacity = 100 * (index + 1);
  gpu.split_count = 7 + index;
  gpu.numa_node = index % 2;
  gpu.mode = mode;
  gpu.mig_capable = mode == mig::kMode;
  gpu.mps_capable = mode == mps::kMode;
  gpu.healthy = healthy;
  return gpu;
}

std::vector<Gpu> ThreeGpus() {
  return {HamiGpu(0, "GPU-0", hamicore::kMode, true),
          HamiGpu(1, "GPU-1", mig::kMode, false),
          HamiGpu(2, "GPU-2", mps::kMode, true)};
}

// JSON register.

TEST(HamiCodecTest, GoldenJsonRegisterDecodesEveryField) {
  auto gpus = DecodeHamiNodeRegisterJson(goldens::kHamiRegisterJson);
  ASSERT_OK(gpus);
  ASSERT_EQ(gpus->size(), 1u);
  const Gpu& gpu = (*gpus)[0];
  EXPECT_EQ(gpu.uuid, "GPU-0");
  EXPECT_EQ(gpu.index, 0);
  EXPECT_EQ(gpu.split_count, 10);
  EXPECT_EQ(gpu.memory_mib, 81920);
  EXPECT_EQ(gpu.core_capacity, 100);
  EXPECT_EQ(gpu.model, "NVIDIA-NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(gpu.numa_node, 0);
  EXPECT_EQ(gpu.mode, hamicore::kMode);
  EXPECT_TRUE(gpu.healthy);
  EXPECT_FALSE(gpu.mig_capable);
}

TEST(HamiCodecTest, JsonEncoderWritesGoOmitemptyFormOfTheGolden) {
  auto gpus = DecodeHamiNodeRegisterJson(goldens::kHamiRegisterJson);
  ASSERT_OK(gpus);
  const std::string encoded = EncodeHamiNodeRegisterJson(*gpus);
  // Not byte-identical to the formats.md example on purpose: HAMi's
  // DeviceInfo marks every field omitempty, so json.Marshal drops the zero
  // "index" and "numa" that the example spells out. We write what HAMi
  // writes.
  EXPECT_NE(encoded, goldens::kHamiRegisterJson);
  EXPECT_EQ(encoded,
            R"([{"id":"GPU-0","count":10,"devmem":81920,"devcore":100,)"
            R"("type":"NVIDIA-NVIDIA A100-SXM4-80GB","mode":"hami-core",)"
            R"("health":true}])");
  auto again = DecodeHamiNodeRegisterJson(encoded);
  ASSERT_OK(again);
  EXPECT_EQ(*again, *gpus);
}

TEST(HamiCodecTest, JsonOmitsZeroFieldsAndMissingHealthIsUnhealthy) {
  Gpu gpu = HamiGpu(3, "GPU-3", hamicore::kMode, /*healthy=*/false);
  gpu.numa_node = 1;
  gpu.model.clear();
  EXPECT_EQ(EncodeHamiNodeRegisterJson({gpu}),
            R"([{"id":"GPU-3","index":3,"count":10,"devmem":143768,)"
            R"("devcore":400,"numa":1,"mode":"hami-core"}])");
  auto gpus = DecodeHamiNodeRegisterJson(R"([{"id":"GPU-3","count":1}])");
  ASSERT_OK(gpus);
  ASSERT_EQ(gpus->size(), 1u);
  EXPECT_FALSE((*gpus)[0].healthy);
  EXPECT_EQ((*gpus)[0].mode, hamicore::kMode);
  EXPECT_EQ((*gpus)[0].core_capacity, 0);  // absent means zero, as in Go
  EXPECT_EQ(EncodeHamiNodeRegisterJson({}), "[]");
}

TEST(HamiCodecTest, JsonMigGoldenAndUnknownMembersAreSkipped) {
  const std::string text = absl::StrCat(
      R"([{"id":"GPU-0","count":7,"devmem":40960,"devcore":100,)",
      R"("type":"NVIDIA-A100-SXM4-40GB",)", goldens::kHamiMigFragment,
      R"(,"devicevendor":"NVIDIA","custominfo":{"a":[1,2]},)",
      R"("health":true}])");
  auto gpus = DecodeHamiNodeRegisterJson(text);
  ASSERT_OK(gpus);
  ASSERT_EQ(gpus->size(), 1u);
  const Gpu& gpu = (*gpus)[0];
  EXPECT_EQ(gpu.uuid, "GPU-0");
  EXPECT_EQ(gpu.split_count, 7);
  EXPECT_EQ(gpu.memory_mib, 40960);
  EXPECT_EQ(gpu.mode, mig::kMode);
  EXPECT_TRUE(gpu.mig_capable);
  EXPECT_TRUE(gpu.healthy);
}

TEST(HamiCodecTest, JsonRoundTripsManyGpus) {
  const std::vector<Gpu> gpus = ThreeGpus();
  const std::string text = EncodeHamiNodeRegisterJson(gpus);
  auto decoded = DecodeHamiNodeRegisterJson(text);
  ASSERT_OK(decoded);
  EXPECT_EQ(*decoded, gpus);
  EXPECT_EQ(EncodeHamiNodeRegisterJson(*decoded), text);
}

TEST(HamiCodecTest, JsonUnknownNumaIsReadAsZero) {
  auto gpus = DecodeHamiNodeRegisterJson(R"([{"id":"GPU-0","numa":-1}])");
  ASSERT_OK(gpus);
  EXPECT_EQ((*gpus)[0].numa_node, 0);
}

TEST(HamiCodecTest, MalformedJsonIsInvalidArgumentNamingAll) {
  struct Case {
    const char* text;
    std::vector<const char*> parts;  // substrings the message must hold
  };
  const Case cases[] = {
      {R"([{"id":"GPU-0",)", {"not valid JSON"}},
      {"", {"not valid JSON"}},
      {R"({"id":"GPU-0","count":10})", {"object", "want a list"}},
      {R"("GPU-0")", {"string", "want a list"}},
      {R"([{"id":"GPU-0"},["GPU-1"]])", {"entry 1", "device", "[\"GPU-1\"]"}},
      {R"([{"count":10}])", {"entry 0", "id", "empty"}},
      {R"([{"id":7}])", {"entry 0", "id: 7 is not a string"}},
      {R"([{"id":"GPU-0","count":"10"}])",
       {"entry 0", "count", "\"10\"", "not an integer"}},
      {R"([{"id":"GPU-0","devmem":1.5}])", {"entry 0", "devmem", "1.5"}},
      {R"([{"id":"GPU-0"},{"id":"GPU-1","devmem":-2}])",
       {"entry 1", "devmem", "-2", "negative"}},
      {R"([{"id":"GPU-0","count":2147483648}])",
       {"entry 0", "count", "2147483648", "out of range"}},
      {R"([{"id":"GPU-0","devmem":18446744073709551615}])",
       {"entry 0", "devmem", "18446744073709551615", "out of range"}},
      {R"([{"id":"GPU-0","devmem":99999999999999999999}])",
       {"entry 0", "devmem", "out of range"}},
      {R"([{"id":"GPU-0","numa":-2}])", {"entry 0", "numa", "-2"}},
      {R"([{"id":"GPU-0","health":"true"}])",
       {"entry 0", "health", "not a boolean"}},
      {R"([{"id":"GPU-0","mode":"V GPU"}])", {"entry 0", "mode", "V GPU"}},
      {R"([{"id":"GPU-0","type":null}])", {"entry 0", "type", "null"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    auto result = DecodeHamiNodeRegisterJson(c.text);
    EXPECT_THAT(result, StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr(keys::kHamiNodeRegister)));
    for (const char* part : c.parts) {
      EXPECT_THAT(result, StatusIs(absl::StatusCode::kInvalidArgument,
                                   HasSubstr(part)));
    }
  }
}

// Legacy register.

TEST(HamiCodecTest, GoldenLegacyRegisterDecodesEveryField) {
  auto gpus = DecodeHamiNodeRegisterLegacy(goldens::kHamiRegisterLegacy);
  ASSERT_OK(gpus);
  ASSERT_EQ(gpus->size(), 1u);
  const Gpu& gpu = (*gpus)[0];
  EXPECT_EQ(gpu.uuid, "GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec");
  EXPECT_EQ(gpu.split_count, 10);
  EXPECT_EQ(gpu.memory_mib, 32768);
  EXPECT_EQ(gpu.core_capacity, 100);
  EXPECT_EQ(gpu.model, "NVIDIA-Tesla V100-PCIE-32GB");
  EXPECT_EQ(gpu.numa_node, 0);
  EXPECT_TRUE(gpu.healthy);
  // The 7-field form has no index or mode: position and hami-core.
  EXPECT_EQ(gpu.index, 0);
  EXPECT_EQ(gpu.mode, hamicore::kMode);
  // The encoder always writes the 9-field form, so the golden comes back
  // with ",0,hami-core" appended rather than byte-identical.
  const std::string encoded = EncodeHamiNodeRegisterLegacy(*gpus);
  EXPECT_EQ(encoded,
            "GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec,10,32768,100,"
            "NVIDIA-Tesla V100-PCIE-32GB,0,true,0,hami-core:");
  auto again = DecodeHamiNodeRegisterLegacy(encoded);
  ASSERT_OK(again);
  EXPECT_EQ(*again, *gpus);
}

TEST(HamiCodecTest, LegacyShortFormIndexIsThePosition) {
  auto gpus = DecodeHamiNodeRegisterLegacy(
      "GPU-a,10,1024,100,T,0,true:GPU-b,10,2048,100,T,1,false:");
  ASSERT_OK(gpus);
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[0].index, 0);
  EXPECT_EQ((*gpus)[1].index, 1);
  EXPECT_EQ((*gpus)[1].numa_node, 1);
  EXPECT_FALSE((*gpus)[1].healthy);
}

// devices.go DecodeNodeDevices splits on ':' and skips empty pieces, so the
// last ':' may be missing.
TEST(HamiCodecTest, LegacyReadsAsHamiReadsIt) {
  auto gpus = DecodeHamiNodeRegisterLegacy(
      "GPU-a,10,1024,100,T,0,true::GPU-b,10,2048,100,T,1,false");
  ASSERT_OK(gpus);
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[1].uuid, "GPU-b");
  EXPECT_EQ((*gpus)[1].memory_mib, 2048);
}

TEST(HamiCodecTest, LegacyLongFormRoundTripsByteForByte) {
  const std::string text =
      "GPU-220d,10,6144,100,NVIDIA-NVIDIA GeForce RTX 2060,0,true,0,hami-core:"
      "GPU-9a1c,4,40960,200,NVIDIA-A100-SXM4-40GB,1,false,3,mig:";
  auto gpus = DecodeHamiNodeRegisterLegacy(text);
  ASSERT_OK(gpus);
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[1].index, 3);
  EXPECT_EQ((*gpus)[1].core_capacity, 200);
  EXPECT_EQ((*gpus)[1].mode, mig::kMode);
  EXPECT_EQ(EncodeHamiNodeRegisterLegacy(*gpus), text);

  const std::vector<Gpu> three = ThreeGpus();
  auto decoded =
      DecodeHamiNodeRegisterLegacy(EncodeHamiNodeRegisterLegacy(three));
  ASSERT_OK(decoded);
  EXPECT_EQ(*decoded, three);
}

TEST(HamiCodecTest, LegacyUnknownNumaIsReadAsZero) {
  // HAMi's node side maps sysfs numa_node -1 to 0; we read it the same way.
  auto gpus = DecodeHamiNodeRegisterLegacy("GPU-a,10,1024,100,T,-1,true:");
  ASSERT_OK(gpus);
  EXPECT_EQ((*gpus)[0].numa_node, 0);
}

TEST(HamiCodecTest, MalformedLegacyIsInvalidArgumentNamingAll) {
  struct Case {
    const char* text;
    const char* where;
    const char* field;
    const char* value;
  };
  const Case cases[] = {
      {"GPU-a,10,1024,100,T,0,true,0:", "entry 0", "numa,health[,index,mode]",
       "GPU-a,10,1024,100,T,0,true,0"},
      {"GPU-a,10,1024,100,T,0:", "entry 0", "has 6 fields", "GPU-a,10"},
      {"GPU-a,10,1024,100,T,0,true:GPU-b,10,1k,100,T,0,true:", "entry 1",
       "memMiB", "\"1k\""},
      {"GPU-a,-10,1024,100,T,0,true:", "entry 0", "split", "\"-10\""},
      {"GPU-a,10,1024,2147483648,T,0,true:", "entry 0", "devcore",
       "\"2147483648\""},
      {"GPU-a,10,1024,100,T,-2,true:", "entry 0", "numa", "\"-2\""},
      {"GPU-a,10,1024,100,T,0,1:", "entry 0", "health", "\"1\""},
      {",10,1024,100,T,0,true:", "entry 0", "uuid", "\"\""},
      {"GPU-a,10,1024,100,T,0,true,x,mig:", "entry 0", "index", "\"x\""},
      {"GPU-a,10,1024,100,T,0,true,0,Exclusive:", "entry 0", "mode",
       "\"Exclusive\""},
      // devices.go DecodeNodeDevices: "node annotation missing device
      // separator".
      {"GPU-a,10,1024,100,T,0,true", "", "has no ':'", "true"},
      {"GPU-a,10,1024,100,T,0,true:garbage:", "entry 1", "has 1 fields",
       "garbage"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_THAT(
        DecodeHamiNodeRegisterLegacy(c.text),
        StatusIs(absl::StatusCode::kInvalidArgument,
                 AllOf(HasSubstr(keys::kHamiNodeRegister), HasSubstr(c.where),
                       HasSubstr(c.field), HasSubstr(c.value))));
  }
}

TEST(HamiCodecTest, RegisterSniffsJsonOrLegacy) {
  auto json = DecodeHamiNodeRegister(
      absl::StrCat("\n  ", goldens::kHamiRegisterJson, "\n"));
  ASSERT_OK(json);
  EXPECT_EQ(*json, *DecodeHamiNodeRegisterJson(goldens::kHamiRegisterJson));
  auto legacy = DecodeHamiNodeRegister(goldens::kHamiRegisterLegacy);
  ASSERT_OK(legacy);
  EXPECT_EQ(*legacy,
            *DecodeHamiNodeRegisterLegacy(goldens::kHamiRegisterLegacy));
  // A JSON object is JSON of the wrong shape, not a legacy string.
  EXPECT_THAT(
      DecodeHamiNodeRegister(R"({"id":"GPU-0"})"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("want a list")));
  auto empty = DecodeHamiNodeRegister("");
  ASSERT_OK(empty);
  EXPECT_THAT(*empty, IsEmpty());
}

// Allocation.

TEST(HamiCodecTest, GoldenAllocationDecodesEveryFieldAndReencodes) {
  auto entries = DecodeHamiAllocation(goldens::kHamiAllocation);
  ASSERT_OK(entries);
  // Each entry ends with ';', so the golden is two containers, not three.
  EXPECT_THAT(*entries, ElementsAre(ElementsAre(Grant("GPU-aaa", 3000, 50)),
                                    ElementsAre(Grant("GPU-bbb", 4000, 60))));
  PodAllocation allocation;
  allocation.containers = {Container(0, false, (*entries)[0]),
                           Container(1, false, (*entries)[1])};
  EXPECT_EQ(EncodeHamiAllocation(allocation), goldens::kHamiAllocation);
}

TEST(HamiCodecTest, AllocationKeepsInitAndGpuLessContainersInOrder) {
  PodAllocation allocation;
  allocation.containers = {
      Container(0, /*is_init=*/true, {Grant("GPU-i", 1000, 10)}),
      Container(1, /*is_init=*/true, {}),
      Container(2, false, {Grant("GPU-a", 3000, 50), Grant("GPU-b", 3000, 50)}),
      Container(3, false, {}),
      Container(4, false, {Grant("GPU-a", 2000, 0)}),
  };
  const std::string text = EncodeHamiAllocation(allocation);
  EXPECT_EQ(text,
            "GPU-i,NVIDIA,1000,10:;;GPU-a,NVIDIA,3000,50:GPU-b,NVIDIA,3000,"
            "50:;;GPU-a,NVIDIA,2000,0:;");
  auto entries = DecodeHamiAllocation(text);
  ASSERT_OK(entries);
  ASSERT_EQ(entries->size(), allocation.containers.size());
  for (size_t i = 0; i < entries->size(); ++i) {
    EXPECT_EQ((*entries)[i], allocation.containers[i].devices) << i;
  }
  EXPECT_EQ(EncodeHamiAllocation(PodAllocation{}), "");
}

TEST(HamiCodecTest, AllocationEmptyEntriesAreEmptyContainers) {
  auto two = DecodeHamiAllocation(";;");
  ASSERT_OK(two);
  EXPECT_THAT(*two, ElementsAre(IsEmpty(), IsEmpty()));
  auto one = DecodeHamiAllocation(";");
  ASSERT_OK(one);
  EXPECT_THAT(*one, ElementsAre(IsEmpty()));
  auto none = DecodeHamiAllocation("");
  ASSERT_OK(none);
  EXPECT_THAT(*none, IsEmpty());
}

// What HAMi's DecodeContainerDevices / DecodePodDevices accept
// (pkg/device/devices.go): each row one grant of 1000 MiB and 10 cores in
// container 0.
TEST(HamiCodecTest, ReadsRecordsAsHamiReadsThem) {
  struct Case {
    const char* upstream;
    const char* text;
  };
  const Case cases[] = {
      {"a fifth field and more are ignored", "GPU-0,NVIDIA,1000,10,x,y:;"},
      {"the type column is not checked", "GPU-0,NVIDIA-A100,1000,10:;"},
      {"the last device without ':'", "GPU-0,NVIDIA,1000,10;"},
      {"the last container without ';'", "GPU-0,NVIDIA,1000,10:"},
      {"neither", "GPU-0,NVIDIA,1000,10"},
      {"a piece without ',' stands for nothing", "GPU-0,NVIDIA,1000,10:x:;"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.upstream, ": ", c.text));
    absl::StatusOr<std::vector<std::vector<DeviceGrant>>> read =
        DecodeHamiAllocation(c.text);
    ASSERT_OK(read);
    ASSERT_EQ(read->size(), 1);
    ASSERT_EQ((*read)[0].size(), 1);
    EXPECT_EQ((*read)[0][0].uuid, "GPU-0");
    EXPECT_EQ((*read)[0][0].memory_mib, 1000);
    EXPECT_EQ((*read)[0][0].cores, 10);
  }
  // Empty entries keep their place: HAMi's writers give every container
  // one (a pod's init container without GPUs first).
  absl::StatusOr<std::vector<std::vector<DeviceGrant>>> read =
      DecodeHamiAllocation(";GPU-0,NVIDIA,1000,10:;;");
  ASSERT_OK(read);
  ASSERT_EQ(read->size(), 3);
  EXPECT_TRUE((*read)[0].empty());
  EXPECT_EQ((*read)[1].size(), 1);
  EXPECT_TRUE((*read)[2].empty());
}

TEST(HamiCodecTest, MalformedAllocationIsInvalidArgumentNamingAll) {
  struct Case {
    const char* text;
    const char* where;
    const char* field;
    const char* value;
  };
  const Case cases[] = {
      {";GPU-bbb,NVIDIA,4k,60:;", "container 1 device 0", "memMiB", "\"4k\""},
      // HAMi would book -3000 MiB, freeing room that is not there
      // (docs/compatibility.md).
      {"GPU-aaa,NVIDIA,-3000,50:;", "container 0 device 0", "memMiB",
       "\"-3000\""},
      // scheduler_test.go Test_onAddPod_BadDeviceAnnotation.
      {"GPU-aaa,NVIDIA,3000:;", "container 0 device 0",
       "has 3 fields, want at least 4", "GPU-aaa,NVIDIA,3000"},
      {"GPU-aaa,NVIDIA,3000,2147483648:;", "container 0 device 0", "cores",
       "\"2147483648\""},
      {",NVIDIA,3000,50:;", "container 0 device 0", "uuid", "\"\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_THAT(
        DecodeHamiAllocation(c.text),
        StatusIs(absl::StatusCode::kInvalidArgument,
                 AllOf(HasSubstr(keys::kHamiAllocated), HasSubstr(c.where),
                       HasSubstr(c.field), HasSubstr(c.value))));
  }
  EXPECT_OK(DecodeHamiAllocation("GPU-aaa,NVIDIA,3000,50:;"));
}

}  // namespace
}  // namespace deviceshare
