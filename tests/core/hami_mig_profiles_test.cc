// HAMi's registered MIG catalogue on the wire: `migProfiles` of a
// hami.io/node-nvidia-register device (HAMi >= 2.10, devices.go MigProfile;
// device_test.go TestGetNodeDevices_MigProfilesFromNode), read onto
// Gpu::mig_profiles and written back in HAMi's form.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/codec/hami_codec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/format_goldens.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
namespace goldens = ::deviceshare::testing::goldens;

// One MIG device whose entry carries `profiles` (the migProfiles value).
std::string MigDevice(const std::string& profiles) {
  return absl::StrCat(
      R"([{"id":"GPU-0","count":7,"devmem":40960,"devcore":100,)"
      R"("type":"NVIDIA-A100-SXM4-40GB","mode":"mig","migProfiles":)",
      profiles, R"(,"health":true}])");
}

TEST(HamiMigProfilesTest, UpstreamRegistrationIsReadOntoTheGpu) {
  // device_test.go:2466: instanceCount and multiprocessorCount are not
  // HAMi's wire members; its decoder ignores them, so does ours.
  auto gpus = DecodeHamiNodeRegisterJson(
      MigDevice(R"([{"name":"1g.5gb","memoryMB":5120,"core":14,"sliceCount":1,)"
                R"("instanceCount":7,"multiprocessorCount":14,)"
                R"("placements":[{"start":6,"size":1}]}])"));
  ASSERT_OK(gpus);
  ASSERT_EQ(gpus->size(), 1u);
  EXPECT_THAT((*gpus)[0].mig_profiles,
              ElementsAre(RegisteredMigProfile{
                  "1g.5gb", 5120, 14, 1, {MigPlacement{6, 1}}}));
}

TEST(HamiMigProfilesTest, GoldenFragmentIsRead) {
  auto gpus = DecodeHamiNodeRegisterJson(
      absl::StrCat(R"([{"id":"GPU-0",)", goldens::kHamiMigFragment, "}]"));
  ASSERT_OK(gpus);
  ASSERT_EQ((*gpus)[0].mig_profiles.size(), 1u);
  EXPECT_EQ((*gpus)[0].mig_profiles[0].placements,
            (std::vector<MigPlacement>{{6, 1}}));
}

TEST(HamiMigProfilesTest, LenientWhereGoIs) {
  // Absent members are Go's zero values; null is an empty list.
  auto gpus = DecodeHamiNodeRegisterJson(MigDevice(
      R"([{"name":"2g.10gb","placements":null},)"
      R"({"name":"3g.20gb","memoryMB":20096,)"
      R"("placements":[{"size":4}]},)"
      R"({"name":"4g.20gb","memoryMB":null,"core":null,)"
      R"("sliceCount":null,"placements":[{"start":null,"size":4}]}])"));
  ASSERT_OK(gpus);
  EXPECT_THAT(
      (*gpus)[0].mig_profiles,
      ElementsAre(
          RegisteredMigProfile{"2g.10gb", 0, 0, 0, {}},
          RegisteredMigProfile{"3g.20gb", 20096, 0, 0, {MigPlacement{0, 4}}},
          RegisteredMigProfile{"4g.20gb", 0, 0, 0, {MigPlacement{0, 4}}}));
  EXPECT_THAT((*gpus)[0].mig_profiles_left_out, IsEmpty());
  auto none = DecodeHamiNodeRegisterJson(MigDevice("null"));
  ASSERT_OK(none);
  EXPECT_THAT((*none)[0].mig_profiles, IsEmpty());
}

