// NodeAllocator (dra/node_allocator.h): the 1.34 semantics, scored and
// bounded. Each case states what kube-scheduler's allocator would do where
// ours differs.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/dra/node_allocator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace deviceshare::dra {
namespace {

using ::deviceshare::testing::IsOk;
using ::testing::HasSubstr;

constexpr char kDriver[] = "gpu.deviceshare.io";
constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGiB = int64_t{1} << 30;

Device SharedGpu(int index, std::string root = "pci0000:00") {
  Device gpu;
  gpu.name = absl::StrCat("gpu-", index);
  gpu.allow_multiple_allocations = true;
  gpu.attributes["uuid"] = DeviceAttribute::String(absl::StrCat("GPU-", index));
  gpu.attributes["mode"] = DeviceAttribute::String("hami-core");
  gpu.attributes["resource.kubernetes.io/pcieRoot"] =
      DeviceAttribute::String(std::move(root));
  gpu.capacity["memory"] = {
      80 * kGiB, QuantityFormat::kBinary,
      RequestPolicy{80 * kGiB, kMiB, 80 * kGiB, kMiB, {}}};
  gpu.capacity["cores"] = {100, QuantityFormat::kDecimal,
                           RequestPolicy{100, 1, 100, 1, {}}};
  return gpu;
}

Device WholeGpu(int index, std::string root) {
  Device gpu;
  gpu.name = absl::StrCat("gpu-", index);
  gpu.attributes["uuid"] = DeviceAttribute::String(absl::StrCat("GPU-", index));
  gpu.attributes["mode"] = DeviceAttribute::String("whole");
  gpu.attributes["resource.kubernetes.io/pcieRoot"] =
      DeviceAttribute::String(std::move(root));
  gpu.capacity["memory"] = {40 * kGiB, QuantityFormat::kBinary, std::nullopt};
  return gpu;
}

ResourceSlice SliceOf(std::vector<Device> devices) {
  ResourceSlice slice;
  slice.name = "node-a-0";
  slice.driver = kDriver;
  slice.node_name = "node-a";
  slice.pool = {"node-a", 1, 1};
  slice.devices = std::move(devices);
  return slice;
}

ExactRequest Share(int64_t memory, int64_t cores,
                   std::string cls = "gpu.deviceshare.io") {
  ExactRequest request;
  request.device_class = std::move(cls);
  request.capacity = {{"memory", memory}, {"cores", cores}};
  return request;
}

ResourceClaim ClaimOf(std::vector<std::pair<std::string, ExactRequest>> reqs,
                      std::vector<DeviceConstraint> constraints = {}) {
  ResourceClaim claim;
  claim.ns = "ml";
  claim.name = "c";
  for (auto& [name, request] : reqs) {
    DeviceRequest r;
    r.name = name;
    r.exactly = std::move(request);
    claim.spec.requests.push_back(std::move(r));
  }
  claim.spec.constraints = std::move(constraints);
  return claim;
}

class NodeAllocatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    classes_["gpu.deviceshare.io"] =
        DeviceClass{"gpu.deviceshare.io",
                    {"device.driver == \"gpu.deviceshare.io\""},
                    {nlohmann::json{{"opaque", {{"driver", kDriver}}}}},
                    ""};
    classes_["whole"] = DeviceClass{
        "whole",
        {"device.attributes[\"gpu.deviceshare.io\"].mode == \"whole\""},
        {},
        ""};
  }

  std::unique_ptr<NodeAllocator> Make(const ResourceSlice& slice,
                                      DeviceOrder order = DeviceOrder::kBestFit,
                                      int64_t max_steps = 100000) {
    return MakePool({&slice}, order, max_steps);
  }

  std::unique_ptr<NodeAllocator> MakePool(
      const std::vector<const ResourceSlice*>& slices,
      DeviceOrder order = DeviceOrder::kBestFit, int64_t max_steps = 100000) {
    AllocatorOptions options;
    options.order = order;
    options.max_steps = max_steps;
    options.new_share_id = [this] { return absl::StrCat("share-", ++ids_); };
    auto made =
        NodeAllocator::Create("node-a", slices, &classes_, &cel_, options);
    EXPECT_THAT(made.status(), IsOk());
    return made.ok() ? *std::move(made) : nullptr;
  }

  // Charges `memory` on `device` as another claim would.
  void Hold(NodeAllocator& allocator, const std::string& device,
            int64_t memory) {
    AllocationResult held;
    held.results.push_back(
        DeviceResult{"x",
                     kDriver,
                     "node-a",
                     device,
                     "held",
                     {{"memory", {memory, QuantityFormat::kBinary}},
                      {"cores", {10, QuantityFormat::kDecimal}}},
                     false});
    ASSERT_THAT(allocator.Charge(held), IsOk());
  }

  std::map<std::string, DeviceClass> classes_;
  CelCache cel_;
  int ids_ = 0;
};

