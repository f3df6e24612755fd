// DRA value types (lib/deviceshare/dra): the slice limits, the JSON a slice
// becomes, and the ResourceClaim decoder.
#include <string>

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

  slice = SharedGpuSlice();
  slice.devices[0].consumes_counters.push_back({"missing", {}});
  EXPECT_THAT(CheckSliceLimits(slice),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("not a counter set of this slice")));

  slice = SharedGpuSlice();
  CounterSet set{"gpu-0-counters", {}};
  for (int i = 0; i < 33; ++i) set.counters["c" + std::to_string(i)] = {1};
  slice.shared_counters.push_back(set);
  EXPECT_THAT(
      CheckSliceLimits(slice),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("more than 32")));
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
