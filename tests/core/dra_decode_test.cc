// The resource.k8s.io/v1 decoders a DRA allocator reads with: ResourceSlice
// (the inverse of ResourceSliceToJson), DeviceClass, ResourceClaim and its
// template with the API's validation limits, a Pod's resourceClaims, and the
// allocation a scheduler writes.
#include <cstdint>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "deviceshare/codec/yaml_json.h"
#include "deviceshare/dra/allocated_claim.h"
#include "deviceshare/dra/allocation_json.h"
#include "deviceshare/dra/claim_spec.h"
#include "deviceshare/dra/device_class.h"
#include "deviceshare/dra/resource_slice.h"
#include "deviceshare/dra/slice_decode.h"
#include "deviceshare/dra/slice_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace deviceshare::dra {
namespace {

using ::deviceshare::testing::IsOk;
using ::deviceshare::testing::StatusIs;
using nlohmann::json;
using ::testing::HasSubstr;

constexpr int64_t kGi = int64_t{1} << 30;
constexpr int64_t kMi = int64_t{1} << 20;

ResourceSlice FullSlice() {
  ResourceSlice slice;
  slice.name = "node-a-gpu.deviceshare.io-0";
  slice.driver = "gpu.deviceshare.io";
  slice.node_name = "node-a";
  slice.pool = {"node-a", 7, 2};
  slice.shared_counters.push_back(
      {"gpu-0-counters",
       {{"memory", {80 * kGi, QuantityFormat::kBinary}},
        {"slices", {7, QuantityFormat::kDecimal}}}});
  Device gpu;
  gpu.name = "gpu-0";
  gpu.allow_multiple_allocations = true;
  gpu.attributes["uuid"] = DeviceAttribute::String("GPU-1");
  gpu.attributes["index"] = DeviceAttribute::Int(0);
  gpu.attributes["mig"] = DeviceAttribute::Bool(false);
  gpu.attributes["driverVersion"] = DeviceAttribute::Version("550.54.15");
  gpu.attributes["resource.kubernetes.io/pcieRoot"] =
      DeviceAttribute::String("pci0000:00");
  gpu.capacity["memory"] =
      DeviceCapacity{80 * kGi, QuantityFormat::kBinary,
                     RequestPolicy{80 * kGi, kMi, 80 * kGi, kMi, {}}};
  gpu.capacity["cores"] = DeviceCapacity{100, QuantityFormat::kDecimal,
                                         RequestPolicy{100, 1, 100, 0, {}}};
  gpu.capacity["shares"] = DeviceCapacity{4, QuantityFormat::kDecimal,
                                          RequestPolicy{1, 0, 0, 0, {1, 2, 4}}};
  gpu.capacity["plain"] = DeviceCapacity{3, QuantityFormat::kDecimal, {}};
  slice.devices.push_back(gpu);
  Device mig;
  mig.name = "gpu-0-mig-1g10gb-3";
  mig.attributes["profile"] = DeviceAttribute::String("1g.10gb");
  mig.capacity["memory"] =
      DeviceCapacity{10 * kGi, QuantityFormat::kBinary, {}};
  mig.consumes_counters.push_back(
      {"gpu-0-counters",
       {{"memory", {10 * kGi, QuantityFormat::kBinary}},
        {"slices", {1, QuantityFormat::kDecimal}}}});
  slice.devices.push_back(mig);
  return slice;
}

// --- ResourceSlice --------------------------------------------------------

TEST(DecodeResourceSliceTest, RoundTripsWhatTheEncoderWrites) {
  const ResourceSlice slice = FullSlice();
  absl::StatusOr<DecodedSlice> decoded =
      DecodeResourceSlice(ResourceSliceToJson(slice));
  ASSERT_THAT(decoded.status(), IsOk());
  EXPECT_EQ(decoded->slice, slice);
  EXPECT_FALSE(decoded->all_nodes);
  EXPECT_TRUE(decoded->node_selector.is_null());
}

TEST(DecodeResourceSliceTest, ReadsNodeSelectionAndIgnoresUnknownFields) {
  json body = ResourceSliceToJson(FullSlice());
  body["spec"].erase("nodeName");
  body["spec"]["allNodes"] = true;
  body["spec"]["nodeSelector"] = {{"nodeSelectorTerms", json::array()}};
  body["spec"]["futureField"] = {{"x", 1}};
  body["spec"]["devices"][0]["futureField"] = "y";
  absl::StatusOr<DecodedSlice> decoded = DecodeResourceSlice(body);
  ASSERT_THAT(decoded.status(), IsOk());
  EXPECT_TRUE(decoded->all_nodes);
  EXPECT_EQ(decoded->node_selector,
            json({{"nodeSelectorTerms", json::array()}}));
  EXPECT_EQ(decoded->slice.node_name, "");
}

TEST(DecodeResourceSliceTest, ARangeWithoutMaxIsBoundedByTheCapacity) {
  // validRange.max is optional in resource.k8s.io/v1; left at 0 it would
  // refuse every request (found by simulate's object-form golden test).
  json body = ResourceSliceToJson(FullSlice());
  json& memory = body["spec"]["devices"][0]["capacity"]["memory"];
  memory["requestPolicy"]["validRange"].erase("max");
  absl::StatusOr<DecodedSlice> decoded = DecodeResourceSlice(body);
  ASSERT_THAT(decoded.status(), IsOk());
  const DeviceCapacity& capacity =
      decoded->slice.devices[0].capacity.at("memory");
  ASSERT_TRUE(capacity.policy.has_value());
  EXPECT_EQ(capacity.policy->max, capacity.value);
}

TEST(DecodeQuantityTest, RoundsUpAndRemembersTheFormat) {
  EXPECT_EQ(*DecodeQuantity("80Gi", "q"),
            (CapacityAmount{80 * kGi, QuantityFormat::kBinary}));
  EXPECT_EQ(*DecodeQuantity("1500m", "q"),
            (CapacityAmount{2, QuantityFormat::kDecimal}));
  EXPECT_EQ(*DecodeQuantity("2k", "q"),
            (CapacityAmount{2000, QuantityFormat::kDecimal}));
  EXPECT_EQ(*DecodeQuantity(json(5), "q"),
            (CapacityAmount{5, QuantityFormat::kDecimal}));
  EXPECT_THAT(DecodeQuantity(json(1.5), "q").status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("q: 1.5 is not a quantity")));
}

