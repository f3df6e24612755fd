// D12: the node agent on a GPU in MIG mode registers, in HAMi's dialect,
// the MIG profiles of the config's migProfileAllowlist entry for its model
// as `migProfiles` with NVML's placements, as HAMi's device plugin does
// (register.go discoverMigProfiles), and the scheduler reads them back to
// the same catalogue. Through the fake
// libnvidia-ml.so.1 (tests/fake_nvml), so discovery is the real NVML path.
#include <memory>
#include <string>
#include <vector>

#include "deviceshare/agent/node_registrar.h"
#include "deviceshare/agent/nvml_source.h"
#include "deviceshare/codec/hami_codec.h"
#include "deviceshare/hamicore/hamicore_backend.h"
#include "deviceshare/mig/mig_backend.h"
#include "deviceshare/mig/mig_config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/fake_nvml_env.h"
#include "testing/status_matchers.h"

namespace deviceshare::agent {
namespace {

using ::deviceshare::testing::FakeNvmlEnv;
using ::testing::ElementsAre;

constexpr char kLibrary[] = DEVICESHARE_FAKE_NVML_LIB;

// An H100-80GB with MIG on and one with MIG off.
constexpr char kMigGpus[] = R"(gpus:
- {uuid: GPU-mig, model: NVIDIA H100 80GB HBM3, memory_mib: 81559,
   pci_device_id: 0x2330, mig_capable: true, mig_mode: true}
- {uuid: GPU-off, model: NVIDIA H100 80GB HBM3, memory_mib: 81559,
   pci_device_id: 0x2330, mig_capable: true, mig_mode: false}
)";

// HAMi's nvidia.migProfileAllowlist, as the agent's config gives it.
using Allowlist = std::vector<mig::MigProfileAllowlist>;

class MigRegistrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto source = OpenNvmlSource(env_.Options(kLibrary));
    ASSERT_OK(source);
    auto discovered = (*source)->Discover();
    ASSERT_OK(discovered);
    discovered_ = *std::move(discovered);
    ASSERT_EQ(discovered_.size(), 2u);
  }

  std::vector<Gpu> Register(const Allowlist& allowlist) {
    auto registered =
        RegisteredGpus(discovered_, DeviceConfig{}, hamicore::kMode, allowlist);
    EXPECT_OK(registered);
    return registered.ok() ? *std::move(registered) : std::vector<Gpu>{};
  }

  FakeNvmlEnv env_{kMigGpus};
  std::vector<DiscoveredGpu> discovered_;
};

std::vector<std::string> Names(const Gpu& gpu) {
  std::vector<std::string> names;
  for (const RegisteredMigProfile& profile : gpu.mig_profiles) {
    names.push_back(profile.name);
  }
  return names;
}