TEST_F(NodeAllocatorTest, BestFitTakesTheFullerGpuFirstFitTheFirst) {
  const ResourceSlice slice = SliceOf({SharedGpu(0), SharedGpu(1)});
  for (DeviceOrder order : {DeviceOrder::kBestFit, DeviceOrder::kFirstFit}) {
    std::unique_ptr<NodeAllocator> allocator = Make(slice, order);
    Hold(*allocator, "gpu-1", 60 * kGiB);
    const ResourceClaim claim = ClaimOf({{"gpu", Share(4 * kGiB, 30)}});
    auto verdict = allocator->Allocate({&claim}, /*commit=*/true);
    ASSERT_THAT(verdict.status(), IsOk());
    ASSERT_TRUE(verdict->fits) << verdict->reason;
    const DeviceResult& result = verdict->allocations[0].results[0];
    // 1.34 is first fit: an idle GPU for a 4 GiB share.
    EXPECT_EQ(result.device,
              order == DeviceOrder::kBestFit ? "gpu-1" : "gpu-0");
    EXPECT_FALSE(result.share_id.empty());
    EXPECT_EQ(result.consumed.at("memory").value, 4 * kGiB);
    EXPECT_EQ(result.consumed.at("cores").value, 30);
    ASSERT_EQ(verdict->allocations[0].config.size(), 1u);
    EXPECT_EQ(verdict->allocations[0].config[0]["source"], "FromClass");
    EXPECT_EQ(verdict->allocations[0].node_name, "node-a");
  }
}

TEST_F(NodeAllocatorTest, TwoSharesOfOneClaimMayShareAGpuUnlessDistinct) {
  const ResourceSlice slice = SliceOf({SharedGpu(0), SharedGpu(1)});
  std::unique_ptr<NodeAllocator> allocator = Make(slice);
  const ResourceClaim together =
      ClaimOf({{"a", Share(4 * kGiB, 30)}, {"b", Share(8 * kGiB, 60)}});
  auto verdict = allocator->Allocate({&together}, /*commit=*/false);
  ASSERT_TRUE(verdict.ok() && verdict->fits);
  EXPECT_EQ(verdict->allocations[0].results[0].device,
            verdict->allocations[0].results[1].device);
  const ResourceClaim apart =
      ClaimOf({{"a", Share(4 * kGiB, 30)}, {"b", Share(8 * kGiB, 60)}},
              {DeviceConstraint{{"a", "b"}, "", "gpu.deviceshare.io/uuid"}});
  verdict = allocator->Allocate({&apart}, /*commit=*/false);
  ASSERT_TRUE(verdict.ok() && verdict->fits) << verdict->reason;
  EXPECT_NE(verdict->allocations[0].results[0].device,
            verdict->allocations[0].results[1].device);
}

TEST_F(NodeAllocatorTest, BacktracksWhenTheBestFitBlocksALaterRequest) {
  const ResourceSlice slice = SliceOf({SharedGpu(0), SharedGpu(1)});
  std::unique_ptr<NodeAllocator> allocator = Make(slice);
  Hold(*allocator, "gpu-1", 40 * kGiB);  // best fit prefers gpu-1
  ExactRequest only_gpu1 = Share(4 * kGiB, 10);
  only_gpu1.selectors = {
      "device.attributes[\"gpu.deviceshare.io\"].uuid == \"GPU-1\""};
  const ResourceClaim claim =
      ClaimOf({{"a", Share(4 * kGiB, 10)}, {"b", only_gpu1}},
              {DeviceConstraint{{}, "", "gpu.deviceshare.io/uuid"}});
  auto verdict = allocator->Allocate({&claim}, /*commit=*/false);
  ASSERT_TRUE(verdict.ok() && verdict->fits) << verdict->reason;
  EXPECT_EQ(verdict->allocations[0].results[0].device, "gpu-0");
  EXPECT_EQ(verdict->allocations[0].results[1].device, "gpu-1");
}