TEST(DecodeResourceSliceTest, WrongTypesNameThePath) {
  struct Case {
    std::function<void(json&)> mutate;
    std::string error;
  };
  const std::vector<Case> cases = {
      {[](json& b) {
         b["spec"]["devices"][1]["capacity"]["memory"]["value"] = "x";
       },
       "spec.devices[1].capacity[memory].value: \"x\""},
      {[](json& b) {
         b["spec"]["devices"][0]["attributes"]["index"] = {{"int", "0"}};
       },
       "spec.devices[0].attributes[index].int: \"0\" is not an integer"},
      {[](json& b) {
         b["spec"]["devices"][0]["attributes"]["index"] = {{"int", 1},
                                                           {"bool", true}};
       },
       "spec.devices[0].attributes[index]"},
      {[](json& b) {
         b["spec"]["devices"][0]["attributes"]["index"] = json::object();
       },
       "spec.devices[0].attributes[index]"},
      {[](json& b) { b["spec"]["pool"]["generation"] = "7"; },
       "spec.pool.generation: \"7\" is not an integer"},
      {[](json& b) { b["spec"]["pool"].erase("name"); },
       "spec.pool.name: missing"},
      {[](json& b) { b["spec"].erase("driver"); }, "spec.driver: missing"},
      {[](json& b) { b["spec"]["devices"] = json::object(); },
       "spec.devices: {} is not an array"},
      {[](json& b) { b["spec"]["allNodes"] = "yes"; },
       "spec.allNodes: \"yes\" is not a bool"},
      {[](json& b) {
         b["spec"]["sharedCounters"][0]["counters"]["slices"]["value"] = true;
       },
       "spec.sharedCounters[0].counters[slices].value: true"},
      {[](json& b) {
         b["spec"]["devices"][1]["consumesCounters"][0].erase("counterSet");
       },
       "spec.devices[1].consumesCounters[0].counterSet: missing"},
      {[](json& b) {
         b["spec"]["devices"][0]["capacity"]["shares"]["requestPolicy"]
          ["validValues"][1] = "-";
       },
       "spec.devices[0].capacity[shares].requestPolicy.validValues[1]"},
      {[](json& b) {
         b["spec"]["devices"][0]["capacity"]["memory"]["requestPolicy"]
          ["validRange"]["step"] = json::array();
       },
       "spec.devices[0].capacity[memory].requestPolicy.validRange.step"},
      {[](json& b) { b.erase("metadata"); }, "metadata: missing"},
  };
  for (const Case& c : cases) {
    json body = ResourceSliceToJson(FullSlice());
    c.mutate(body);
    EXPECT_THAT(
        DecodeResourceSlice(body).status(),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.error)))
        << body.dump();
  }
}