TEST(HamiMigProfilesTest, EncoderWritesHamisFormAndRoundTrips) {
  Gpu gpu;
  gpu.uuid = "GPU-0";
  gpu.split_count = 7;
  gpu.memory_mib = 40960;
  gpu.core_capacity = 100;
  gpu.model = "NVIDIA-A100-SXM4-40GB";
  gpu.mode = SharingMode("mig");
  gpu.mig_capable = true;
  gpu.healthy = true;
  gpu.mig_profiles = {
      {"1g.5gb", 4864, 15, 1, {{6, 1}, {5, 1}, {4, 1}}},
      {"7g.40gb", 40192, 100, 7, {{0, 8}}},
      {"3g.20gb", 19968, 43, 3, {}},
  };
  const std::string text = EncodeHamiNodeRegisterJson({gpu});
  EXPECT_EQ(text,
            R"([{"id":"GPU-0","count":7,"devmem":40960,"devcore":100,)"
            R"("type":"NVIDIA-A100-SXM4-40GB","mode":"mig","migProfiles":[)"
            R"({"name":"1g.5gb","memoryMB":4864,"core":15,"sliceCount":1,)"
            R"("placements":[{"start":6,"size":1},{"start":5,"size":1},)"
            R"({"start":4,"size":1}]},)"
            R"({"name":"7g.40gb","memoryMB":40192,"core":100,"sliceCount":7,)"
            R"("placements":[{"start":0,"size":8}]},)"
            R"({"name":"3g.20gb","memoryMB":19968,"core":43,"sliceCount":3,)"
            R"("placements":null}],"health":true}])");
  auto decoded = DecodeHamiNodeRegisterJson(text);
  ASSERT_OK(decoded);
  EXPECT_EQ(*decoded, std::vector<Gpu>{gpu});
}

TEST(HamiMigProfilesTest, GpuWithoutProfilesWritesNoMember) {
  Gpu gpu;
  gpu.uuid = "GPU-0";
  gpu.mode = SharingMode("mig");
  EXPECT_EQ(EncodeHamiNodeRegisterJson({gpu}),
            R"([{"id":"GPU-0","count":10,"devcore":100,"mode":"mig",)"
            R"("health":true}])");
}

// What Go's encoding/json refuses -- a value not of the member's Go type
// -- refuses the whole registration, naming field and value: HAMi's
// scheduler could not decode the node either.
TEST(HamiMigProfilesTest, WhatGoRefusesRefusesTheNode) {
  struct Case {
    const char* profiles;
    std::vector<const char*> parts;  // substrings the message must hold
  };
  const Case cases[] = {
      {R"({"name":"1g.5gb"})", {"migProfiles", "not a JSON list"}},
      {R"(["1g.5gb"])", {"migProfiles[0]", "\"1g.5gb\"", "not a JSON object"}},
      {R"([{"name":7}])", {"migProfiles[0].name", "7", "not a string"}},
      {R"([{"name":"1g.5gb","memoryMB":"5gb"}])",
       {"migProfiles[0].memoryMB", "\"5gb\"", "not an integer"}},
      {R"([{"name":"1g.5gb","memoryMB":2147483648}])",
       {"migProfiles[0].memoryMB", "2147483648", "out of range"}},
      {R"([{"name":"1g.5gb","memoryMB":-2147483649}])",
       {"migProfiles[0].memoryMB", "-2147483649", "out of range"}},
      {R"([{"name":"1g.5gb","core":1.5}])",
       {"migProfiles[0].core", "1.5", "not an integer"}},
      {R"([{"name":"1g.5gb","sliceCount":-1}])",
       {"migProfiles[0].sliceCount", "-1", "out of range"}},
      {R"([{"name":"1g.5gb","placements":{"start":6}}])",
       {"migProfiles[0].placements", "not a JSON list"}},
      {R"([{"name":"1g.5gb","placements":[6]}])",
       {"migProfiles[0].placements[0]", "6", "not a JSON object"}},
      {R"([{"name":"1g.5gb","placements":[{"start":"6","size":1}]}])",
       {"migProfiles[0].placements[0].start", "\"6\"", "not an integer"}},
      {R"([{"name":"1g.5gb","placements":[{"start":-1,"size":1}]}])",
       {"migProfiles[0].placements[0].start", "-1", "out of range"}},
      {R"([{"name":"1g.5gb","placements":[{"start":0,"size":4294967296}]}])",
       {"migProfiles[0].placements[0].size", "4294967296", "out of range"}},
      // One entry Go refuses refuses the others with it.
      {R"([{"name":"1g.5gb"},{"name":"big","core":"x"}])",
       {"migProfiles[1].core", "\"x\"", "not an integer"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.profiles);
    auto result = DecodeHamiNodeRegisterJson(MigDevice(c.profiles));
    EXPECT_THAT(result, StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr(absl::StrCat(keys::kHamiNodeRegister,
                                                        " entry 0 field"))));
    for (const char* part : c.parts) {
      EXPECT_THAT(result, StatusIs(absl::StatusCode::kInvalidArgument,
                                   HasSubstr(part)));
    }
  }
}

