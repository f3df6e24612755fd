// The ResourceSlice rules FakeApiServer enforces (testing/
// resource_slice_rules.h), one test per rule, and the value formats and
// error wording under them.
#include "testing/resource_slice_rules.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/api_value_formats.h"
#include "testing/field_errors.h"

namespace deviceshare::testing {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr char kLabelMessage[] =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric "
    "characters or '-', and must start and end with an alphanumeric character "
    "(e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
constexpr char kSubdomainMessage[] =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
    "characters, '-' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
constexpr char kCIdentifierMessage[] =
    "a valid C identifier must start with alphabetic character or '_', "
    "followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  "
    "or 'MY_NAME',  or 'MyName', regex used for validation is "
    "'[A-Za-z_][A-Za-z0-9_]*')";

json Device(const std::string& name) {
  return {{"name", name},
          {"attributes",
           {{"index", {{"int", 0}}},
            {"gpu.deviceshare.io/uuid", {{"string", "GPU-1234"}}},
            {"driverVersion", {{"version", "570.1.0"}}},
            {"mig", {{"bool", false}}}}},
          {"capacity", {{"memory", {{"value", "80Gi"}}}}}};
}

json& Spec(json& slice) { return slice["spec"]; }
json& FirstDevice(json& slice) { return slice["spec"]["devices"][0]; }

// A device slice every rule accepts: one GPU and a partition of it, both
// consuming the GPU's counters, which another slice of the pool publishes
// (GoodCounterSlice).
json GoodSlice() {
  json partition = Device("gpu-0-part-0");
  partition["consumesCounters"] =
      json::array({{{"counterSet", "gpu-0"},
                    {"counters", {{"memory", {{"value", "40Gi"}}}}}}});
  json whole = Device("gpu-0");
  whole["consumesCounters"] =
      json::array({{{"counterSet", "gpu-0"},
                    {"counters", {{"memory", {{"value", "80Gi"}}}}}}});
  whole["taints"] = json::array(
      {{{"key", "gpu.deviceshare.io/unhealthy"}, {"effect", "NoSchedule"}}});
  return {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceSlice"},
      {"metadata", {{"name", "node-1-gpu.deviceshare.io-abcde"}}},
      {"spec",
       {{"driver", "gpu.deviceshare.io"},
        {"nodeName", "node-1"},
        {"pool",
         {{"name", "node-1"}, {"generation", 0}, {"resourceSliceCount", 2}}},
        {"devices", json::array({whole, partition})}}}};
}

// The counter slice of GoodSlice's pool.
json GoodCounterSlice() {
  json slice = GoodSlice();
  slice["metadata"]["name"] = "node-1-gpu.deviceshare.io-fghij";
  Spec(slice).erase("devices");
  Spec(slice)["sharedCounters"] = json::array(
      {{{"name", "gpu-0"}, {"counters", {{"memory", {{"value", "80Gi"}}}}}}});
  return slice;
}

json CounterSet(const std::string& name) {
  return {{"name", name}, {"counters", {{"memory", {{"value", "1"}}}}}};
}

json Consumption(const std::string& counter_set) {
  return {{"counterSet", counter_set},
          {"counters", {{"memory", {{"value", "1"}}}}}};
}

std::vector<std::string> Errors(const json& slice) {
  std::vector<std::string> out;
  for (const FieldError& error : ValidateResourceSlice(slice)) {
    out.push_back(error.ToString());
  }
  return out;
}

// A device allowing multiple allocations with `policy` on 80Gi of memory.
json WithPolicy(json policy) {
  json slice = GoodSlice();
  FirstDevice(slice)["allowMultipleAllocations"] = true;
  FirstDevice(slice)["capacity"]["memory"]["requestPolicy"] = std::move(policy);
  return slice;
}

constexpr char kPolicy[] = "spec.devices[0].capacity[memory].requestPolicy";

TEST(ResourceSliceRulesTest, AGoodSliceHasNoErrors) {
  EXPECT_THAT(Errors(GoodSlice()), IsEmpty());
  EXPECT_THAT(Errors(GoodCounterSlice()), IsEmpty());
}

TEST(ResourceSliceRulesTest, ASliceHasCounterSetsOrDevicesNotBoth) {
  json slice = GoodSlice();
  Spec(slice)["sharedCounters"] = GoodCounterSlice()["spec"]["sharedCounters"];
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec: Invalid value: \"\": only one of "
                          "`sharedCounters` or `devices` is allowed"));
  // An empty list is set all the same; null is not.
  Spec(slice)["devices"] = json::array();
  EXPECT_THAT(Errors(slice), ElementsAre(HasSubstr("only one of")));
  Spec(slice)["devices"] = nullptr;
  EXPECT_THAT(Errors(slice), IsEmpty());
  // Neither is a valid (empty) slice.
  Spec(slice).erase("devices");
  Spec(slice).erase("sharedCounters");
  EXPECT_THAT(Errors(slice), IsEmpty());
}

