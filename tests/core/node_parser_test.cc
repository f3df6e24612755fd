#include "deviceshare/k8s/node_parser.h"

#include <string>

#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/codec/hami_codec.h"
#include "deviceshare/codec/volcano_codec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/format_goldens.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::StatusIs;
using ::nlohmann::json;
using ::testing::AllOf;
using ::testing::HasSubstr;
namespace goldens = ::deviceshare::testing::goldens;

json NodeWith(json annotations) {
  json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata", {{"name", "gpu-node-1"}}}};
  if (!annotations.is_null()) {
    node["metadata"]["annotations"] = std::move(annotations);
  }
  return node;
}

TEST(NodeParserTest, HamiJsonRegistrationAndAllocatable) {
  json node = NodeWith({{keys::kHamiNodeRegister, goldens::kHamiRegisterJson},
                        {"unrelated", "x"}});
  node["status"]["allocatable"] = {
      {"cpu", "15500m"}, {"memory", "64Gi"}, {"nvidia.com/gpu", "10"}};
  auto inventory = ParseNodeInventory(node, 1);
  ASSERT_OK(inventory);
  EXPECT_EQ(inventory->name, "gpu-node-1");
  EXPECT_EQ(inventory->cpu_milli, 15500);
  EXPECT_EQ(inventory->memory_mib, 65536);
  EXPECT_EQ(inventory->gpus,
            *DecodeHamiNodeRegisterJson(goldens::kHamiRegisterJson));
  EXPECT_THAT(inventory->gpu_resources,
              ::testing::ElementsAre("nvidia.com/gpu"));
}

// Which device plugins kubelet calls there: the GPU count resources with a
// positive count (a plugin gone leaves 0 behind).
TEST(NodeParserTest, GpuResourcesFromAllocatable) {
  json node = NodeWith({{keys::kHamiNodeRegister, goldens::kHamiRegisterJson}});
  node["status"]["allocatable"] = {{"nvidia.com/gpu", "0"},
                                   {"volcano.sh/vgpu-number", 40},
                                   {"example.com/fpga", "2"}};
  auto inventory = ParseNodeInventory(node, 1);
  ASSERT_OK(inventory);
  EXPECT_THAT(inventory->gpu_resources,
              ::testing::ElementsAre("volcano.sh/vgpu-number"));
  node["status"]["allocatable"]["volcano.sh/vgpu-number"] = "lots";
  EXPECT_THAT(ParseNodeInventory(node, 1),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("status.allocatable.volcano.sh/vgpu-number")));
  node["status"].erase("allocatable");
  inventory = ParseNodeInventory(node, 1);
  ASSERT_OK(inventory);
  EXPECT_THAT(inventory->gpu_resources, ::testing::IsEmpty());
}

TEST(NodeParserTest, HamiLegacyRegistration) {
  auto inventory = ParseNodeInventory(
      NodeWith({{keys::kHamiNodeRegister, goldens::kHamiRegisterLegacy}}), 1);
  ASSERT_OK(inventory);
  EXPECT_EQ(inventory->gpus,
            *DecodeHamiNodeRegisterLegacy(goldens::kHamiRegisterLegacy));
  EXPECT_EQ(inventory->cpu_milli, 0);  // no status: not tracked
  EXPECT_EQ(inventory->memory_mib, 0);
}

TEST(NodeParserTest, VolcanoRegistration) {
  auto inventory = ParseNodeInventory(
      NodeWith({{keys::kVolcanoNodeRegister, goldens::kVolcanoRegister}}), 1);
  ASSERT_OK(inventory);
  EXPECT_EQ(inventory->gpus,
            *DecodeVolcanoNodeRegister(goldens::kVolcanoRegister));
}

