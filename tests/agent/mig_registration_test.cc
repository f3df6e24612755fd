// D12: the node agent on a GPU in MIG mode registers, in HAMi's dialect,
// the MIG profiles NVML reports as `migProfiles` with their placements,
// as HAMi's device plugin does (register.go discoverMigProfiles), and the
// scheduler reads them back to the same catalogue. Through the fake
// libnvidia-ml.so.1 (tests/fake_nvml), so discovery is the real NVML path.
#include <memory>
#include <string>
#include <vector>

#include "deviceshare/agent/node_registrar.h"
#include "deviceshare/agent/nvml_source.h"
#include "deviceshare/codec/hami_codec.h"
#include "deviceshare/hamicore/hamicore_backend.h"
#include "deviceshare/mig/mig_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/fake_nvml_env.h"
#include "testing/status_matchers.h"

namespace deviceshare::agent {
namespace {

using ::deviceshare::testing::FakeNvmlEnv;

constexpr char kLibrary[] = DEVICESHARE_FAKE_NVML_LIB;

// An H100-80GB with MIG on and one with MIG off.
constexpr char kMigGpus[] = R"(gpus:
- {uuid: GPU-mig, model: NVIDIA H100 80GB HBM3, memory_mib: 81559,
   pci_device_id: 0x2330, mig_capable: true, mig_mode: true}
- {uuid: GPU-off, model: NVIDIA H100 80GB HBM3, memory_mib: 81559,
   pci_device_id: 0x2330, mig_capable: true, mig_mode: false}
)";

class MigRegistrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto source = OpenNvmlSource(env_.Options(kLibrary));
    ASSERT_OK(source);
    auto discovered = (*source)->Discover();
    ASSERT_OK(discovered);
    auto registered =
        RegisteredGpus(*discovered, DeviceConfig{}, hamicore::kMode);
    ASSERT_OK(registered);
    gpus_ = *std::move(registered);
    ASSERT_EQ(gpus_.size(), 2u);
  }

  FakeNvmlEnv env_{kMigGpus};
  std::vector<Gpu> gpus_;
};

TEST_F(MigRegistrationTest, HamiRegistrationCarriesMigProfilesWithPlacements) {
  const nlohmann::json list = nlohmann::json::parse(
      RegistrationValue(gpus_, Dialect::kHami, /*volcano_memory_factor=*/1));
  ASSERT_EQ(list.size(), 2u);
  const nlohmann::json& mig = list[0];
  EXPECT_EQ(mig["mode"], "mig");
  ASSERT_TRUE(mig.contains("migProfiles")) << mig.dump();
  // NVML's seven profiles in its profile-index order; the core share is
  // ceil(SMs x 100 / 132), the 7g's SMs.
  ASSERT_EQ(mig["migProfiles"].size(), 7u);
  EXPECT_EQ(mig["migProfiles"][0], nlohmann::json::parse(R"(
      {"name":"1g.10gb","memoryMB":9984,"core":13,"sliceCount":1,
       "placements":[{"start":0,"size":1},{"start":1,"size":1},
                     {"start":2,"size":1},{"start":3,"size":1},
                     {"start":4,"size":1},{"start":5,"size":1},
                     {"start":6,"size":1}]})"));
  EXPECT_EQ(mig["migProfiles"][2], nlohmann::json::parse(R"(
      {"name":"3g.40gb","memoryMB":40448,"core":46,"sliceCount":3,
       "placements":[{"start":0,"size":4},{"start":4,"size":4}]})"));
  EXPECT_EQ(mig["migProfiles"][4], nlohmann::json::parse(R"(
      {"name":"7g.80gb","memoryMB":81152,"core":100,"sliceCount":7,
       "placements":[{"start":0,"size":8}]})"));
  EXPECT_EQ(mig["migProfiles"][6]["placements"], nlohmann::json::parse(R"(
      [{"start":0,"size":2},{"start":2,"size":2},{"start":4,"size":2},
       {"start":6,"size":2}])"));
  // A GPU not in MIG mode registers none.
  EXPECT_FALSE(list[1].contains("migProfiles")) << list[1].dump();
  // Volcano's registration string has no place for them.
  EXPECT_THAT(RegistrationValue(gpus_, Dialect::kVolcano, 1),
              ::testing::Not(::testing::HasSubstr("1g.10gb")));
}

TEST_F(MigRegistrationTest, SchedulerReadsBackTheSameCatalogue) {
  auto decoded =
      DecodeHamiNodeRegisterJson(RegistrationValue(gpus_, Dialect::kHami, 1));
  ASSERT_OK(decoded);
  ASSERT_EQ(decoded->size(), 2u);
  EXPECT_EQ((*decoded)[0].mig_profiles, gpus_[0].mig_profiles);
  EXPECT_TRUE((*decoded)[1].mig_profiles.empty());
  // And what the agent registers, encoded again, is byte for byte the same.
  EXPECT_EQ(EncodeHamiNodeRegisterJson(*decoded),
            RegistrationValue(gpus_, Dialect::kHami, 1));
}

}  // namespace
}  // namespace deviceshare::agent