// What kube-apiserver 1.37.2 answered for the node agent's 1.34-style slice
// of an 8 x H100 node with 4 MIG GPUs.
TEST(ResourceSliceRulesTest, TheOneSliceOfA34StylePoolIsRefused) {
  json slice = GoodSlice();
  slice["metadata"]["name"] = "dra-node-gpu.deviceshare.io-0";
  Spec(slice)["sharedCounters"] = json::array();
  for (int gpu = 0; gpu < 3; ++gpu) {
    Spec(slice)["sharedCounters"].push_back(
        CounterSet(absl::StrCat("gpu-", gpu, "-counters")));
  }
  Spec(slice)["devices"] = json::array();
  for (int i = 0; i < 79; ++i) {
    json device = Device(absl::StrCat("gpu-", i / 25, "-mig-", i % 25));
    device["consumesCounters"] =
        json::array({Consumption(absl::StrCat("gpu-", i / 25, "-counters"))});
    Spec(slice)["devices"].push_back(device);
  }
  EXPECT_EQ(InvalidMessage("ResourceSlice.resource.k8s.io",
                           "dra-node-gpu.deviceshare.io-0",
                           ValidateResourceSlice(slice)),
            "ResourceSlice.resource.k8s.io \"dra-node-gpu.deviceshare.io-0\" "
            "is invalid: [spec: Invalid value: \"\": only one of "
            "`sharedCounters` or `devices` is allowed, spec.devices: Too "
            "many: 79: must have at most 64 items]");
}

TEST(ResourceSliceRulesTest, MetadataNameIsARequiredDnsSubdomain) {
  json slice = GoodSlice();
  slice["metadata"]["name"] = "";
  EXPECT_THAT(Errors(slice),
              ElementsAre("metadata.name: Required value: name or "
                          "generateName is required"));
  slice["metadata"]["name"] = "Node_1";
  EXPECT_THAT(Errors(slice),
              ElementsAre(absl::StrCat("metadata.name: Invalid value: "
                                       "\"Node_1\": ",
                                       kSubdomainMessage)));
}

TEST(ResourceSliceRulesTest, DriverIsADnsSubdomainOfAtMost63) {
  json slice = GoodSlice();
  Spec(slice)["driver"] = "gpu_deviceshare.io";
  EXPECT_THAT(Errors(slice),
              ElementsAre(absl::StrCat("spec.driver: Invalid value: "
                                       "\"gpu_deviceshare.io\": ",
                                       kSubdomainMessage)));
  Spec(slice)["driver"] = std::string(60, 'a') + ".io";  // 63
  EXPECT_THAT(Errors(slice), IsEmpty());
  Spec(slice)["driver"] = std::string(61, 'a') + ".io";
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec.driver: Too long: may not be more than 63 "
                          "bytes"));
  // The server checks the lower-cased name.
  Spec(slice)["driver"] = "GPU.DeviceShare.io";
  EXPECT_THAT(Errors(slice), IsEmpty());
  Spec(slice).erase("driver");
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec.driver: Required value",
                          absl::StrCat("spec.driver: Invalid value: \"\": ",
                                       kSubdomainMessage)));
}

TEST(ResourceSliceRulesTest, PoolNameIsSegmentsOfDnsSubdomains) {
  json slice = GoodSlice();
  Spec(slice)["pool"]["name"] = "node-1/gpus";
  EXPECT_THAT(Errors(slice), IsEmpty());
  Spec(slice)["pool"]["name"] = "node-1/GPUs";
  EXPECT_THAT(Errors(slice), ElementsAre(absl::StrCat(
                                 "spec.pool.name: Invalid value: \"GPUs\": ",
                                 kSubdomainMessage)));
  Spec(slice)["pool"]["name"] = "";
  EXPECT_THAT(Errors(slice), ElementsAre("spec.pool.name: Required value"));
  std::string long_name;
  for (int i = 0; i < 127; ++i) absl::StrAppend(&long_name, i ? "/" : "", "x");
  Spec(slice)["pool"]["name"] = long_name;  // 253 characters
  EXPECT_THAT(Errors(slice), IsEmpty());
  Spec(slice)["pool"]["name"] = long_name + "y";
  EXPECT_THAT(Errors(slice), ElementsAre("spec.pool.name: Too long: may not be "
                                         "more than 253 bytes"));
}

TEST(ResourceSliceRulesTest, PoolGenerationAndSliceCount) {
  json slice = GoodSlice();
  Spec(slice)["pool"]["generation"] = -1;
  Spec(slice)["pool"]["resourceSliceCount"] = 0;
  EXPECT_THAT(
      Errors(slice),
      ElementsAre("spec.pool.resourceSliceCount: Invalid value: 0: must be "
                  "greater than zero",
                  "spec.pool.generation: Invalid value: -1: must be greater "
                  "than or equal to zero"));
  Spec(slice)["pool"].erase("generation");
  Spec(slice)["pool"]["resourceSliceCount"] = 3;
  EXPECT_THAT(Errors(slice), IsEmpty());
}