TEST_F(NodeAllocatorTest, FirstAvailableFallsBackInOrder) {
  const ResourceSlice slice = SliceOf({SharedGpu(0)});
  std::unique_ptr<NodeAllocator> allocator = Make(slice);
  ResourceClaim claim;
  DeviceRequest request;
  request.name = "b";
  request.first_available = {SubRequest{"big", Share(90 * kGiB, 10)},
                             SubRequest{"small", Share(10 * kGiB, 10)}};
  claim.spec.requests.push_back(request);
  auto verdict = allocator->Allocate({&claim}, /*commit=*/false);
  ASSERT_TRUE(verdict.ok() && verdict->fits) << verdict->reason;
  EXPECT_EQ(verdict->allocations[0].results[0].request, "b/small");
}

TEST_F(NodeAllocatorTest, AllTakesEveryMatchingDeviceOrNone) {
  const ResourceSlice slice = SliceOf(
      {WholeGpu(0, "pci0000:00"), WholeGpu(1, "pci0000:00"), SharedGpu(2)});
  std::unique_ptr<NodeAllocator> allocator = Make(slice);
  ExactRequest all;
  all.device_class = "whole";
  all.mode = ExactRequest::kAll;
  const ResourceClaim claim = ClaimOf({{"all", all}});
  auto verdict = allocator->Allocate({&claim}, /*commit=*/true);
  ASSERT_TRUE(verdict.ok() && verdict->fits) << verdict->reason;
  ASSERT_EQ(verdict->allocations[0].results.size(), 2u);
  EXPECT_TRUE(verdict->allocations[0].results[0].share_id.empty());
  verdict = allocator->Allocate({&claim}, /*commit=*/false);
  ASSERT_TRUE(verdict.ok());
  EXPECT_FALSE(verdict->fits);
  EXPECT_THAT(verdict->reason, HasSubstr("is allocated"));
}

TEST_F(NodeAllocatorTest,
       ThirtyTwoRequestsForThirtyOneDevicesFailWithoutSearch) {
  std::vector<Device> devices;
  for (int i = 0; i < 31; ++i) devices.push_back(WholeGpu(i, "pci0000:00"));
  const ResourceSlice slice = SliceOf(devices);
  std::unique_ptr<NodeAllocator> allocator = Make(slice);
  std::vector<std::pair<std::string, ExactRequest>> requests;
  for (int i = 0; i < 32; ++i) {
    ExactRequest whole;
    whole.device_class = "whole";
    requests.emplace_back(absl::StrCat("r", i), whole);
  }
  const ResourceClaim claim = ClaimOf(requests);
  auto verdict = allocator->Allocate({&claim}, /*commit=*/false);
  ASSERT_THAT(verdict.status(), IsOk());
  EXPECT_FALSE(verdict->fits);
  EXPECT_EQ(verdict->steps, 0);
  EXPECT_THAT(verdict->reason, HasSubstr("need 32 distinct devices, 31"));
}