// --- DeviceClass ----------------------------------------------------------

TEST(DecodeDeviceClassTest, ReadsSelectorsConfigAndExtendedResource) {
  const json body = {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "DeviceClass"},
      {"metadata", {{"name", "mps.gpu.deviceshare.io"}}},
      {"spec",
       {{"selectors",
         {{{"cel",
            {{"expression", "device.driver == \"gpu.deviceshare.io\""}}}}}},
        {"config",
         {{{"opaque",
            {{"driver", "gpu.deviceshare.io"},
             {"parameters", {{"sharing", "mps"}}}}}}}},
        {"extendedResourceName", "deviceshare.io/gpu"}}}};
  absl::StatusOr<DeviceClass> decoded = DecodeDeviceClass(body);
  ASSERT_THAT(decoded.status(), IsOk());
  EXPECT_EQ(decoded->name, "mps.gpu.deviceshare.io");
  EXPECT_EQ(decoded->selectors, std::vector<std::string>{
                                    "device.driver == \"gpu.deviceshare.io\""});
  ASSERT_EQ(decoded->config.size(), 1u);
  EXPECT_EQ(decoded->config[0]["opaque"]["parameters"]["sharing"], "mps");
  EXPECT_EQ(decoded->extended_resource_name, "deviceshare.io/gpu");

  json bad = body;
  bad["spec"]["selectors"][0]["cel"]["expression"] = 3;
  EXPECT_THAT(DecodeDeviceClass(bad).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.selectors[0].cel.expression: 3 is not "
                                 "a string")));
  bad = body;
  bad["spec"]["selectors"] = json::array();
  for (int i = 0; i < 33; ++i) {
    bad["spec"]["selectors"].push_back({{"cel", {{"expression", "true"}}}});
  }
  EXPECT_THAT(DecodeDeviceClass(bad).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.selectors: 33 selectors, more than "
                                 "32")));
}

// --- ResourceClaim --------------------------------------------------------

json Claim() {
  return json::parse(R"({
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
    "metadata": {"name": "c", "namespace": "ns", "uid": "u-1"},
    "spec": {"devices": {
      "requests": [
        {"name": "a", "exactly": {
          "deviceClassName": "gpu.deviceshare.io",
          "selectors": [{"cel": {"expression": "device.attributes[\"gpu.deviceshare.io\"].index == 0"}}],
          "count": 2, "adminAccess": true,
          "capacity": {"requests": {"memory": "4Gi", "cores": "30"}}}},
        {"name": "b", "firstAvailable": [
          {"name": "big", "deviceClassName": "gpu.deviceshare.io",
           "allocationMode": "All"},
          {"name": "small", "deviceClassName": "mps.gpu.deviceshare.io"}]}],
      "constraints": [
        {"requests": ["a", "b/small"],
         "distinctAttribute": "gpu.deviceshare.io/uuid"},
        {"matchAttribute": "resource.kubernetes.io/pcieRoot"}],
      "config": [
        {"requests": ["b"], "opaque": {"driver": "gpu.deviceshare.io",
                                       "parameters": {"x": 1}}}]}},
    "status": {
      "allocation": {"devices": {"results": []}},
      "reservedFor": [{"resource": "pods", "name": "p", "uid": "pod-1"}]}
  })");
}