TEST(ResourceSliceRulesTest, ExactlyOneNodeSelection) {
  json slice = GoodSlice();
  Spec(slice)["allNodes"] = true;
  EXPECT_THAT(
      Errors(slice),
      ElementsAre("spec: Invalid value: \"{`nodeName`, `allNodes`}\": exactly "
                  "one of `nodeName`, `nodeSelector`, `allNodes`, "
                  "`perDeviceNodeSelection` is required, but multiple fields "
                  "are set"));
  Spec(slice).erase("nodeName");
  EXPECT_THAT(Errors(slice), IsEmpty());
  Spec(slice)["allNodes"] = false;
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec.allNodes: Invalid value: false: must be either "
                          "unset or set to true",
                          "spec: Required value: exactly one of `nodeName`, "
                          "`nodeSelector`, `allNodes`, "
                          "`perDeviceNodeSelection` is required"));
  Spec(slice).erase("allNodes");
  Spec(slice)["nodeName"] = "";
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec.nodeName: Invalid value: \"\": must be either "
                          "unset or set to a non-empty string",
                          HasSubstr("spec: Required value")));
  Spec(slice)["nodeName"] = "Node_1";
  EXPECT_THAT(Errors(slice), ElementsAre(absl::StrCat(
                                 "spec.nodeName: Invalid value: \"Node_1\": ",
                                 kSubdomainMessage)));
  Spec(slice).erase("nodeName");
  Spec(slice)["nodeSelector"] = {
      {"nodeSelectorTerms",
       json::array(
           {{{"matchFields",
              json::array({{{"key", "metadata.name"},
                            {"operator", "In"},
                            {"values", json::array({"node-1"})}}})}}})}};
  EXPECT_THAT(Errors(slice), IsEmpty());
  Spec(slice)["nodeSelector"]["nodeSelectorTerms"].push_back(json::object());
  EXPECT_THAT(Errors(slice),
              ElementsAre(HasSubstr("spec.nodeSelector.nodeSelectorTerms: "
                                    "Invalid value: ")));
}

TEST(ResourceSliceRulesTest, PerDeviceNodeSelection) {
  json slice = GoodSlice();
  Spec(slice).erase("nodeName");
  Spec(slice)["perDeviceNodeSelection"] = true;
  FirstDevice(slice)["nodeName"] = "node-1";
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec.devices[1]: Required value: exactly one of "
                          "`nodeName`, `nodeSelector`, or `allNodes` is "
                          "required when `perDeviceNodeSelection` is set to "
                          "true in the ResourceSlice spec"));
  Spec(slice).erase("perDeviceNodeSelection");
  Spec(slice)["nodeName"] = "node-1";
  EXPECT_THAT(Errors(slice),
              ElementsAre(HasSubstr("spec.devices[0]: Invalid value: null: "
                                    "`nodeName`, `nodeSelector` and "
                                    "`allNodes` can only be set")));
}

TEST(ResourceSliceRulesTest, AtMost128Devices) {
  json slice = GoodSlice();
  Spec(slice).erase("sharedCounters");
  Spec(slice)["devices"] = json::array();
  for (int i = 0; i < kSliceMaxDevices; ++i) {
    Spec(slice)["devices"].push_back(Device(absl::StrCat("gpu-", i)));
  }
  EXPECT_THAT(Errors(slice), IsEmpty());
  Spec(slice)["devices"].push_back(Device("gpu-x"));
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec.devices: Too many: 129: must have at most 128 "
                          "items"));
}

TEST(ResourceSliceRulesTest, AtMost64DevicesWhenOneHasCountersOrTaints) {
  json slice = GoodSlice();
  Spec(slice)["devices"] = json::array();
  for (int i = 0; i < kSliceMaxDevicesWithCounters; ++i) {
    // Two consumptions of 32 counters each: no total over the slice any
    // more (1.34 had 1024).
    json device = Device(absl::StrCat("gpu-0-mig-", i));
    device["consumesCounters"] =
        json::array({Consumption("gpu-0"), Consumption("gpu-1")});
    for (json& use : device["consumesCounters"]) {
      for (int c = 1; c < kConsumptionMaxCounters; ++c) {
        use["counters"][absl::StrCat("c", c)] = {{"value", "1"}};
      }
    }
    Spec(slice)["devices"].push_back(device);
  }
  EXPECT_THAT(Errors(slice), IsEmpty());
  // Over the limit that is the one error: the devices are not looked into.
  Spec(slice)["devices"].push_back(Device("GPU_X"));
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec.devices: Too many: 65: must have at most 64 "
                          "items"));
  // Without counters the same 65 devices are fine, until one has a taint.
  for (json& device : Spec(slice)["devices"]) {
    device.erase("consumesCounters");
  }
  Spec(slice)["devices"].back()["name"] = "gpu-x";
  EXPECT_THAT(Errors(slice), IsEmpty());
  FirstDevice(slice)["taints"] = json::array(
      {{{"key", "gpu.deviceshare.io/unhealthy"}, {"effect", "NoSchedule"}}});
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec.devices: Too many: 65: must have at most 64 "
                          "items"));
  // An empty list is no feature.
  FirstDevice(slice)["taints"] = json::array();
  FirstDevice(slice)["consumesCounters"] = json::array();
  EXPECT_THAT(Errors(slice), IsEmpty());
}