TEST_F(MigRegistrationTest, AllowlistedProfilesInItsOrderWithPlacements) {
  const std::vector<Gpu> gpus =
      Register({{{"H100"}, {"3g.40gb", "1g.10gb", "7g.80gb"}}});
  ASSERT_EQ(gpus.size(), 2u);
  // Only the entry's profiles, in its order (NVML's own order is 1g, 3g,
  // 7g), with NVML's instance counts; the core share is ceil(SMs x 100 /
  // 132), the 7g's SMs.
  ASSERT_THAT(Names(gpus[0]), ElementsAre("3g.40gb", "1g.10gb", "7g.80gb"));
  EXPECT_EQ(gpus[0].mig_profiles[0].instance_count, 2);
  EXPECT_EQ(gpus[0].mig_profiles[1].instance_count, 7);
  EXPECT_EQ(gpus[0].mig_profiles[2].instance_count, 1);
  // HAMi's count for a MIG GPU: its most instances of one profile.
  EXPECT_EQ(gpus[0].split_count, 7);

  const nlohmann::json list = nlohmann::json::parse(
      RegistrationValue(gpus, Dialect::kHami, /*volcano_memory_factor=*/1));
  ASSERT_EQ(list.size(), 2u);
  const nlohmann::json& mig = list[0];
  EXPECT_EQ(mig["mode"], "mig");
  EXPECT_EQ(mig["count"], 7);
  ASSERT_EQ(mig["migProfiles"].size(), 3u) << mig.dump();
  // instanceCount stays off the wire (HAMi's `json:"-"`).
  EXPECT_EQ(mig["migProfiles"][0], nlohmann::json::parse(R"(
      {"name":"3g.40gb","memoryMB":40448,"core":46,"sliceCount":3,
       "placements":[{"start":0,"size":4},{"start":4,"size":4}]})"));
  EXPECT_EQ(mig["migProfiles"][1], nlohmann::json::parse(R"(
      {"name":"1g.10gb","memoryMB":9984,"core":13,"sliceCount":1,
       "placements":[{"start":0,"size":1},{"start":1,"size":1},
                     {"start":2,"size":1},{"start":3,"size":1},
                     {"start":4,"size":1},{"start":5,"size":1},
                     {"start":6,"size":1}]})"));
  EXPECT_EQ(mig["migProfiles"][2], nlohmann::json::parse(R"(
      {"name":"7g.80gb","memoryMB":81152,"core":100,"sliceCount":7,
       "placements":[{"start":0,"size":8}]})"));
  // A GPU not in MIG mode registers none, and keeps its split count.
  EXPECT_FALSE(list[1].contains("migProfiles")) << list[1].dump();
  EXPECT_EQ(gpus[1].split_count, DeviceConfig{}.device_split_count);
  // Volcano's registration string has no place for them.
  EXPECT_THAT(RegistrationValue(gpus, Dialect::kVolcano, 1),
              ::testing::Not(::testing::HasSubstr("1g.10gb")));
}

TEST_F(MigRegistrationTest, FirstEntryNamingTheModelDecides) {
  // Models match a case-insensitive substring of the registered type; the
  // first entry that matches is the only one read.
  const std::vector<Gpu> gpus = Register({{{"A100"}, {"7g.40gb"}},
                                          {{"h100 80gb"}, {"2g.20gb"}},
                                          {{"H100"}, {"7g.80gb"}}});
  EXPECT_THAT(Names(gpus[0]), ElementsAre("2g.20gb"));
  EXPECT_EQ(gpus[0].split_count, 3);
}

TEST_F(MigRegistrationTest, NameStandsForItsSliceCountsProfile) {
  // HAMi looks an allowlisted name up by the slices before its '.'
  // (GPU_INSTANCE_PROFILE_1_SLICE for any "1g.*"), registers it under the
  // allowlisted name, and skips slices its table lacks ("5g").
  const std::vector<Gpu> gpus =
      Register({{{"H100"}, {"1g.20gb", "5g.50gb", "1g.10gb+me"}}});
  ASSERT_THAT(Names(gpus[0]), ElementsAre("1g.20gb", "1g.10gb+me"));
  for (const RegisteredMigProfile& profile : gpus[0].mig_profiles) {
    EXPECT_EQ(profile.memory_mib, 9984) << profile.name;
    EXPECT_EQ(profile.instance_count, 7) << profile.name;
    EXPECT_EQ(profile.placements.size(), 7u) << profile.name;
  }
}

TEST_F(MigRegistrationTest, NoEntryForTheModelRegistersNone) {
  for (const Allowlist& allowlist :
       {Allowlist{}, Allowlist{{{"A100", "A30"}, {"1g.10gb"}}}}) {
    const std::vector<Gpu> gpus = Register(allowlist);
    ASSERT_EQ(gpus.size(), 2u);
    // HAMi's plugin would leave the GPU out; ours stays, without profiles
    // (node_registrar.h), and with the config's split count.
    EXPECT_EQ(gpus[0].mode, mig::kMode);
    EXPECT_TRUE(gpus[0].mig_profiles.empty());
    EXPECT_EQ(gpus[0].split_count, DeviceConfig{}.device_split_count);
    EXPECT_FALSE(
        nlohmann::json::parse(RegistrationValue(gpus, Dialect::kHami, 1))[0]
            .contains("migProfiles"));
  }
  // The overload without an allowlist is the same.
  auto plain = RegisteredGpus(discovered_, DeviceConfig{}, hamicore::kMode);
  ASSERT_OK(plain);
  EXPECT_TRUE((*plain)[0].mig_profiles.empty());
}

TEST_F(MigRegistrationTest, SchedulerReadsBackTheSameCatalogue) {
  const std::vector<Gpu> gpus =
      Register({{{"H100"}, {"1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb"}}});
  const std::string value = RegistrationValue(gpus, Dialect::kHami, 1);
  auto decoded = DecodeHamiNodeRegisterJson(value);
  ASSERT_OK(decoded);
  ASSERT_EQ(decoded->size(), 2u);
  // Everything but the instance counts, which are not on the wire.
  std::vector<RegisteredMigProfile> sent = gpus[0].mig_profiles;
  for (RegisteredMigProfile& profile : sent) profile.instance_count = 0;
  EXPECT_EQ((*decoded)[0].mig_profiles, sent);
  EXPECT_TRUE((*decoded)[0].mig_profiles_left_out.empty());
  EXPECT_TRUE((*decoded)[1].mig_profiles.empty());
  // And what the agent registers, encoded again, is byte for byte the same.
  EXPECT_EQ(EncodeHamiNodeRegisterJson(*decoded), value);
}

}  // namespace
}  // namespace deviceshare::agent