// 16 shares on distinct GPUs where 15 of 128 identical GPUs have room: no
// necessary condition sees it (the devices are shared), and combinations of
// devices would be C(15, k) x 113 dead ends -- past any step budget. The
// full GPUs are alike, and so are the empty ones: the search tries one of
// each kind per depth and answers "does not fit" in a few hundred steps.
TEST_F(NodeAllocatorTest, AlikeDevicesAreTriedOncePerDepth) {
  std::vector<Device> devices;
  for (int i = 0; i < 128; ++i) devices.push_back(SharedGpu(i));
  const ResourceSlice slice = SliceOf(devices);
  std::unique_ptr<NodeAllocator> allocator = Make(slice);
  for (int i = 15; i < 128; ++i) {
    Hold(*allocator, absl::StrCat("gpu-", i), 80 * kGiB);
  }
  ExactRequest sixteen = Share(10 * kGiB, 10);
  sixteen.count = 16;
  const ResourceClaim claim =
      ClaimOf({{"gpus", sixteen}},
              {DeviceConstraint{{}, "", "gpu.deviceshare.io/uuid"}});
  auto verdict = allocator->Allocate({&claim}, /*commit=*/false);
  ASSERT_THAT(verdict.status(), IsOk());
  EXPECT_FALSE(verdict->fits);
  EXPECT_THAT(verdict->reason, ::testing::Not(HasSubstr("steps")));
  EXPECT_LT(verdict->steps, 1000);
  // With 16 GPUs of room it fits, on 16 distinct ones.
  allocator->Release(AllocationResult{
      {DeviceResult{"x",
                    kDriver,
                    "node-a",
                    "gpu-15",
                    "held",
                    {{"memory", {80 * kGiB, QuantityFormat::kBinary}},
                     {"cores", {10, QuantityFormat::kDecimal}}},
                    false}},
      {},
      ""});
  verdict = allocator->Allocate({&claim}, /*commit=*/false);
  ASSERT_THAT(verdict.status(), IsOk());
  ASSERT_TRUE(verdict->fits) << verdict->reason;
  std::set<std::string> distinct;
  for (const DeviceResult& result : verdict->allocations[0].results) {
    distinct.insert(result.device);
  }
  EXPECT_EQ(distinct.size(), 16u);
}

TEST_F(NodeAllocatorTest, ImpossibleMatchAttributeFailsWithoutSearch) {
  std::vector<Device> devices;
  for (int i = 0; i < 128; ++i) {
    devices.push_back(WholeGpu(i, absl::StrCat("pci0000:", i)));
  }
  const ResourceSlice slice = SliceOf(devices);
  std::unique_ptr<NodeAllocator> allocator = Make(slice);
  ExactRequest two;
  two.device_class = "whole";
  two.count = 2;
  const ResourceClaim claim = ClaimOf(
      {{"pair", two}},
      {DeviceConstraint{{"pair"}, "resource.kubernetes.io/pcieRoot", ""}});
  auto verdict = allocator->Allocate({&claim}, /*commit=*/false);
  ASSERT_THAT(verdict.status(), IsOk());
  EXPECT_FALSE(verdict->fits);
  EXPECT_EQ(verdict->steps, 0);
}

TEST_F(NodeAllocatorTest, ABudgetEndsASearchWithAVerdict) {
  // Six devices with distinct roots out of ten that have only five: no
  // pre-check sees it, the search would try every combination.
  std::vector<Device> devices;
  for (int i = 0; i < 10; ++i) {
    devices.push_back(WholeGpu(i, absl::StrCat("pci0000:", i % 5)));
  }
  const ResourceSlice slice = SliceOf(devices);
  std::unique_ptr<NodeAllocator> allocator =
      Make(slice, DeviceOrder::kBestFit, /*max_steps=*/50);
  ExactRequest six;
  six.device_class = "whole";
  six.count = 6;
  const ResourceClaim claim =
      ClaimOf({{"s", six}},
              {DeviceConstraint{{"s"}, "", "resource.kubernetes.io/pcieRoot"}});
  auto verdict = allocator->Allocate({&claim}, /*commit=*/false);
  ASSERT_THAT(verdict.status(), IsOk());
  EXPECT_FALSE(verdict->fits);
  EXPECT_THAT(verdict->reason, HasSubstr("within 50 steps"));
  // Nothing stays charged after a failed search.
  ExactRequest one;
  one.device_class = "whole";
  one.count = 10;
  const ResourceClaim every = ClaimOf({{"e", one}});
  auto all = allocator->Allocate({&every}, /*commit=*/false);
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->fits) << all->reason;
}

TEST_F(NodeAllocatorTest, CommitChargesAndReleaseGivesBack) {
  const ResourceSlice slice = SliceOf({SharedGpu(0)});
  std::unique_ptr<NodeAllocator> allocator = Make(slice);
  const ResourceClaim big = ClaimOf({{"gpu", Share(60 * kGiB, 50)}});
  auto first = allocator->Allocate({&big}, /*commit=*/false);
  ASSERT_TRUE(first.ok() && first->fits);
  auto charged = allocator->Allocate({&big}, /*commit=*/true);
  ASSERT_TRUE(charged.ok() && charged->fits);
  auto again = allocator->Allocate({&big}, /*commit=*/false);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->fits);
  EXPECT_THAT(again->reason, HasSubstr("left"));
  allocator->Release(charged->allocations[0]);
  again = allocator->Allocate({&big}, /*commit=*/false);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->fits);
}

