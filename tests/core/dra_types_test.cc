// DRA value types (lib/deviceshare/dra): the slice limits, the JSON a slice
// becomes, and the ResourceClaim decoder.
#include <string>
#include <vector>

#include "deviceshare/dra/allocated_claim.h"
#include "deviceshare/dra/resource_slice.h"
#include "deviceshare/dra/slice_json.h"
#include "deviceshare/dra/slice_limits.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace deviceshare::dra {
namespace {

using ::deviceshare::testing::IsOk;
using ::deviceshare::testing::StatusIs;
using ::testing::HasSubstr;

ResourceSlice SharedGpuSlice() {
  ResourceSlice slice;
  slice.name = "node-a-gpu.deviceshare.io-0";
  slice.driver = "gpu.deviceshare.io";
  slice.node_name = "node-a";
  slice.pool = {"node-a", 2, 1};
  Device device;
  device.name = "gpu-0";
  device.allow_multiple_allocations = true;
  device.attributes["uuid"] = DeviceAttribute::String("GPU-1");
  device.attributes["index"] = DeviceAttribute::Int(0);
  device.capacity["memory"] = DeviceCapacity{
      int64_t{80} << 30, QuantityFormat::kBinary,
      RequestPolicy{
          int64_t{80} << 30, 1 << 20, int64_t{80} << 30, 1 << 20, {}}};
  slice.devices.push_back(device);
  return slice;
}

// The counter slice of a MIG pool: `sets` GPUs' counter sets.
ResourceSlice CounterSlice(int sets) {
  ResourceSlice slice = SharedGpuSlice();
  slice.devices.clear();
  for (int i = 0; i < sets; ++i) {
    slice.shared_counters.push_back(
        {"gpu-" + std::to_string(i) + "-counters",
         {{"memory", {int64_t{80} << 30, QuantityFormat::kBinary}},
          {"compute-slices", {7}}}});
  }
  return slice;
}

// A device slice of `devices` partitions of GPU 0, consuming counters of
// its set (which CounterSlice publishes).
ResourceSlice PartitionSlice(int devices) {
  ResourceSlice slice = SharedGpuSlice();
  slice.devices.clear();
  for (int i = 0; i < devices; ++i) {
    Device device;
    device.name = "gpu-0-mig-" + std::to_string(i);
    device.capacity["memory"] = {int64_t{10} << 30, QuantityFormat::kBinary};
    device.consumes_counters.push_back(
        {"gpu-0-counters",
         {{"memory", {int64_t{10} << 30, QuantityFormat::kBinary}},
          {"compute-slices", {1}}}});
    slice.devices.push_back(device);
  }
  return slice;
}

TEST(SliceLimitsTest, AValidSlicePasses) {
  EXPECT_THAT(CheckSliceLimits(SharedGpuSlice()), IsOk());
}

TEST(SliceLimitsTest, EachLimitNamesTheField) {
  ResourceSlice slice = SharedGpuSlice();
  slice.devices[0].name = "GPU_0";
  EXPECT_THAT(CheckSliceLimits(slice),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.devices[0].name: \"GPU_0\"")));

  slice = SharedGpuSlice();
  slice.devices[0].allow_multiple_allocations = false;
  EXPECT_THAT(
      CheckSliceLimits(slice),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("requestPolicy")));

  slice = SharedGpuSlice();
  slice.devices[0].capacity["memory"].policy->default_value = 3;
  EXPECT_THAT(
      CheckSliceLimits(slice),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("default")));

  slice = SharedGpuSlice();
  for (int i = 0; i < 31; ++i) {
    slice.devices[0].attributes["a" + std::to_string(i)] =
        DeviceAttribute::Bool(true);
  }
  EXPECT_THAT(
      CheckSliceLimits(slice),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("more than 32")));

  slice = SharedGpuSlice();
  slice.devices.resize(129, slice.devices[0]);
  for (size_t i = 0; i < slice.devices.size(); ++i) {
    slice.devices[i].name = "gpu-" + std::to_string(i);
  }
  EXPECT_THAT(
      CheckSliceLimits(slice),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("more than 128")));

  slice = SharedGpuSlice();
  slice.devices[0].attributes["productName"] =
      DeviceAttribute::String(std::string(65, 'x'));
  EXPECT_THAT(CheckSliceLimits(slice),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("longer than 64")));

  slice = CounterSlice(1);
  for (int i = 0; i < 31; ++i) {  // beside memory and compute-slices
    slice.shared_counters[0].counters["c" + std::to_string(i)] = {1};
  }
  EXPECT_THAT(CheckSliceLimits(slice),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.sharedCounters[0].counters: \"33\" "
                                 "counters, more than 32")));

  slice = CounterSlice(1);
  slice.shared_counters[0].counters.clear();
  EXPECT_THAT(CheckSliceLimits(slice),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("has no counters")));
}