TEST(DecodeResourceClaimTest, ReadsEveryField) {
  absl::StatusOr<ResourceClaim> claim = DecodeResourceClaim(Claim());
  ASSERT_THAT(claim.status(), IsOk());
  EXPECT_EQ(claim->ns, "ns");
  EXPECT_EQ(claim->name, "c");
  EXPECT_EQ(claim->uid, "u-1");
  ASSERT_EQ(claim->spec.requests.size(), 2u);
  const DeviceRequest& a = claim->spec.requests[0];
  ASSERT_TRUE(a.exactly.has_value());
  EXPECT_EQ(a.exactly->device_class, "gpu.deviceshare.io");
  EXPECT_EQ(a.exactly->selectors.size(), 1u);
  EXPECT_EQ(a.exactly->mode, ExactRequest::kExactCount);
  EXPECT_EQ(a.exactly->count, 2);
  EXPECT_TRUE(a.exactly->admin_access);
  EXPECT_EQ(a.exactly->capacity, (std::map<std::string, int64_t>{
                                     {"cores", 30}, {"memory", 4 * kGi}}));
  const DeviceRequest& b = claim->spec.requests[1];
  EXPECT_FALSE(b.exactly.has_value());
  ASSERT_EQ(b.first_available.size(), 2u);
  EXPECT_EQ(b.first_available[0].name, "big");
  EXPECT_EQ(b.first_available[0].exactly.mode, ExactRequest::kAll);
  EXPECT_EQ(b.first_available[1].exactly.count, 1);
  ASSERT_EQ(claim->spec.constraints.size(), 2u);
  EXPECT_EQ(claim->spec.constraints[0].requests,
            (std::vector<std::string>{"a", "b/small"}));
  EXPECT_EQ(claim->spec.constraints[0].distinct_attribute,
            "gpu.deviceshare.io/uuid");
  EXPECT_EQ(claim->spec.constraints[1].match_attribute,
            "resource.kubernetes.io/pcieRoot");
  ASSERT_EQ(claim->spec.config.size(), 1u);
  EXPECT_EQ(claim->spec.config[0].opaque["parameters"]["x"], 1);
  EXPECT_EQ(claim->allocation,
            json({{"devices", {{"results", json::array()}}}}));
  EXPECT_EQ(claim->reserved_for_uids, std::vector<std::string>{"pod-1"});
}

TEST(DecodeResourceClaimTest, AnUnallocatedClaimHasNullAllocation) {
  json body = Claim();
  body.erase("status");
  absl::StatusOr<ResourceClaim> claim = DecodeResourceClaim(body);
  ASSERT_THAT(claim.status(), IsOk());
  EXPECT_TRUE(claim->allocation.is_null());
  EXPECT_TRUE(claim->reserved_for_uids.empty());
}

json Requests(int n) {
  json out = json::array();
  for (int i = 0; i < n; ++i) {
    out.push_back({{"name", "r" + std::to_string(i)},
                   {"exactly", {{"deviceClassName", "c"}}}});
  }
  return out;
}