TEST_F(NodeAllocatorTest, AdminAccessNeedsNoFreeCapacity) {
  const ResourceSlice slice = SliceOf({WholeGpu(0, "pci0000:00")});
  std::unique_ptr<NodeAllocator> allocator = Make(slice);
  ExactRequest whole;
  whole.device_class = "whole";
  const ResourceClaim user = ClaimOf({{"gpu", whole}});
  ASSERT_TRUE(allocator->Allocate({&user}, true)->fits);
  whole.admin_access = true;
  const ResourceClaim admin = ClaimOf({{"gpu", whole}});
  auto verdict = allocator->Allocate({&admin}, true);
  ASSERT_TRUE(verdict.ok() && verdict->fits) << verdict->reason;
  EXPECT_TRUE(verdict->allocations[0].results[0].admin_access);
}

TEST_F(NodeAllocatorTest, UnknownClassIsAnError) {
  const ResourceSlice slice = SliceOf({SharedGpu(0)});
  std::unique_ptr<NodeAllocator> allocator = Make(slice);
  const ResourceClaim claim = ClaimOf({{"gpu", Share(kGiB, 1, "nope")}});
  EXPECT_FALSE(allocator->Allocate({&claim}, false).ok());
}

TEST_F(NodeAllocatorTest, PartitionsExcludeOverlappingOnesThroughCounters) {
  // As 1.35+ publishes a pool: the counter set in a slice of its own, the
  // partitions consuming it in another.
  ResourceSlice counters = SliceOf({});
  counters.pool.resource_slice_count = 2;
  CounterSet set{"gpu-0-counters", {{"compute-slices", {7}}}};
  for (int m = 0; m < 8; ++m) {
    set.counters[absl::StrCat("memory-slice-", m)] = {1};
  }
  counters.shared_counters.push_back(set);
  ResourceSlice slice = SliceOf({});
  slice.name = "node-a-1";
  slice.pool.resource_slice_count = 2;
  auto placement = [](const std::string& name, int compute, int start,
                      int size) {
    Device d;
    d.name = name;
    d.attributes["mode"] = DeviceAttribute::String("whole");
    CounterConsumption use{"gpu-0-counters", {{"compute-slices", {compute}}}};
    for (int m = start; m < start + size; ++m) {
      use.counters[absl::StrCat("memory-slice-", m)] = {1};
    }
    d.consumes_counters.push_back(use);
    return d;
  };
  slice.devices = {placement("gpu-0-mig-7g80gb-0", 7, 0, 8),
                   placement("gpu-0-mig-4g40gb-0", 4, 0, 4),
                   placement("gpu-0-mig-3g40gb-4", 3, 4, 4)};
  std::unique_ptr<NodeAllocator> allocator = MakePool({&counters, &slice});
  ExactRequest one;
  one.device_class = "whole";
  one.selectors = {
      "device.attributes[\"gpu.deviceshare.io\"].mode == "
      "\"whole\""};
  ExactRequest four = one;
  four.capacity.clear();
  const ResourceClaim a = ClaimOf({{"p", four}});
  auto first = allocator->Allocate({&a}, true);
  ASSERT_TRUE(first.ok() && first->fits) << first->reason;
  // Best fit of equal (capacity-less) devices: the first, the 7g.
  EXPECT_EQ(first->allocations[0].results[0].device, "gpu-0-mig-7g80gb-0");
  auto second = allocator->Allocate({&a}, false);
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->fits);
  EXPECT_THAT(second->reason, HasSubstr("gpu-0-counters/"));
  allocator->Release(first->allocations[0]);
  const ResourceClaim two = ClaimOf({{"p", four}, {"q", four}});
  auto both = allocator->Allocate({&two}, false);
  ASSERT_TRUE(both.ok() && both->fits) << both->reason;
  EXPECT_EQ(both->allocations[0].results[0].device, "gpu-0-mig-4g40gb-0");
  EXPECT_EQ(both->allocations[0].results[1].device, "gpu-0-mig-3g40gb-4");
}

}  // namespace
}  // namespace deviceshare::dra