// Volcano's decodeNodeDevices (utils.go) serves a `mig` device whose type
// no knownMigGeometries entry lists as hami-core (upstream-cases.md row G9);
// a listed type keeps `mig`, matched as a substring (row G11). The rule is
// Volcano's registration's alone.
TEST(NodeParserTest, VolcanoMigDeviceOfAnUnlistedModelFallsBackToTheDefault) {
  DeviceConfig config;
  config.volcano_mode_models = {
      RegisteredModeModels{SharingMode("mig"), {"A100-SXM4-80GB"}}};
  const std::string listed = goldens::kVolcanoRegister;
  const std::string unlisted =
      "GPU-b,10,81920,NVIDIA-NVIDIA A100 80GB PCIe,true,mig:"
      "GPU-c,10,81920,NVIDIA-NVIDIA A100 80GB PCIe,true,hami-core:";
  auto inventory = ParseNodeInventory(
      NodeWith({{keys::kVolcanoNodeRegister, listed + unlisted}}), config);
  ASSERT_OK(inventory);
  ASSERT_EQ(inventory->gpus.size(), 3u);
  EXPECT_EQ(inventory->gpus[0].mode, SharingMode("mig"));
  EXPECT_EQ(inventory->gpus[1].mode, kDefaultSharingMode);
  EXPECT_EQ(inventory->gpus[2].mode, kDefaultSharingMode);
  // Without the rule (no configmap search) every registered mode stands.
  auto plain =
      ParseNodeInventory(NodeWith({{keys::kVolcanoNodeRegister, unlisted}}), 1);
  ASSERT_OK(plain);
  EXPECT_EQ(plain->gpus[0].mode, SharingMode("mig"));
}

TEST(NodeParserTest, HamiRegistrationWinsOverVolcano) {
  auto inventory = ParseNodeInventory(
      NodeWith({{keys::kVolcanoNodeRegister, goldens::kVolcanoRegister},
                {keys::kHamiNodeRegister, goldens::kHamiRegisterLegacy}}),
      1);
  ASSERT_OK(inventory);
  ASSERT_EQ(inventory->gpus.size(), 1u);
  EXPECT_EQ(inventory->gpus[0].uuid,
            "GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec");
}

TEST(NodeParserTest, YamlNumbersAreQuantitiesToo) {
  // ParseJsonOrYaml turns unquoted YAML scalars into numbers.
  json node =
      NodeWith({{keys::kVolcanoNodeRegister, goldens::kVolcanoRegister}});
  node["status"]["allocatable"] = {{"cpu", 8}, {"memory", 1073741824}};
  auto inventory = ParseNodeInventory(node, 1);
  ASSERT_OK(inventory);
  EXPECT_EQ(inventory->cpu_milli, 8000);
  EXPECT_EQ(inventory->memory_mib, 1024);
}

// device_test.go TestFit_DeviceCordon: hami.io/device-cordon lists uuids,
// blanks and empty entries ignored.
TEST(NodeParserTest, DeviceCordonMarksListedGpus) {
  auto inventory = ParseNodeInventory(
      NodeWith({{keys::kVolcanoNodeRegister,
                 "GPU-0,4,1024,T,true,hami-core:GPU-1,4,1024,T,true,"
                 "hami-core:"},
                {keys::kHamiDeviceCordon, " GPU-1 ,, GPU-9"}}),
      1);
  ASSERT_OK(inventory);
  EXPECT_FALSE(inventory->gpus[0].cordoned);
  EXPECT_TRUE(inventory->gpus[1].cordoned);
  EXPECT_THAT(
      ParseNodeInventory(
          NodeWith({{keys::kVolcanoNodeRegister, goldens::kVolcanoRegister},
                    {keys::kHamiDeviceCordon, 5}}),
          1),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          AllOf(HasSubstr("gpu-node-1"), HasSubstr(keys::kHamiDeviceCordon))));
}

// device_test.go:2501 TestGetNodeDevices_InvalidPairScores: HAMi refuses
// the node; :2484 TestGetNodeDevices_PairScores reads a valid matrix.
TEST(NodeParserTest, PairScoresThatHamiCannotReadRefuseTheNode) {
  for (const char* bad : {"not-valid-json", "{\"uuid\": \"GPU-0\"}",
                          R"([{"uuid": "GPU-0", "score": {"GPU-1": 1.5}}])"}) {
    EXPECT_THAT(
        ParseNodeInventory(
            NodeWith({{keys::kHamiNodeRegister, goldens::kHamiRegisterJson},
                      {keys::kHamiPairScore, bad}}),
            1),
        StatusIs(
            absl::StatusCode::kInvalidArgument,
            AllOf(HasSubstr("gpu-node-1"), HasSubstr(keys::kHamiPairScore))))
        << bad;
  }
  EXPECT_OK(ParseNodeInventory(
      NodeWith({{keys::kHamiNodeRegister, goldens::kHamiRegisterJson},
                {keys::kHamiPairScore,
                 R"([{"uuid": "GPU-0", "score": {"GPU-1": 100}}])"}}),
      1));
}