// What Go accepts but no NVML report can hold leaves that profile out: the
// node is served with its other profiles, as HAMi serves it, and the
// reason names field and value.
TEST(HamiMigProfilesTest, UnusableProfileIsLeftOutAndTheNodeServed) {
  struct Case {
    const char* profile;             // migProfiles[1], after a good one
    std::vector<const char*> parts;  // substrings the reason must hold
  };
  const Case cases[] = {
      {R"({"memoryMB":5120})", {"migProfiles[1].name", "not a MIG profile"}},
      {R"({"name":"big"})",
       {"migProfiles[1].name", "\"big\"", "not a MIG profile"}},
      {"null", {"migProfiles[1].name", "not a MIG profile"}},
      {R"({"name":"1g.5gb","memoryMB":-1})",
       {"migProfiles[1].memoryMB", "-1", "negative"}},
      {R"({"name":"1g.5gb","core":-1})",
       {"migProfiles[1].core", "-1", "negative"}},
      {R"({"name":"1g.5gb","sliceCount":4294967295})",
       {"migProfiles[1].sliceCount", "4294967295", "out of range"}},
      {R"({"name":"1g.5gb","placements":[{"start":6}]})",
       {"migProfiles[1].placements[0].size", "not positive"}},
      {R"({"name":"1g.5gb","placements":[{"start":6,"size":0}]})",
       {"migProfiles[1].placements[0].size", "0", "not positive"}},
      {R"({"name":"1g.5gb","placements":[null]})",
       {"migProfiles[1].placements[0]", "no placement"}},
      {R"({"name":"1g.5gb","placements":[{"start":31,"size":2}]})",
       {"migProfiles[1].placements[0]", "ends past memory slice 32"}},
      {R"({"name":"1g.5gb","placements":[{"start":40,"size":1}]})",
       {"migProfiles[1].placements[0]", "40", "ends past memory slice 32"}},
      {R"({"name":"1g.5gb","placements":[{"start":6,"size":1},)"
       R"({"start":4,"size":2}]})",
       {"migProfiles[1].placements[1].size", "2", "differs", "[0].size 1"}},
      {R"({"name":"7g.40gb"})",
       {"migProfiles[1].name", "7g.40gb", "registered twice"}},
  };
  const RegisteredMigProfile good{"7g.40gb", 40192, 100, 7, {{0, 8}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.profile);
    auto gpus = DecodeHamiNodeRegisterJson(MigDevice(absl::StrCat(
        R"([{"name":"7g.40gb","memoryMB":40192,"core":100,"sliceCount":7,)"
        R"("placements":[{"start":0,"size":8}]},)",
        c.profile, R"(,{"name":"3g.20gb","sliceCount":3}])")));
    ASSERT_OK(gpus);
    const Gpu& gpu = (*gpus)[0];
    EXPECT_TRUE(gpu.healthy);
    EXPECT_THAT(
        gpu.mig_profiles,
        ElementsAre(good, RegisteredMigProfile{"3g.20gb", 0, 0, 3, {}}));
    ASSERT_EQ(gpu.mig_profiles_left_out.size(), 1u);
    const std::string& reason = gpu.mig_profiles_left_out[0];
    EXPECT_THAT(reason, HasSubstr(absl::StrCat(keys::kHamiNodeRegister,
                                               " entry 0 field")));
    for (const char* part : c.parts) EXPECT_THAT(reason, HasSubstr(part));
  }
}

TEST(HamiMigProfilesTest, LeftOutProfilesAreNotWrittenBack) {
  auto gpus = DecodeHamiNodeRegisterJson(
      MigDevice(R"([{"name":"big"},{"name":"1g.5gb","memoryMB":-1}])"));
  ASSERT_OK(gpus);
  EXPECT_THAT((*gpus)[0].mig_profiles, IsEmpty());
  EXPECT_EQ((*gpus)[0].mig_profiles_left_out.size(), 2u);
  // Nothing usable is left, so the member is not written.
  EXPECT_THAT(EncodeHamiNodeRegisterJson(*gpus),
              ::testing::Not(HasSubstr("migProfiles")));
}

}  // namespace
}  // namespace deviceshare
