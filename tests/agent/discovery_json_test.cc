#include "deviceshare/agent/discovery_json.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "deviceshare/agent/inventory_source.h"
#include "deviceshare/agent/nvml_source.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/fake_nvml_env.h"
#include "testing/status_matchers.h"
#include "testing/whole_file.h"

namespace deviceshare::agent {
namespace {

using ::deviceshare::testing::ReadWholeFile;

using ::deviceshare::testing::StatusIs;
using ::testing::HasSubstr;
using Json = nlohmann::json;

DiscoveredGpu FullGpu() {
  DiscoveredGpu gpu;
  gpu.uuid = "GPU-1234";
  gpu.index = 1;
  gpu.model = "NVIDIA H100 80GB HBM3";
  gpu.pci_bus_id = "00000000:3B:00.0";
  gpu.pci_device_id = 0x2330;
  gpu.memory_mib = 81559;
  gpu.cc_major = 9;
  gpu.cc_minor = 0;
  gpu.sm_count = 132;
  gpu.numa_node = 1;
  gpu.links = {GpuLink{0, 18, true}};
  gpu.mig_capable = true;
  gpu.mig_enabled = true;
  gpu.mig_profiles = {MigProfileInfo{"3g.40gb", 9, 3, 2, 60, 40448, {0, 4}, 4}};
  gpu.mig_instances = {
      MigInstanceInfo{MigSlot{"3g.40gb", 4, 4}, 2, 0, "MIG-abc"},
      MigInstanceInfo{MigSlot{"3g.40gb", 0, 4}, 1, -1, ""}};
  gpu.healthy = false;
  gpu.health_reason = "xid 79";
  return gpu;
}

TEST(DiscoveryJsonTest, PrintsTheDocumentedShape) {
  const Json json = DiscoveryJson({FullGpu()});
  const Json expected = Json::parse(R"({"gpus": [{
    "uuid": "GPU-1234", "index": 1, "model": "NVIDIA H100 80GB HBM3",
    "memory_mib": 81559, "sm_count": 132, "numa": 1,
    "pci_device_id": "0x2330", "pci_bus_id": "00000000:3B:00.0",
    "compute_capability": "9.0", "mig_capable": true, "mig_enabled": true,
    "mig_profiles": [{"name": "3g.40gb", "id": 9, "slices": 3,
      "instances": 2, "sm": 60, "memory_mib": 40448, "memory_slices": 4,
      "starts": [0, 4]}],
    "mig_instances": [
      {"profile": "3g.40gb", "start": 4, "size": 4, "gpu_instance_id": 2,
       "compute_instance_id": 0, "mig_uuid": "MIG-abc"},
      {"profile": "3g.40gb", "start": 0, "size": 4, "gpu_instance_id": 1,
       "compute_instance_id": -1, "mig_uuid": ""}],
    "links": [{"peer_index": 0, "nvlinks": 18, "same_numa": true,
               "pcie": "system"}],
    "health": "unhealthy", "health_reason": "xid 79"}]})");
  EXPECT_EQ(json, expected) << json.dump(2);
}

TEST(DiscoveryJsonTest, UnknownFieldsPrintAsUnknown) {
  DiscoveredGpu gpu;
  gpu.uuid = "GPU-x";
  gpu.model = "m";
  gpu.memory_mib = 1;
  const Json json = DiscoveryJson({gpu})["gpus"][0];
  EXPECT_EQ(json["compute_capability"], "");
  EXPECT_EQ(json["pci_device_id"], "0x0000");
  EXPECT_EQ(json["health"], "healthy");
}

TEST(DiscoveryJsonTest, RoundTrips) {
  DiscoveredGpu other;
  other.uuid = "GPU-0";
  other.index = 0;
  other.model = "NVIDIA A100-SXM4-80GB";
  other.memory_mib = 81920;
  other.pci_device_id = 0x20B2;
  const std::vector<DiscoveredGpu> gpus = {other, FullGpu()};
  auto parsed = ParseDiscoveryJson(DiscoveryJson(gpus));
  ASSERT_OK(parsed);
  EXPECT_EQ(*parsed, gpus);
  // Through text as well, in index order whatever the list order.
  auto reversed =
      ParseDiscoveryJson(Json::parse(DiscoveryJson({FullGpu(), other}).dump()));
  ASSERT_OK(reversed);
  EXPECT_EQ(*reversed, gpus);
}