TEST(ResourceSliceRulesTest, DeviceNamesAreUniqueDnsLabels) {
  json slice = GoodSlice();
  Spec(slice)["devices"].push_back(Device("gpu-0"));
  Spec(slice)["devices"].push_back(Device("GPU_0"));
  Spec(slice)["devices"].push_back(Device(std::string(64, 'a')));
  EXPECT_THAT(Errors(slice),
              ElementsAre(absl::StrCat("spec.devices[3].name: Invalid value: "
                                       "\"GPU_0\": ",
                                       kLabelMessage),
                          HasSubstr("spec.devices[4].name: Invalid value: "
                                    "\"aaaa"),
                          "spec.devices[2]: Duplicate value: \"gpu-0\""));
  EXPECT_THAT(Errors(slice)[1],
              HasSubstr("must be no more than 63 characters"));
}

TEST(ResourceSliceRulesTest, AtMost32AttributesAndCapacities) {
  json slice = GoodSlice();
  json& device = FirstDevice(slice);
  for (int i = 0; i < 27; ++i) {
    device["attributes"][absl::StrCat("a", i)] = {{"bool", true}};
  }
  EXPECT_THAT(Errors(slice), IsEmpty());  // 4 + 27 attributes, 1 capacity
  device["capacity"]["cores"] = {{"value", "132"}};
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec.devices[0]: Invalid value: 33: the total "
                          "number of attributes and capacities must not "
                          "exceed 32"));
}

TEST(ResourceSliceRulesTest,
     AttributeAndCapacityNamesAreQualifiedCIdentifiers) {
  json slice = GoodSlice();
  json& device = FirstDevice(slice);
  device["attributes"] = {{"pci-bus", {{"string", "0000:3b:00.0"}}}};
  EXPECT_THAT(Errors(slice),
              ElementsAre(absl::StrCat("spec.devices[0].attributes[pci-bus]: "
                                       "Invalid value: \"pci-bus\": ",
                                       kCIdentifierMessage)));
  device["attributes"] = {{std::string(33, 'x'), {{"int", 1}}}};
  EXPECT_THAT(Errors(slice),
              ElementsAre(absl::StrCat("spec.devices[0].attributes[",
                                       std::string(33, 'x'),
                                       "]: Too long: may not be more than 32 "
                                       "bytes")));
  device["attributes"] = {{"Example.COM/uuid", {{"string", "x"}}}};
  EXPECT_THAT(Errors(slice), IsEmpty());  // the domain is lower-cased first
  device["attributes"] = {{"bad_domain/uuid", {{"string", "x"}}}};
  EXPECT_THAT(Errors(slice),
              ElementsAre(HasSubstr("spec.devices[0].attributes[bad_domain/"
                                    "uuid]: Invalid value: \"bad_domain\"")));
  device["attributes"] = {{"/uuid", {{"string", "x"}}}};
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec.devices[0].attributes[/uuid]: Required value: "
                          "the domain must not be empty"));
  device["attributes"] = json::object();
  device["capacity"] = {{"gpu.deviceshare.io/memory-bytes", {{"value", "1"}}}};
  EXPECT_THAT(Errors(slice),
              ElementsAre(HasSubstr("spec.devices[0].capacity[gpu.deviceshare."
                                    "io/memory-bytes]: Invalid value: "
                                    "\"memory-bytes\"")));
}

TEST(ResourceSliceRulesTest, AnAttributeHasExactlyOneValue) {
  json slice = GoodSlice();
  FirstDevice(slice)["attributes"] = {{"empty", json::object()},
                                      {"two", {{"int", 1}, {"bool", true}}}};
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec.devices[0].attributes[empty]: Required value: "
                          "exactly one value must be specified",
                          "spec.devices[0].attributes[two]: Invalid value: "
                          "{\"bool\":true,\"int\":1}: exactly one value must "
                          "be specified"));
}

TEST(ResourceSliceRulesTest, StringsAndVersionsAreAtMost64) {
  json slice = GoodSlice();
  FirstDevice(slice)["attributes"] = {
      {"s", {{"string", std::string(64, 'x')}}},
      {"v", {{"version", "1.0.0-" + std::string(58, 'a')}}}};
  EXPECT_THAT(Errors(slice), IsEmpty());
  FirstDevice(slice)["attributes"] = {
      {"s", {{"string", std::string(65, 'x')}}},
      {"v", {{"version", "1.0.0-" + std::string(59, 'a')}}}};
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec.devices[0].attributes[s].string: Too long: may "
                          "not be more than 64 bytes",
                          "spec.devices[0].attributes[v].version: Too long: "
                          "may not be more than 64 bytes"));
}

TEST(ResourceSliceRulesTest, VersionsAreSemVer) {
  json slice = GoodSlice();
  FirstDevice(slice)["attributes"] = {{"v", {{"version", "570.86"}}}};
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec.devices[0].attributes[v].version: Invalid "
                          "value: \"570.86\": must be a string compatible with "
                          "semver.org spec 2.0.0"));
  EXPECT_TRUE(IsSemVer("1.2.3"));
  EXPECT_TRUE(IsSemVer("1.2.3-rc.1+build.5"));
  EXPECT_TRUE(IsSemVer("0.0.0-alpha-1"));
  EXPECT_FALSE(IsSemVer("v1.2.3"));
  EXPECT_FALSE(IsSemVer("01.2.3"));
  EXPECT_FALSE(IsSemVer("1.2.3-01"));
  EXPECT_FALSE(IsSemVer("1.2"));
  EXPECT_FALSE(IsSemVer("1.2.3+"));
}