TEST(SliceLimitsTest, ASliceHasCounterSetsOrDevicesNotBoth) {
  EXPECT_THAT(CheckSliceLimits(CounterSlice(1)), IsOk());
  ResourceSlice slice = PartitionSlice(1);
  slice.shared_counters = CounterSlice(1).shared_counters;
  EXPECT_THAT(CheckSliceLimits(slice),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec: \"\" only one of `sharedCounters` or "
                                 "`devices` is allowed")));
  // Neither: an empty pool's slice.
  EXPECT_THAT(CheckSliceLimits(ResourceSlice{}), IsOk());
}

TEST(SliceLimitsTest, AtMost64DevicesWhenOneConsumesCounters) {
  EXPECT_EQ(kMaxDevicesPerSliceWithAdvancedFeatures, 64);
  ResourceSlice slice = PartitionSlice(64);
  EXPECT_THAT(CheckSliceLimits(slice), IsOk());
  EXPECT_EQ(MaxDevicesPerSlice(slice.devices), 64);
  slice = PartitionSlice(65);
  EXPECT_THAT(CheckSliceLimits(slice),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.devices: \"65\" devices, more than "
                                 "64")));
  // The same 65 without counters: up to 128.
  for (Device& device : slice.devices) device.consumes_counters.clear();
  EXPECT_EQ(MaxDevicesPerSlice(slice.devices), 128);
  EXPECT_THAT(CheckSliceLimits(slice), IsOk());
}

TEST(SliceLimitsTest, AtMost8CounterSetsPerSlice) {
  EXPECT_THAT(CheckSliceLimits(CounterSlice(8)), IsOk());
  EXPECT_THAT(CheckSliceLimits(CounterSlice(9)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.sharedCounters: \"9\" counter sets, "
                                 "more than 8")));
  ResourceSlice slice = CounterSlice(2);
  slice.shared_counters[1].name = slice.shared_counters[0].name;
  EXPECT_THAT(CheckSliceLimits(slice),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.sharedCounters[1].name: "
                                 "\"gpu-0-counters\" is not a unique")));
}

TEST(SliceLimitsTest, AtMost2ConsumptionsOfDistinctSetsPerDevice) {
  ResourceSlice slice = PartitionSlice(1);
  Device& device = slice.devices[0];
  device.consumes_counters.push_back({"gpu-1-counters", {{"memory", {1}}}});
  EXPECT_THAT(CheckSliceLimits(slice), IsOk());
  device.consumes_counters.push_back({"gpu-2-counters", {{"memory", {1}}}});
  EXPECT_THAT(CheckSliceLimits(slice),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.devices[0].consumesCounters: "
                                 "\"gpu-0-mig-0\" consumes from more than 2 "
                                 "counter sets")));
  device.consumes_counters.pop_back();
  device.consumes_counters[1].counter_set = "gpu-0-counters";
  EXPECT_THAT(CheckSliceLimits(slice),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.devices[0].consumesCounters[1]."
                                 "counterSet: \"gpu-0-counters\" is consumed "
                                 "from twice")));
  device.consumes_counters.pop_back();
  for (int i = 0; i < 31; ++i) {  // beside memory and compute-slices
    device.consumes_counters[0].counters["c" + std::to_string(i)] = {1};
  }
  EXPECT_THAT(CheckSliceLimits(slice),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("consumesCounters[0].counters: \"33\" "
                                 "counters, more than 32")));
}

TEST(PoolCountersTest, ConsumedSetsAndCountersAreThePools) {
  std::vector<ResourceSlice> pool = {CounterSlice(2), PartitionSlice(3)};
  pool[1].name = "node-a-gpu.deviceshare.io-1";
  pool[1].devices[2].consumes_counters[0].counter_set = "gpu-1-counters";
  EXPECT_THAT(CheckPoolCounters(pool), IsOk());

  pool[1].devices[2].consumes_counters[0].counter_set = "gpu-9-counters";
  EXPECT_THAT(
      CheckPoolCounters(pool),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("node-a-gpu.deviceshare.io-1: spec.devices[2]."
                         "consumesCounters[0].counterSet: \"gpu-9-counters\" "
                         "is not a counter set of pool \"node-a\"")));

  pool[1].devices[2].consumes_counters[0].counter_set = "gpu-1-counters";
  pool[1].devices[2].consumes_counters[0].counters["cores"] = {1};
  EXPECT_THAT(CheckPoolCounters(pool),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.devices[2].consumesCounters[0]."
                                 "counters: \"cores\" is not a counter of set "
                                 "\"gpu-1-counters\"")));
}

TEST(PoolCountersTest, SetNamesAreUniqueInThePoolAndOnePool) {
  std::vector<ResourceSlice> pool = {CounterSlice(1), CounterSlice(1)};
  pool[1].name = "node-a-gpu.deviceshare.io-1";
  EXPECT_THAT(CheckPoolCounters(pool),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("node-a-gpu.deviceshare.io-1: "
                                 "spec.sharedCounters[0].name: "
                                 "\"gpu-0-counters\" is defined twice in "
                                 "pool \"node-a\"")));
  pool[1] = PartitionSlice(1);
  pool[1].pool.name = "node-b";
  EXPECT_THAT(CheckPoolCounters(pool),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("is not pool \"node-a\"")));
  EXPECT_THAT(CheckPoolCounters({}), IsOk());
}