TEST(DecodeResourceClaimTest, EachLimitNamesTheField) {
  const std::string r = "spec.devices.requests";
  struct Case {
    std::function<void(json&)> mutate;
    std::string error;
  };
  const std::vector<Case> cases = {
      {[](json& d) { d["requests"] = Requests(33); },
       r + ": 33 requests, more than 32"},
      {[](json& d) { d["requests"][1]["name"] = "B"; },
       r + "[1].name: \"B\" is not a DNS label"},
      {[](json& d) { d["requests"][1]["name"] = "a"; },
       r + "[1].name: \"a\" is not unique"},
      {[](json& d) { d["requests"][0].erase("name"); },
       r + "[0].name: missing"},
      {[](json& d) { d["requests"][0]["exactly"]["count"] = 0 - 1; },
       r + "[0].exactly.count: -1 is less than 1"},
      {[](json& d) { d["requests"][0]["exactly"]["count"] = "2"; },
       r + "[0].exactly.count: \"2\" is not an integer"},
      {[](json& d) { d["requests"][0]["exactly"]["allocationMode"] = "All"; },
       r + "[0].exactly.count: 2 must not be set with allocationMode All"},
      {[](json& d) { d["requests"][0]["exactly"]["allocationMode"] = "Some"; },
       r + "[0].exactly.allocationMode: \"Some\" is not ExactCount or All"},
      {[](json& d) { d["requests"][0]["exactly"].erase("deviceClassName"); },
       r + "[0].exactly.deviceClassName: missing"},
      {[](json& d) {
         json& s = d["requests"][0]["exactly"]["selectors"];
         for (int i = 0; i < 32; ++i) s.push_back(s[0]);
       },
       r + "[0].exactly.selectors: 33 selectors, more than 32"},
      {[](json& d) {
         d["requests"][0]["exactly"]["selectors"][0] = {{"cel", "x"}};
       },
       r + "[0].exactly.selectors[0].cel: \"x\" is not an object"},
      {[](json& d) {
         d["requests"][0]["exactly"]["capacity"]["requests"]["memory"] = "4x";
       },
       r + "[0].exactly.capacity.requests[memory]: \"4x\""},
      {[](json& d) { d["requests"][0]["exactly"]["adminAccess"] = "yes"; },
       r + "[0].exactly.adminAccess: \"yes\" is not a bool"},
      {[](json& d) {
         d["requests"][0]["firstAvailable"] =
             d["requests"][1]["firstAvailable"];
       },
       r + "[0]: must have exactly one of exactly and firstAvailable"},
      {[](json& d) { d["requests"][1].erase("firstAvailable"); },
       r + "[1]: must have exactly one of exactly and firstAvailable"},
      {[](json& d) {
         json& f = d["requests"][1]["firstAvailable"];
         for (int i = 0; i < 7; ++i) {
           f.push_back(f[1]);
           f.back()["name"] = "s" + std::to_string(i);
         }
       },
       r + "[1].firstAvailable: 9 subrequests, more than 8"},
      {[](json& d) { d["requests"][1]["firstAvailable"][1]["name"] = "big"; },
       r + "[1].firstAvailable[1].name: \"big\" is not unique"},
      {[](json& d) { d["requests"][1]["firstAvailable"][0]["count"] = 3; },
       r + "[1].firstAvailable[0].count: 3 must not be set"},
      {[](json& d) {
         d["constraints"] = json::array();
         for (int i = 0; i < 33; ++i) {
           d["constraints"].push_back({{"matchAttribute", "a.io/b"}});
         }
       },
       "spec.devices.constraints: 33 constraints, more than 32"},
      {[](json& d) { d["constraints"][0]["requests"][1] = "c"; },
       "spec.devices.constraints[0].requests[1]: \"c\" names no request"},
      {[](json& d) { d["constraints"][0]["requests"][1] = "b/medium"; },
       "spec.devices.constraints[0].requests[1]: \"b/medium\" names no "
       "request"},
      {[](json& d) { d["constraints"][0]["requests"][0] = "a/x"; },
       "spec.devices.constraints[0].requests[0]: \"a/x\" names no request"},
      {[](json& d) { d["constraints"][0]["matchAttribute"] = "x.io/y"; },
       "spec.devices.constraints[0]: must have exactly one of "
       "matchAttribute and distinctAttribute"},
      {[](json& d) { d["constraints"][1].erase("matchAttribute"); },
       "spec.devices.constraints[1]: must have exactly one"},
      {[](json& d) { d["constraints"][1]["matchAttribute"] = "pcieRoot"; },
       "spec.devices.constraints[1].matchAttribute: \"pcieRoot\" is not a "
       "fully qualified name"},
      {[](json& d) { d["constraints"][0]["distinctAttribute"] = "Bad_/x"; },
       "spec.devices.constraints[0].distinctAttribute: \"Bad_/x\""},
      {[](json& d) { d["constraints"][0]["requests"][1] = "a"; },
       "spec.devices.constraints[0].requests[1]: \"a\" is not unique"},
      {[](json& d) { d["config"][0]["requests"][0] = "z"; },
       "spec.devices.config[0].requests[0]: \"z\" names no request"},
      {[](json& d) { d["config"][0].erase("opaque"); },
       "spec.devices.config[0].opaque: missing"},
      {[](json& d) {
         d["config"] = json::array();
         for (int i = 0; i < 33; ++i) {
           d["config"].push_back({{"opaque", {{"driver", "d"}}}});
         }
       },
       "spec.devices.config: 33 configs, more than 32"},
  };
  for (const Case& c : cases) {
    json body = Claim();
    c.mutate(body["spec"]["devices"]);
    EXPECT_THAT(
        DecodeResourceClaim(body).status(),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.error)))
        << body["spec"].dump();
  }
}