TEST(ResourceSliceRulesTest, CapacityValuesAreQuantities) {
  json slice = GoodSlice();
  FirstDevice(slice)["capacity"]["memory"]["value"] = "80K";
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec.devices[0].capacity[memory].value: Invalid "
                          "value: \"80K\": unable to parse quantity's "
                          "suffix"));
  FirstDevice(slice)["capacity"]["memory"]["value"] = "80GB";
  EXPECT_THAT(Errors(slice),
              ElementsAre(HasSubstr("quantities must match the regular "
                                    "expression")));
  FirstDevice(slice)["capacity"]["memory"]["value"] = 85899345920;
  EXPECT_THAT(Errors(slice), IsEmpty());
}

TEST(ResourceSliceRulesTest, QuantitySyntax) {
  auto parses = [](const char* text) {
    return ParseQuantity(text, nullptr).has_value();
  };
  for (const char* good :
       {"0",    "1",   "+1",  "-1",  "1.5", ".5",  "5.",   "100m", "2n",
        "3u",   "4k",  "5M",  "6G",  "7T",  "8P",  "9E",   "1Ki",  "1Mi",
        "80Gi", "1Ti", "1Pi", "1Ei", "1e3", "1E3", "1e-3", "1e+3", "1.5e2"}) {
    EXPECT_TRUE(parses(good)) << good;
  }
  for (const char* bad : {"", "Gi", "1GB", "1K", "1ki", "1 Gi", "1.2.3", "1e",
                          "1Gi3", "0x10", "--1", "1e1.5"}) {
    EXPECT_FALSE(parses(bad)) << bad;
  }
  EXPECT_EQ(ParseQuantity("80Gi", nullptr)->Value(), 80LL << 30);
  EXPECT_EQ(ParseQuantity("1.5k", nullptr)->Value(), 1500);
  EXPECT_EQ(ParseQuantity("1e3", nullptr)->Value(), 1000);
  EXPECT_EQ(ParseQuantity("100m", nullptr)->Value(), 1);  // rounded up
  EXPECT_EQ(
      ParseQuantity("1Ki", nullptr)->Compare(*ParseQuantity("1024", nullptr)),
      0);
  EXPECT_LT(
      ParseQuantity("999m", nullptr)->Compare(*ParseQuantity("1", nullptr)), 0);
}

TEST(ResourceSliceRulesTest, RequestPolicyNeedsMultipleAllocations) {
  json slice = WithPolicy({{"default", "1Gi"}});
  FirstDevice(slice)["allowMultipleAllocations"] = false;
  EXPECT_THAT(Errors(slice),
              ElementsAre(absl::StrCat(kPolicy,
                                       ": Forbidden: "
                                       "allowMultipleAllocations must "
                                       "be true")));
  FirstDevice(slice)["allowMultipleAllocations"] = true;
  EXPECT_THAT(Errors(slice), IsEmpty());
}

TEST(ResourceSliceRulesTest, RequestPolicyHasAtMostOneOfRangeAndValues) {
  EXPECT_THAT(
      Errors(WithPolicy({{"default", "1Gi"},
                         {"validRange", {{"min", "1Gi"}}},
                         {"validValues", json::array({"1Gi"})}})),
      ElementsAre(absl::StrCat(kPolicy,
                               ": Forbidden: exactly one policy can be "
                               "specified, cannot specify \"validValues\" and "
                               "\"validRange\" at the same time")));
}

TEST(ResourceSliceRulesTest, RequestPolicyNeedsADefault) {
  EXPECT_THAT(Errors(WithPolicy({{"validRange", {{"min", "1Gi"}}}})),
              ElementsAre(absl::StrCat(kPolicy,
                                       ".default: Required value: required "
                                       "when validRange is defined")));
  EXPECT_THAT(Errors(WithPolicy({{"validValues", json::array({"1Gi"})}})),
              ElementsAre(absl::StrCat(kPolicy,
                                       ".default: Required value: required "
                                       "when validValues is defined")));
}