TEST(SliceJsonTest, WritesTheApiShape) {
  const nlohmann::json json = ResourceSliceToJson(SharedGpuSlice());
  EXPECT_EQ(json["apiVersion"], "resource.k8s.io/v1");
  EXPECT_EQ(json["kind"], "ResourceSlice");
  EXPECT_EQ(json["spec"]["pool"]["resourceSliceCount"], 1);
  const nlohmann::json& device = json["spec"]["devices"][0];
  EXPECT_EQ(device["allowMultipleAllocations"], true);
  EXPECT_EQ(device["attributes"]["index"]["int"], 0);
  EXPECT_EQ(device["attributes"]["uuid"]["string"], "GPU-1");
  EXPECT_EQ(device["capacity"]["memory"]["value"], "80Gi");
  EXPECT_EQ(device["capacity"]["memory"]["requestPolicy"]["validRange"]["step"],
            "1Mi");
}

TEST(SliceJsonTest, ACounterSliceHasNoDevicesList) {
  // The API server takes an empty list as set, and refuses it beside
  // sharedCounters.
  const nlohmann::json counters = ResourceSliceToJson(CounterSlice(2));
  EXPECT_FALSE(counters["spec"].contains("devices"));
  EXPECT_EQ(counters["spec"]["sharedCounters"][1]["name"], "gpu-1-counters");
  EXPECT_EQ(
      counters["spec"]["sharedCounters"][1]["counters"]["memory"]["value"],
      "80Gi");
  const nlohmann::json devices = ResourceSliceToJson(PartitionSlice(1));
  EXPECT_FALSE(devices["spec"].contains("sharedCounters"));
  EXPECT_EQ(devices["spec"]["devices"][0]["consumesCounters"][0]["counterSet"],
            "gpu-0-counters");
  // An empty pool's slice still lists its devices: none.
  EXPECT_EQ(ResourceSliceToJson(ResourceSlice{})["spec"]["devices"],
            nlohmann::json::array());
}

TEST(SliceJsonTest, QuantitiesStayExact) {
  EXPECT_EQ(FormatQuantity(100, QuantityFormat::kDecimal), "100");
  EXPECT_EQ(FormatQuantity(int64_t{9984} << 20, QuantityFormat::kBinary),
            "9984Mi");
  EXPECT_EQ(FormatQuantity(1536, QuantityFormat::kBinary), "1536");
  EXPECT_EQ(FormatQuantity(0, QuantityFormat::kBinary), "0");
  EXPECT_EQ(FormatQuantity(int64_t{1} << 40, QuantityFormat::kBinary), "1Ti");
}

nlohmann::json Claim() {
  return nlohmann::json::parse(R"({
    "metadata": {"name": "c", "namespace": "ml", "uid": "u-1"},
    "status": {"allocation": {"devices": {"results": [
      {"request": "a", "driver": "gpu.deviceshare.io", "pool": "node-a",
       "device": "gpu-0", "shareID": "s-1",
       "consumedCapacity": {"memory": "4Gi", "cores": "30"}},
      {"request": "b/whole", "driver": "gpu.nvidia.com", "pool": "node-a",
       "device": "gpu-1"}]}}}})");
}

TEST(AllocatedClaimTest, DecodesResultsWithSharesAndCapacities) {
  absl::StatusOr<AllocatedClaim> claim = DecodeAllocatedClaim(Claim());
  ASSERT_THAT(claim.status(), IsOk());
  EXPECT_EQ(claim->uid, "u-1");
  EXPECT_EQ(claim->ns, "ml");
  ASSERT_EQ(claim->results.size(), 2u);
  EXPECT_EQ(claim->results[0].share_id, "s-1");
  EXPECT_EQ(claim->results[0].consumed.at("memory"), int64_t{4} << 30);
  EXPECT_EQ(claim->results[0].consumed.at("cores"), 30);
  EXPECT_EQ(claim->results[1].request, "b/whole");
  EXPECT_TRUE(claim->results[1].consumed.empty());
}

TEST(AllocatedClaimTest, BadFieldsAreNamed) {
  nlohmann::json claim = Claim();
  claim["status"]["allocation"]["devices"]["results"][0]["consumedCapacity"]
       ["memory"] = "4 GiB";
  EXPECT_THAT(DecodeAllocatedClaim(claim).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("results[0].consumedCapacity[memory]")));
  claim = Claim();
  claim["status"]["allocation"]["devices"]["results"][1].erase("device");
  EXPECT_THAT(DecodeAllocatedClaim(claim).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("results[1].device: missing")));
  // Found by the fuzzer: an empty pool passed as present.
  claim = Claim();
  claim["status"]["allocation"]["devices"]["results"][0]["pool"] = "";
  EXPECT_THAT(DecodeAllocatedClaim(claim).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("results[0].pool: empty")));
  claim = Claim();
  claim["metadata"]["uid"] = 7;
  EXPECT_THAT(
      DecodeAllocatedClaim(claim).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("metadata.uid")));
  claim = Claim();
  claim["status"].erase("allocation");
  EXPECT_THAT(DecodeAllocatedClaim(claim).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(DecodeAllocatedClaim(nlohmann::json::array()).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace deviceshare::dra