TEST(DecodeResourceClaimTest, CountDefaultsToOne) {
  json body = Claim();
  body["spec"]["devices"]["requests"][0]["exactly"].erase("count");
  ASSERT_THAT(DecodeResourceClaim(body).status(), IsOk());
  EXPECT_EQ(DecodeResourceClaim(body)->spec.requests[0].exactly->count, 1);
  body["spec"]["devices"]["requests"][0]["exactly"]["count"] = 0;
  EXPECT_EQ(DecodeResourceClaim(body)->spec.requests[0].exactly->count, 1);
  body["spec"]["devices"]["requests"] = Requests(32);
  body["spec"]["devices"].erase("constraints");
  body["spec"]["devices"].erase("config");
  EXPECT_THAT(DecodeResourceClaim(body).status(), IsOk());
}

TEST(DecodeResourceClaimTemplateTest, ReadsSpecSpecAndNamesItsPath) {
  json body = {
      {"metadata", {{"name", "t"}, {"namespace", "ns"}}},
      {"spec",
       {{"metadata", {{"labels", {{"a", "b"}}}}}, {"spec", Claim()["spec"]}}}};
  absl::StatusOr<ResourceClaimTemplate> decoded =
      DecodeResourceClaimTemplate(body);
  ASSERT_THAT(decoded.status(), IsOk());
  EXPECT_EQ(decoded->name, "t");
  EXPECT_EQ(decoded->ns, "ns");
  EXPECT_EQ(decoded->metadata, json({{"labels", {{"a", "b"}}}}));
  EXPECT_EQ(decoded->spec, DecodeResourceClaim(Claim())->spec);

  body["spec"]["spec"]["devices"]["requests"][0]["name"] = "A";
  EXPECT_THAT(DecodeResourceClaimTemplate(body).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.spec.devices.requests[0].name: \"A\"")));
  body["spec"].erase("spec");
  EXPECT_THAT(DecodeResourceClaimTemplate(body).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.spec: missing")));
}

TEST(DecodePodClaimRefsTest, ReadsEntriesAndChecksThem) {
  json pod = {{"spec",
               {{"resourceClaims",
                 {{{"name", "gpu"}, {"resourceClaimName", "c"}},
                  {{"name", "tpl"}, {"resourceClaimTemplateName", "t"}}}}}}};
  absl::StatusOr<std::vector<PodClaimRef>> refs = DecodePodClaimRefs(pod);
  ASSERT_THAT(refs.status(), IsOk());
  EXPECT_EQ(*refs,
            (std::vector<PodClaimRef>{{"gpu", "c", ""}, {"tpl", "", "t"}}));
  EXPECT_THAT(DecodePodClaimRefs(json::object()), IsOk());

  json bad = pod;
  bad["spec"]["resourceClaims"][1]["resourceClaimName"] = "c";
  EXPECT_THAT(DecodePodClaimRefs(bad).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.resourceClaims[1]: must have exactly "
                                 "one of")));
  bad = pod;
  bad["spec"]["resourceClaims"][1]["name"] = "gpu";
  EXPECT_THAT(DecodePodClaimRefs(bad).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.resourceClaims[1].name: \"gpu\" is "
                                 "not unique")));
  bad = pod;
  bad["spec"]["resourceClaims"][0]["resourceClaimName"] = 1;
  EXPECT_THAT(DecodePodClaimRefs(bad).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.resourceClaims[0].resourceClaimName: "
                                 "1 is not a string")));
}