TEST(NodeParserTest, NoRegistrationIsNotFoundNamingTheNode) {
  for (const json& annotations :
       {json(nullptr), json::object(), json{{"volcano.sh/other", "x"}}}) {
    SCOPED_TRACE(annotations.dump());
    EXPECT_THAT(ParseNodeInventory(NodeWith(annotations), 1),
                StatusIs(absl::StatusCode::kNotFound,
                         AllOf(HasSubstr("gpu-node-1"),
                               HasSubstr(keys::kHamiNodeRegister),
                               HasSubstr(keys::kVolcanoNodeRegister))));
  }
}

TEST(NodeParserTest, MalformedRegistrationNamesNodeKeyEntryAndField) {
  EXPECT_THAT(
      ParseNodeInventory(
          NodeWith({{keys::kVolcanoNodeRegister, "GPU-0,10,lots,T,true,mig:"}}),
          1),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          AllOf(HasSubstr("gpu-node-1"), HasSubstr(keys::kVolcanoNodeRegister),
                HasSubstr("entry 0"), HasSubstr("memMiB"),
                HasSubstr("\"lots\""))));
  EXPECT_THAT(
      ParseNodeInventory(
          NodeWith({{keys::kHamiNodeRegister, R"([{"id":"GPU-0",)"}}), 1),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          AllOf(HasSubstr("gpu-node-1"), HasSubstr(keys::kHamiNodeRegister))));
}

TEST(NodeParserTest, InventoryIsValidated) {
  // count and devmem are omitempty: a device without them can take no
  // pod, and HAMi scores it 0 and serves the others (gpu_policy_test.go
  // TestComputeScore "Zero capacity device"), so it is left out.
  auto served = ParseNodeInventory(
      NodeWith({{keys::kHamiNodeRegister,
                 R"([{"id":"GPU-0","devmem":1024,"devcore":100},)"
                 R"({"id":"GPU-1","count":10,"devcore":100},)"
                 R"({"id":"GPU-2","count":10,"devmem":1024,"devcore":100,)"
                 R"("health":true}])"}}),
      1);
  ASSERT_OK(served);
  ASSERT_EQ(served->gpus.size(), 1);
  EXPECT_EQ(served->gpus[0].uuid, "GPU-2");
  // A device with slots and memory but no cores decodes and is refused.
  EXPECT_THAT(ParseNodeInventory(
                  NodeWith({{keys::kHamiNodeRegister,
                             R"([{"id":"GPU-0","count":10,"devmem":1024}])"}}),
                  1),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("gpu-node-1"), HasSubstr("GPU-0"),
                             HasSubstr("core_capacity"))));
  EXPECT_THAT(
      ParseNodeInventory(
          NodeWith(
              {{keys::kVolcanoNodeRegister,
                "GPU-0,10,1024,T,true,hami-core:GPU-0,10,1024,T,true,mps:"}}),
          1),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("appears twice")));
}

TEST(NodeParserTest, WrongShapesAreInvalidArgumentNeverExceptions) {
  json good =
      NodeWith({{keys::kVolcanoNodeRegister, goldens::kVolcanoRegister}});
  struct Case {
    json node;
    const char* message;
  };
  std::vector<Case> cases;
  cases.push_back({json::array({good}), "want a Node object"});
  cases.push_back({json{{"kind", "Node"}}, "metadata is missing"});
  cases.push_back({json{{"metadata", "x"}}, "metadata"});
  cases.push_back({json{{"metadata", json::object()}}, "metadata.name"});
  cases.push_back({json{{"metadata", {{"name", 7}}}}, "metadata.name"});
  cases.push_back(
      {json{{"metadata", {{"name", "n"}, {"annotations", json::array()}}}},
       "metadata.annotations"});
  cases.push_back(
      {NodeWith({{keys::kHamiNodeRegister, 42}}), keys::kHamiNodeRegister});
  {
    json node = good;
    node["status"] = "Ready";
    cases.push_back({node, "node.status"});
  }
  {
    json node = good;
    node["status"]["allocatable"] = json::array();
    cases.push_back({node, "status.allocatable"});
  }
  {
    json node = good;
    node["status"]["allocatable"]["cpu"] = "lots";
    cases.push_back({node, "status.allocatable.cpu"});
  }
  {
    json node = good;
    node["status"]["allocatable"]["memory"] = "-1Gi";
    cases.push_back({node, "status.allocatable.memory"});
  }
  {
    json node = good;
    node["status"]["allocatable"]["memory"] = json::array({1});
    cases.push_back({node, "status.allocatable.memory"});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.node.dump());
    EXPECT_THAT(
        ParseNodeInventory(c.node, 1),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)));
  }
  EXPECT_OK(ParseNodeInventory(good, 1));
}

}  // namespace
}  // namespace deviceshare