TEST(ResourceSliceRulesTest, ValidRangeHoldsItsDefault) {
  EXPECT_THAT(Errors(WithPolicy(
                  {{"default", "1Gi"},
                   {"validRange",
                    {{"min", "1Gi"}, {"max", "80Gi"}, {"step", "1Gi"}}}})),
              IsEmpty());
  EXPECT_THAT(
      Errors(WithPolicy({{"default", "512Mi"},
                         {"validRange", {{"min", "1Gi"}, {"max", "80Gi"}}}})),
      ElementsAre(absl::StrCat(kPolicy,
                               ".validRange.min: Invalid value: \"512Mi\": "
                               "default is less than min: 1Gi")));
  EXPECT_THAT(
      Errors(WithPolicy({{"default", "2Gi"},
                         {"validRange", {{"min", "1Gi"}, {"max", "1Gi"}}}})),
      ElementsAre(absl::StrCat(kPolicy,
                               ".validRange.max: Invalid value: \"2Gi\": "
                               "default is more than max: 1Gi")));
  EXPECT_THAT(
      Errors(WithPolicy({{"default", "1Gi"},
                         {"validRange", {{"min", "1Gi"}, {"max", "100Gi"}}}})),
      ElementsAre(absl::StrCat(kPolicy,
                               ".validRange.max: Invalid value: \"100Gi\": "
                               "max is larger than capacity value: 80Gi")));
  EXPECT_THAT(
      Errors(WithPolicy({{"default", "2Gi"},
                         {"validRange", {{"min", "2Gi"}, {"max", "1Gi"}}}})),
      ElementsAre(
          absl::StrCat(kPolicy,
                       ".validRange.max: Invalid value: \"2Gi\": min is larger "
                       "than max: 1Gi"),
          absl::StrCat(kPolicy,
                       ".validRange.max: Invalid value: \"2Gi\": default is "
                       "more than max: 1Gi")));
}

TEST(ResourceSliceRulesTest, ValidRangeStepsFromMin) {
  EXPECT_THAT(
      Errors(WithPolicy(
          {{"default", "3"},
           {"validRange", {{"min", "1"}, {"max", "7"}, {"step", "2"}}}})),
      IsEmpty());
  EXPECT_THAT(
      Errors(WithPolicy(
          {{"default", "2"},
           {"validRange", {{"min", "1"}, {"max", "8"}, {"step", "2"}}}})),
      ElementsAre(absl::StrCat(kPolicy,
                               ".validRange.step: Invalid value: \"2\": value "
                               "is not a multiple of a given step (2) from "
                               "(1)"),
                  absl::StrCat(kPolicy,
                               ".validRange.step: Invalid value: \"8\": value "
                               "is not a multiple of a given step (2) from "
                               "(1)")));
}

TEST(ResourceSliceRulesTest, ValidValuesAreFewSortedAndHoldTheDefault) {
  EXPECT_THAT(
      Errors(WithPolicy({{"default", "2Gi"},
                         {"validValues", json::array({"1Gi", "2Gi", "4Gi"})}})),
      IsEmpty());
  EXPECT_THAT(
      Errors(WithPolicy(
          {{"default", "2Gi"}, {"validValues", json::array({"1Gi", "4Gi"})}})),
      ElementsAre(absl::StrCat(kPolicy,
                               ".validValues: Invalid value: \"2Gi\": default "
                               "value is not valid according to the "
                               "requestPolicy")));
  EXPECT_THAT(
      Errors(WithPolicy(
          {{"default", "1Gi"}, {"validValues", json::array({"2Gi", "1Gi"})}})),
      ElementsAre(absl::StrCat(kPolicy,
                               ".validValues[1]: Invalid value: \"1Gi\": "
                               "values must be sorted in ascending order")));
  json eleven = json::array();
  for (int i = 1; i <= 11; ++i) eleven.push_back(absl::StrCat(i, "Gi"));
  EXPECT_THAT(Errors(WithPolicy({{"default", "1Gi"}, {"validValues", eleven}})),
              ElementsAre(absl::StrCat(kPolicy,
                                       ".validValues: Too many: 11: must have "
                                       "at most 10 items"),
                          HasSubstr("default value is not valid")));
}

TEST(ResourceSliceRulesTest, AtMost16TaintsWithAKnownEffect) {
  json slice = GoodSlice();
  json& taints = FirstDevice(slice)["taints"];
  taints[0]["effect"] = "PreferNoSchedule";
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec.devices[0].taints[0].effect: Unsupported "
                          "value: \"PreferNoSchedule\": supported values: "
                          "\"NoExecute\", \"NoSchedule\""));
  taints[0]["effect"] = "NoExecute";
  taints[0]["value"] = "bad value";
  EXPECT_THAT(Errors(slice),
              ElementsAre(HasSubstr("spec.devices[0].taints[0].value: Invalid "
                                    "value: \"bad value\": a valid label")));
  taints[0].erase("value");
  for (int i = 1; i < kDeviceMaxTaints; ++i) taints.push_back(taints[0]);
  EXPECT_THAT(Errors(slice), IsEmpty());
  taints.push_back(taints[0]);
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec.devices[0].taints: Too many: 17: must have at "
                          "most 16 items"));
}

TEST(ResourceSliceRulesTest, CounterSetsAreUniqueDnsLabels) {
  json slice = GoodCounterSlice();
  json& sets = Spec(slice)["sharedCounters"];
  sets.push_back(sets[0]);
  sets.push_back(CounterSet("GPU_1"));
  // Declarative errors: the duplicate (shown whole) before the items'.
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec.sharedCounters[1]: Duplicate value: "
                          "{\"name\":\"gpu-0\",\"counters\":{\"memory\":"
                          "{\"value\":\"80Gi\"}}}",
                          absl::StrCat("spec.sharedCounters[2].name: Invalid "
                                       "value: \"GPU_1\": ",
                                       kLabelMessage)));
  sets[2].erase("name");
  EXPECT_THAT(Errors(slice),
              ElementsAre(HasSubstr("Duplicate value"),
                          "spec.sharedCounters[2].name: Required value"));
}