// --- Allocation -----------------------------------------------------------

TEST(AllocationJsonTest, DecodeAllocatedClaimReadsItBack) {
  AllocationResult allocation;
  allocation.node_name = "node-a";
  allocation.results.push_back({"a",
                                "gpu.deviceshare.io",
                                "node-a",
                                "gpu-0",
                                "share-1",
                                {{"memory", {4 * kGi, QuantityFormat::kBinary}},
                                 {"cores", {30, QuantityFormat::kDecimal}}},
                                false});
  allocation.results.push_back(
      {"b/small", "gpu.deviceshare.io", "node-a", "gpu-1", "", {}, true});
  allocation.config.push_back(
      {{"source", "FromClaim"},
       {"requests", {"b"}},
       {"opaque", {{"driver", "gpu.deviceshare.io"}, {"parameters", {}}}}});
  const json written = AllocationResultToJson(allocation);
  EXPECT_EQ(written["nodeSelector"],
            json::parse(R"({"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In",
                 "values": ["node-a"]}]}]})"));
  EXPECT_EQ(written["devices"]["config"][0]["source"], "FromClaim");
  EXPECT_EQ(written["devices"]["results"][0]["consumedCapacity"]["memory"],
            "4Gi");

  const json claim = {
      {"metadata", {{"name", "c"}, {"namespace", "ns"}, {"uid", "u"}}},
      {"status", {{"allocation", written}}}};
  absl::StatusOr<AllocatedClaim> decoded = DecodeAllocatedClaim(claim);
  ASSERT_THAT(decoded.status(), IsOk());
  ASSERT_EQ(decoded->results.size(), 2u);
  EXPECT_EQ(decoded->results[0],
            (AllocatedDevice{"a",
                             "gpu.deviceshare.io",
                             "node-a",
                             "gpu-0",
                             "share-1",
                             {{"memory", 4 * kGi}, {"cores", 30}},
                             false}));
  EXPECT_EQ(
      decoded->results[1],
      (AllocatedDevice{
          "b/small", "gpu.deviceshare.io", "node-a", "gpu-1", "", {}, true}));

  // And DecodeResourceClaim keeps it whole.
  json full = Claim();
  full["status"]["allocation"] = written;
  EXPECT_EQ(DecodeResourceClaim(full)->allocation, written);

  allocation.node_name.clear();
  EXPECT_FALSE(AllocationResultToJson(allocation).contains("nodeSelector"));
}

// --- The examples ---------------------------------------------------------

std::vector<json> ExampleDocuments() {
  std::vector<json> out;
  for (const char* name :
       {"claim-template.yaml", "one-gpu-claim.yaml", "two-gpu-claim.yaml"}) {
    std::ifstream in(std::string(DEVICESHARE_EXAMPLES_DIR) + "/dra/" + name);
    EXPECT_TRUE(in.good()) << name;
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<std::vector<json>> docs = ParseYamlDocuments(text.str());
    EXPECT_THAT(docs.status(), IsOk()) << name;
    if (docs.ok()) out.insert(out.end(), docs->begin(), docs->end());
  }
  return out;
}

