// PoolUsage (dra/pool_usage.h): shares, dedicated devices and counters,
// and a property test of random allocate / free steps.
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/dra/pool_usage.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace deviceshare::dra {
namespace {

using ::deviceshare::testing::IsOk;

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGiB = int64_t{1} << 30;

// Two shared GPUs, one dedicated GPU, one MIG GPU as placements over
// counters -- one of whose placements is also multi-allocatable.
ResourceSlice TestSlice() {
  ResourceSlice slice;
  slice.name = "s";
  slice.driver = "gpu.deviceshare.io";
  slice.pool = {"node-a", 1, 1};
  for (int i = 0; i < 2; ++i) {
    Device gpu;
    gpu.name = absl::StrCat("gpu-", i);
    gpu.allow_multiple_allocations = true;
    gpu.capacity["memory"] = {
        80 * kGiB, QuantityFormat::kBinary,
        RequestPolicy{80 * kGiB, kGiB, 80 * kGiB, kGiB, {}}};
    gpu.capacity["cores"] = {100, QuantityFormat::kDecimal,
                             RequestPolicy{100, 5, 100, 5, {}}};
    slice.devices.push_back(gpu);
  }
  Device whole;
  whole.name = "gpu-2";
  whole.capacity["memory"] = {40 * kGiB, QuantityFormat::kBinary, {}};
  slice.devices.push_back(whole);
  CounterSet set{"gpu-3-counters", {{"compute-slices", {7}}}};
  for (int s = 0; s < 8; ++s)
    set.counters[absl::StrCat("memory-slice-", s)] = {1};
  slice.shared_counters.push_back(set);
  auto placement = [](int compute, int start, int size, bool shared) {
    Device d;
    d.name = absl::StrCat("gpu-3-mig-", compute, "g-", start);
    d.allow_multiple_allocations = shared;
    if (shared) {
      d.capacity["cores"] = {100, QuantityFormat::kDecimal,
                             RequestPolicy{100, 10, 100, 10, {}}};
    }
    CounterConsumption use{"gpu-3-counters", {{"compute-slices", {compute}}}};
    for (int s = start; s < start + size; ++s) {
      use.counters[absl::StrCat("memory-slice-", s)] = {1};
    }
    d.consumes_counters.push_back(use);
    return d;
  };
  slice.devices.push_back(placement(7, 0, 8, false));
  slice.devices.push_back(placement(3, 4, 4, true));  // shared partition
  slice.devices.push_back(placement(4, 0, 4, false));
  for (int s = 0; s < 7; ++s)
    slice.devices.push_back(placement(1, s, 1, false));
  return slice;
}

NodePool PoolOf(const ResourceSlice& slice) {
  NodePool pool;
  pool.driver = slice.driver;
  pool.name = slice.pool.name;
  pool.slices = {&slice};
  for (const Device& d : slice.devices) pool.devices.push_back({&slice, &d});
  return pool;
}

TEST(PoolUsageTest, SharedPartitionChargesItsCountersOnce) {
  const ResourceSlice slice = TestSlice();
  absl::StatusOr<PoolUsage> usage = PoolUsage::Create(PoolOf(slice));
  ASSERT_THAT(usage.status(), IsOk());
  const Device& shared = slice.devices[4];  // 3g at 4, multi-allocatable
  CapacityVerdict first = usage->Check(shared, {{"cores", 40}});
  ASSERT_TRUE(first.fits) << first.reason;
  usage->Take(shared, first);
  CapacityVerdict second = usage->Check(shared, {{"cores", 40}});
  ASSERT_TRUE(second.fits) << second.reason;
  usage->Take(shared, second);
  EXPECT_EQ(usage->counters().Left("gpu-3-counters", "compute-slices"), 4);
  usage->Give(shared, first.consumed);
  EXPECT_EQ(usage->counters().Left("gpu-3-counters", "compute-slices"), 4);
  usage->Give(shared, second.consumed);
  EXPECT_EQ(usage->counters().Left("gpu-3-counters", "compute-slices"), 7);
}

TEST(PoolUsageTest, DedicatedDevicesAreTakenOnce) {
  const ResourceSlice slice = TestSlice();
  absl::StatusOr<PoolUsage> usage = PoolUsage::Create(PoolOf(slice));
  ASSERT_THAT(usage.status(), IsOk());
  const Device& whole = slice.devices[2];
  CapacityVerdict v = usage->Check(whole, {});
  ASSERT_TRUE(v.fits);
  usage->Take(whole, v);
  EXPECT_FALSE(usage->Check(whole, {}).fits);
  usage->Give(whole, {});
  EXPECT_TRUE(usage->Check(whole, {}).fits);
}

// Random allocate / free steps; after each, every invariant holds.
TEST(PoolUsageTest, RandomStepsKeepEveryInvariant) {
  const ResourceSlice slice = TestSlice();
  absl::StatusOr<PoolUsage> usage = PoolUsage::Create(PoolOf(slice));
  ASSERT_THAT(usage.status(), IsOk());
  struct Grant {
    const Device* device;
    std::map<std::string, int64_t> consumed;
  };
  std::vector<Grant> live;
  std::mt19937 rng(20261125);
  int taken = 0;
  for (int step = 0; step < 100000; ++step) {
    if (!live.empty() && rng() % 3 == 0) {
      const size_t k = rng() % live.size();
      usage->Give(*live[k].device, live[k].consumed);
      live.erase(live.begin() + static_cast<long>(k));
    } else {
      const Device& device = slice.devices[rng() % slice.devices.size()];
      std::map<std::string, int64_t> requests;
      if (device.capacity.contains("memory") && rng() % 2 == 0) {
        requests["memory"] =
            std::uniform_int_distribution<int64_t>(0, 41 * kGiB)(rng);
      }
      if (device.capacity.contains("cores") && rng() % 4 != 0) {
        requests["cores"] = static_cast<int64_t>(rng() % 101);
      }
      CapacityVerdict verdict = usage->Check(device, requests);
      if (verdict.fits) {
        // Policy rounding: on a step, within range, at least the request.
        for (const auto& [name, amount] : verdict.consumed) {
          const DeviceCapacity& cap = device.capacity.at(name);
          ASSERT_TRUE(cap.policy.has_value());
          const RequestPolicy& p = *cap.policy;
          ASSERT_GE(amount, p.min);
          ASSERT_LE(amount, p.max);
          ASSERT_EQ((amount - p.min) % p.step, 0);
          if (requests.contains(name)) ASSERT_GE(amount, requests.at(name));
        }
        usage->Take(device, verdict);
        live.push_back({&device, verdict.consumed});
        ++taken;
      }
    }
    // Sum of live consumption per device and capacity, within capacity.
    std::map<std::string, std::map<std::string, int64_t>> sums;
    std::map<std::string, int> holders;
    for (const Grant& g : live) {
      ++holders[g.device->name];
      for (const auto& [name, amount] : g.consumed) {
        sums[g.device->name][name] += amount;
      }
    }
    for (const Device& device : slice.devices) {
      const int h = holders[device.name];
      ASSERT_EQ(usage->Holders(device.name), h) << device.name;
      if (!device.allow_multiple_allocations) ASSERT_LE(h, 1);
      for (const auto& [name, cap] : device.capacity) {
        const int64_t sum = sums[device.name][name];
        ASSERT_LE(sum, cap.value) << device.name << " " << name;
        const auto& in_use = usage->InUse(device.name);
        ASSERT_EQ(in_use.contains(name) ? in_use.at(name) : 0, sum);
      }
    }
    // Counters: never negative, and exactly full minus the devices held.
    std::map<std::string, int64_t> expected;
    for (const auto& [name, counter] : slice.shared_counters[0].counters) {
      expected[name] = counter.value;
    }
    for (const Device& device : slice.devices) {
      if (holders[device.name] == 0) continue;
      for (const CounterConsumption& use : device.consumes_counters) {
        for (const auto& [name, counter] : use.counters) {
          expected[name] -= counter.value;
        }
      }
    }
    for (const auto& [name, left] : expected) {
      ASSERT_GE(left, 0) << name;
      ASSERT_EQ(usage->counters().Left("gpu-3-counters", name), left) << name;
    }
  }
  EXPECT_GT(taken, 10000);  // the walk did allocate a lot
}

}  // namespace
}  // namespace deviceshare::dra