TEST(ResourceSliceRulesTest, CounterNamesAreDnsLabelsWithQuantities) {
  json slice = GoodCounterSlice();
  Spec(slice)["sharedCounters"][0]["counters"]["multi_processors"] = {
      {"value", "132"}};
  Spec(slice)["sharedCounters"][0]["counters"]["copy-engines"] = {
      {"value", "seven"}};
  // The quantity is hand-written validation, the name declarative (after
  // it, and on the map rather than the key).
  EXPECT_THAT(
      Errors(slice),
      ElementsAre(
          "spec.sharedCounters[0].counters[copy-engines].value: Invalid value: "
          "\"seven\": quantities must match the regular expression "
          "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
          absl::StrCat("spec.sharedCounters[0].counters: Invalid value: "
                       "\"multi_processors\": ",
                       kLabelMessage)));
  Spec(slice)["sharedCounters"][0]["counters"] = json::object();
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec.sharedCounters[0].counters: Required value"));
  // A counter without a value is 0, which is valid.
  Spec(slice)["sharedCounters"][0]["counters"]["memory"] = json::object();
  EXPECT_THAT(Errors(slice), IsEmpty());
}

TEST(ResourceSliceRulesTest, AtMost8CounterSetsOf32Counters) {
  json slice = GoodCounterSlice();
  json& sets = Spec(slice)["sharedCounters"];
  json& counters = sets[0]["counters"];
  for (int i = 1; i < kCounterSetMaxCounters; ++i) {
    counters[absl::StrCat("c", i)] = {{"value", "1"}};
  }
  // 32 counters in each of 8 sets: the limits are per set now (1.34 had
  // 32 over the slice).
  for (int i = 1; i < kSliceMaxCounterSets; ++i) {
    sets.push_back(sets[0]);
    sets.back()["name"] = absl::StrCat("gpu-", i);
  }
  EXPECT_THAT(Errors(slice), IsEmpty());
  sets[1]["counters"]["c32"] = {{"value", "1"}};
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec.sharedCounters[1].counters: Too many: 33: "
                          "must have at most 32 items"));
  sets[1]["counters"].erase("c32");
  // A ninth set is the one error: the sets are not looked into.
  sets.push_back(CounterSet("GPU_8"));
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec.sharedCounters: Too many: 9: must have at most "
                          "8 items"));
}

TEST(ResourceSliceRulesTest, ConsumedCounterSetsLiveInOtherSlices) {
  json slice = GoodSlice();
  // Neither the set nor the counter is in this slice: the server cannot
  // tell, so it does not check.
  FirstDevice(slice)["consumesCounters"][0]["counterSet"] = "gpu-9";
  Spec(slice)["devices"][1]["consumesCounters"][0]["counters"]["cores"] = {
      {"value", "1"}};
  EXPECT_THAT(Errors(slice), IsEmpty());
  FirstDevice(slice)["consumesCounters"][0]["counterSet"] = "";
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec.devices[0].consumesCounters[0].counterSet: "
                          "Required value"));
  FirstDevice(slice)["consumesCounters"][0]["counterSet"] = "GPU_9";
  FirstDevice(slice)["consumesCounters"][0]["counters"] = json::object();
  EXPECT_THAT(
      Errors(slice),
      ElementsAre(absl::StrCat("spec.devices[0].consumesCounters[0]."
                               "counterSet: Invalid value: \"GPU_9\": ",
                               kLabelMessage),
                  "spec.devices[0].consumesCounters[0].counters: Required "
                  "value"));
}

TEST(ResourceSliceRulesTest, AtMost2ConsumptionsOf32CountersPerDevice) {
  json slice = GoodSlice();
  json& entries = FirstDevice(slice)["consumesCounters"];
  json& consumed = entries[0]["counters"];
  for (int i = 1; i < kConsumptionMaxCounters; ++i) {
    consumed[absl::StrCat("c", i)] = {{"value", "1"}};
  }
  entries.push_back(Consumption("gpu-1"));
  EXPECT_THAT(Errors(slice), IsEmpty());
  consumed["c32"] = {{"value", "1"}};
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec.devices[0].consumesCounters[0].counters: Too "
                          "many: 33: must have at most 32 items"));
  consumed.erase("c32");
  // A third entry is the one error: the entries are not looked into.
  entries.push_back(Consumption("GPU_2"));
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec.devices[0].consumesCounters: Too many: 3: "
                          "must have at most 2 items"));
}

TEST(ResourceSliceRulesTest, ADeviceConsumesFromACounterSetOnce) {
  json slice = GoodSlice();
  FirstDevice(slice)["consumesCounters"].push_back(Consumption("gpu-0"));
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec.devices[0].consumesCounters[1]: Duplicate "
                          "value: {\"counterSet\":\"gpu-0\",\"counters\":"
                          "{\"memory\":{\"value\":\"1\"}}}"));
}