TEST(DiscoveryJsonTest, AcceptsTheHandWrittenSpellings) {
  auto parsed = ParseDiscoveryJson(Json::parse(R"({"gpus": [
    {"uuid": "GPU-a", "model": "A", "memory_mib": 10, "pci_device_id": 8960,
     "health": false},
    {"uuid": "GPU-b", "model": "B", "memory_mib": 20, "pci_device_id": "20b2",
     "health": "Healthy", "mig_enabled": true}]})"));
  ASSERT_OK(parsed);
  EXPECT_EQ((*parsed)[0].index, 0);
  EXPECT_EQ((*parsed)[0].pci_device_id, 0x2300u);
  EXPECT_FALSE((*parsed)[0].healthy);
  EXPECT_EQ((*parsed)[1].index, 1);
  EXPECT_EQ((*parsed)[1].pci_device_id, 0x20B2u);
  EXPECT_TRUE((*parsed)[1].healthy);
  EXPECT_TRUE((*parsed)[1].mig_capable);  // implied by mig_enabled
}

TEST(DiscoveryJsonTest, ErrorsNameThePath) {
  auto parse = [](const std::string& text) {
    return ParseDiscoveryJson(Json::parse(text));
  };
  EXPECT_THAT(parse(R"({"gpus": [{"uuid": "a", "model": "m", "memory_mib": 1},
                                 {"uuid": "b", "model": "m", "memory_mib": "x"}]})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("gpus[1].memory_mib: \"x\" is a string, want "
                                 "an integer")));
  EXPECT_THAT(parse(R"({"gpus": [{"uuid": "a", "model": "m", "memory_mib": 1,
                                  "colour": "green"}]})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("gpus[0].colour: unknown key")));
  EXPECT_THAT(parse(R"({"gpus": [{"model": "m", "memory_mib": 1}]})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("gpus[0].uuid: is missing")));
  EXPECT_THAT(parse(R"({"gpus": [{"uuid": "a", "model": "m", "memory_mib": 1,
                                  "pci_device_id": "0xZZ"}]})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("gpus[0].pci_device_id: \"0xZZ\"")));
  EXPECT_THAT(parse(R"({"gpus": [{"uuid": "a", "model": "m", "memory_mib": 1,
                                  "health": "meh"}]})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("gpus[0].health: \"meh\" is not")));
  EXPECT_THAT(parse(R"({"gpus": [{"uuid": "a", "model": "m", "memory_mib": 1,
                                  "compute_capability": "nine"}]})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("gpus[0].compute_capability")));
  EXPECT_THAT(parse(R"({"gpus": [{"uuid": "a", "model": "m", "memory_mib": 1,
      "mig_instances": [{"profile": "1g.10gb", "start": 0, "size": 1,
                         "gpu_instance_id": "seven"}]}]})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("gpus[0].mig_instances[0].gpu_instance_id")));
  EXPECT_THAT(parse(R"({"gpus": [{"uuid": "a", "model": "m", "memory_mib": 1},
                                 {"uuid": "a", "model": "m", "memory_mib": 1}]})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("gpus[1].uuid: \"a\" is used by another")));
  EXPECT_THAT(parse(R"({"gpus": [{"uuid": "a", "model": "m", "memory_mib": 1,
                                  "mig_capable": false, "mig_enabled": true}]})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("gpus[0].mig_enabled")));
  EXPECT_THAT(
      parse(R"({"gpus": [{"uuid": "a", "model": "m", "memory_mib": 0}]})"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("gpus[0].memory_mib: 0 is below the minimum "
                         "1")));
  EXPECT_OK(parse(R"({"gpus": [{"uuid": "a", "model": "m", "memory_mib": 0,
                                "health": "unhealthy"}]})"));
  // A profile's starts are placements of memory_slices slices each: one of
  // size 0 would overlap nothing in HAMi's check and be handed out twice.
  EXPECT_THAT(parse(R"({"gpus": [{"uuid": "a", "model": "m", "memory_mib": 1,
      "mig_profiles": [{"name": "1g.10gb", "id": 19, "starts": [0, 1]}]}]})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("gpus[0].mig_profiles[0].memory_slices: is "
                                 "missing")));
  EXPECT_THAT(parse(R"({"gpus": [{"uuid": "a", "model": "m", "memory_mib": 1,
      "mig_profiles": [{"name": "1g.10gb", "id": 19, "memory_slices": 0,
                        "starts": [0]}]}]})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("memory_slices: 0 is below 1")));
  EXPECT_OK(parse(R"({"gpus": [{"uuid": "a", "model": "m", "memory_mib": 1,
      "mig_profiles": [{"name": "1g.10gb", "id": 19}]}]})"));
  EXPECT_THAT(parse(R"({"gpu": []})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("gpu: unknown key")));
}

// `discover --output json > f; discover --inventory f`: what NVML found
// comes back the same from the file.
TEST(DiscoveryJsonTest, NvmlDiscoveryRoundTripsThroughAnInventoryFile) {
  testing::FakeNvmlEnv env(R"(gpus:
- {uuid: GPU-r0, model: NVIDIA H100 80GB HBM3, memory_mib: 81559,
   sm_count: 132, pci_device_id: 0x2330, pci_bus_id: "00000000:3B:00.0",
   cc: [9, 0], mig_capable: true, mig_mode: true, nvlinks: {1: 4}}
- {uuid: GPU-r1, model: NVIDIA H100 80GB HBM3, memory_mib: 81559,
   pci_device_id: 0x2330, pci_bus_id: "00000000:86:00.0", nvlinks: {0: 4},
   numa: 1, lost: true}
)");
  env.SetNuma("0000:86:00.0", "1");
  {
    auto control = OpenNvmlMigControl(env.Options(DEVICESHARE_FAKE_NVML_LIB));
    ASSERT_OK(control);
    ASSERT_OK((*control)->CreateInstance("GPU-r0", "2g.20gb", 2));
  }
  auto source = OpenNvmlSource(env.Options(DEVICESHARE_FAKE_NVML_LIB));
  ASSERT_OK(source);
  auto discovered = (*source)->Discover();
  ASSERT_OK(discovered);
  ASSERT_EQ(discovered->size(), 2u);
  ASSERT_EQ((*discovered)[0].mig_instances.size(), 1u);
  EXPECT_FALSE((*discovered)[1].healthy);

  const std::string path = env.dir() + "/discovered.json";
  testing::WriteFileAtomically(path, DiscoveryJson(*discovered).dump(2));
  auto inventory = OpenInventorySource(path);
  ASSERT_OK(inventory);
  auto read_back = (*inventory)->Discover();
  ASSERT_OK(read_back);
  EXPECT_EQ(*read_back, *discovered);
}

// The same through the command line, as an operator would do it.
TEST(DiscoveryJsonTest, DiscoverCommandRoundTrips) {
  testing::FakeNvmlEnv env(R"(gpus:
- {uuid: GPU-c0, model: NVIDIA H100 80GB HBM3, memory_mib: 81559,
   sm_count: 132, pci_device_id: 0x2330, cc: [9, 0], mig_capable: true,
   mig_mode: true, nvlinks: {1: 18}}
- {uuid: GPU-c1, model: NVIDIA H100 80GB HBM3, memory_mib: 81559,
   pci_device_id: 0x2330, nvlinks: {0: 18}, xid: [79]}
)");
  const std::string from_nvml = env.dir() + "/from-nvml.json";
  const std::string from_file = env.dir() + "/from-file.json";
  const std::string bin = DEVICESHARE_NODE_AGENT_BIN;
  ASSERT_EQ(std::system((bin + " discover --output json --nvml-library " +
                         DEVICESHARE_FAKE_NVML_LIB + " > " + from_nvml)
                            .c_str()),
            0);
  ASSERT_EQ(std::system((bin + " discover --output json --inventory " +
                         from_nvml + " > " + from_file)
                            .c_str()),
            0);
  const std::string printed = ReadWholeFile(from_nvml);
  EXPECT_EQ(ReadWholeFile(from_file), printed);
  auto gpus = ParseDiscoveryJson(Json::parse(printed));
  ASSERT_OK(gpus);
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[0].mig_profiles.size(), 7u);
  EXPECT_EQ((*gpus)[1].health_reason, "xid 79");
}

}  // namespace
}  // namespace deviceshare::agent