TEST(DraExamplesTest, EveryClaimTemplateAndPodDecodes) {
  int claims = 0, templates = 0, pods = 0;
  for (const json& doc : ExampleDocuments()) {
    const std::string kind = doc.value("kind", "");
    if (kind == "ResourceClaim") {
      EXPECT_THAT(DecodeResourceClaim(doc).status(), IsOk()) << doc.dump();
      ++claims;
    } else if (kind == "ResourceClaimTemplate") {
      EXPECT_THAT(DecodeResourceClaimTemplate(doc).status(), IsOk())
          << doc.dump();
      ++templates;
    } else if (kind == "Pod" || kind == "Deployment") {
      const json& pod = kind == "Pod" ? doc : doc["spec"]["template"];
      absl::StatusOr<std::vector<PodClaimRef>> refs = DecodePodClaimRefs(pod);
      ASSERT_THAT(refs.status(), IsOk()) << doc.dump();
      EXPECT_EQ(refs->size(), 1u);
      ++pods;
    }
  }
  EXPECT_EQ(claims, 2);
  EXPECT_EQ(templates, 1);
  EXPECT_EQ(pods, 3);
}

TEST(DraExamplesTest, TwoGpuClaimKeepsItsRequestsApart) {
  for (const json& doc : ExampleDocuments()) {
    if (doc.value("kind", "") != "ResourceClaim" ||
        doc["metadata"]["name"] != "two-gpus") {
      continue;
    }
    absl::StatusOr<ResourceClaim> claim = DecodeResourceClaim(doc);
    ASSERT_THAT(claim.status(), IsOk());
    ASSERT_EQ(claim->spec.requests.size(), 2u);
    EXPECT_EQ(claim->spec.requests[1].exactly->capacity.at("memory"), 8 * kGi);
    EXPECT_EQ(claim->spec.requests[1].exactly->capacity.at("cores"), 60);
    ASSERT_EQ(claim->spec.constraints.size(), 1u);
    EXPECT_EQ(claim->spec.constraints[0].distinct_attribute,
              "gpu.deviceshare.io/uuid");
    return;
  }
  ADD_FAILURE() << "two-gpus claim not found";
}

// --- Malformed input never throws ----------------------------------------

void CollectPointers(const json& value, const json::json_pointer& at,
                     std::vector<json::json_pointer>& out) {
  out.push_back(at);
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) {
      CollectPointers(child, at / key, out);
    }
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) {
      CollectPointers(value[i], at / i, out);
    }
  }
}

void DecodeAll(const json& body) {
  (void)DecodeResourceSlice(body);
  (void)DecodeDeviceClass(body);
  (void)DecodeResourceClaim(body);
  (void)DecodeResourceClaimTemplate(body);
  (void)DecodePodClaimRefs(body);
  (void)DecodeAllocatedClaim(body);
}

TEST(DraDecodeRobustnessTest, WrongTypesEverywhereNeverThrow) {
  std::vector<json> seeds = {ResourceSliceToJson(FullSlice()), Claim()};
  seeds.push_back(
      {{"metadata", {{"name", "t"}}},
       {"spec", {{"metadata", json::object()}, {"spec", Claim()["spec"]}}}});
  seeds.push_back({{"metadata", {{"name", "d"}}},
                   {"spec",
                    {{"selectors", {{{"cel", {{"expression", "true"}}}}}},
                     {"config", {{{"opaque", {{"driver", "d"}}}}}}}}});
  seeds.push_back({{"spec",
                    {{"resourceClaims",
                      {{{"name", "gpu"}, {"resourceClaimName", "c"}}}}}}});
  const std::vector<json> replacements = {nullptr,
                                          json(1),
                                          json(-1),
                                          json(1.5),
                                          json("x"),
                                          json(true),
                                          json::array(),
                                          json::object(),
                                          json(UINT64_MAX),
                                          json("-1Gi"),
                                          json("99999999999999999999Ei"),
                                          json::array({1, "a", nullptr})};
  int runs = 0;
  for (const json& seed : seeds) {
    std::vector<json::json_pointer> pointers;
    CollectPointers(seed, json::json_pointer(), pointers);
    for (const json::json_pointer& pointer : pointers) {
      for (const json& replacement : replacements) {
        json body = seed;
        body[pointer] = replacement;
        EXPECT_NO_THROW(DecodeAll(body)) << pointer.to_string();
        ++runs;
      }
    }
  }
  EXPECT_GT(runs, 1000);
}

}  // namespace
}  // namespace deviceshare::dra