TEST(ResourceSliceRulesTest, DeclarativeCounterErrorsComeLast) {
  json slice = GoodSlice();
  Spec(slice)["sharedCounters"] = json::array({CounterSet("gpu-0")});
  Spec(slice)["sharedCounters"].push_back(CounterSet("gpu-0"));
  FirstDevice(slice)["consumesCounters"].push_back(Consumption("gpu-0"));
  FirstDevice(slice)["name"] = "GPU_0";
  EXPECT_THAT(
      Errors(slice),
      ElementsAre(HasSubstr("only one of"),
                  HasSubstr("spec.devices[0].name: Invalid value: \"GPU_0\""),
                  HasSubstr("spec.devices[0].consumesCounters[1]: Duplicate"),
                  HasSubstr("spec.sharedCounters[1]: Duplicate")));
}

TEST(ResourceSliceRulesTest, UpdatesKeepDriverPoolAndNode) {
  const json old = GoodSlice();
  json slice = old;
  EXPECT_THAT(ValidateResourceSliceUpdate(slice, old), IsEmpty());
  Spec(slice)["pool"]["generation"] = 5;
  EXPECT_THAT(ValidateResourceSliceUpdate(slice, old), IsEmpty());
  Spec(slice)["driver"] = "other.example.com";
  Spec(slice)["pool"]["name"] = "node-2";
  Spec(slice)["nodeName"] = "node-2";
  std::vector<std::string> errors;
  for (const FieldError& error : ValidateResourceSliceUpdate(slice, old)) {
    errors.push_back(error.ToString());
  }
  EXPECT_THAT(errors,
              ElementsAre("spec.driver: Invalid value: \"other.example.com\": "
                          "field is immutable",
                          "spec.pool.name: Invalid value: \"node-2\": field is "
                          "immutable",
                          "spec.nodeName: Invalid value: \"node-2\": field is "
                          "immutable"));
}

TEST(ResourceSliceRulesTest, WrongJsonTypesAreFieldErrors) {
  json slice = GoodSlice();
  Spec(slice)["devices"] = "gpu-0";
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec.devices: Invalid value: \"gpu-0\": must be a "
                          "list"));
  slice = GoodSlice();
  FirstDevice(slice)["attributes"]["index"] = {{"int", "0"}};
  EXPECT_THAT(Errors(slice),
              ElementsAre("spec.devices[0].attributes[index].int: Invalid "
                          "value: \"0\": must be an integer"));
}

TEST(FieldErrorsTest, AnInvalidMessageAggregatesAsTheServerDoes) {
  const FieldPath spec("spec");
  EXPECT_EQ(InvalidMessage("ResourceSlice.resource.k8s.io", "x", {}),
            "ResourceSlice.resource.k8s.io \"x\" is invalid");
  EXPECT_EQ(InvalidMessage("ResourceSlice.resource.k8s.io", "x",
                           {Required(spec.Child("driver"), "")}),
            "ResourceSlice.resource.k8s.io \"x\" is invalid: spec.driver: "
            "Required value");
  const FieldError twice = TooMany(spec.Child("devices"), 129, 128);
  EXPECT_EQ(
      InvalidMessage("Kind.group", "x", {twice, twice, Forbidden(spec, "no")}),
      "Kind.group \"x\" is invalid: [spec.devices: Too many: 129: must "
      "have at most 128 items, spec: Forbidden: no]");
  EXPECT_EQ(
      InvalidString(spec.Child("a").Index(2).Key("k/x"), "say \"hi\"\n", "d")
          .ToString(),
      "spec.a[2][k/x]: Invalid value: \"say \\\"hi\\\"\\n\": d");
  const nlohmann::json status =
      InvalidStatus("resource.k8s.io", "ResourceSlice", "x", {twice});
  EXPECT_EQ(status["code"], 422);
  EXPECT_EQ(status["details"]["causes"][0]["reason"], "FieldValueTooMany");
  EXPECT_EQ(status["details"]["causes"][0]["message"],
            "Too many: 129: must have at most 128 items");
}

TEST(ValueFormatsTest, NamesAndLabels) {
  EXPECT_THAT(DnsLabelErrors("gpu-0"), IsEmpty());
  EXPECT_THAT(DnsLabelErrors("-gpu"), SizeIs(1));
  EXPECT_THAT(DnsLabelErrors(std::string(64, 'a')),
              ElementsAre("must be no more than 63 characters"));
  EXPECT_THAT(DnsSubdomainErrors("gpu.deviceshare.io"), IsEmpty());
  EXPECT_THAT(DnsSubdomainErrors("gpu..io"), SizeIs(1));
  EXPECT_THAT(CIdentifierErrors("_memory0"), IsEmpty());
  EXPECT_THAT(CIdentifierErrors("0memory"), SizeIs(1));
  EXPECT_THAT(QualifiedNameErrors("example.com/Key_1.x"), IsEmpty());
  EXPECT_THAT(QualifiedNameErrors("/x"),
              ElementsAre("prefix part must be non-empty"));
  EXPECT_THAT(QualifiedNameErrors("a/b/c"), SizeIs(1));
  EXPECT_THAT(LabelValueErrors(""), IsEmpty());
  EXPECT_THAT(LabelValueErrors("-x"), SizeIs(1));
}

}  // namespace
}  // namespace deviceshare::testing
