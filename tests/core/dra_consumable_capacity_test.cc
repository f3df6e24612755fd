// Consumable capacity (dra/consumable_capacity.h): the v1.34 allocator's
// rounding and fit rules.
#include "deviceshare/dra/consumable_capacity.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deviceshare::dra {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGiB = int64_t{1} << 30;

Device SharedGpu() {
  Device device;
  device.name = "gpu-0";
  device.allow_multiple_allocations = true;
  device.capacity["memory"] = {
      80 * kGiB, QuantityFormat::kBinary,
      RequestPolicy{80 * kGiB, kMiB, 80 * kGiB, kMiB, {}}};
  device.capacity["cores"] = {100, QuantityFormat::kDecimal,
                              RequestPolicy{100, 1, 100, 1, {}}};
  return device;
}

TEST(ConsumableCapacityTest, OmittedCapacitiesTakeTheDefault) {
  CapacityVerdict v = ConsumeCapacity(SharedGpu(), {{"memory", 4 * kGiB}}, {});
  ASSERT_TRUE(v.fits) << v.reason;
  EXPECT_EQ(v.consumed.at("memory"), 4 * kGiB);
  EXPECT_EQ(v.consumed.at("cores"), 100);  // the default: the whole GPU
}

TEST(ConsumableCapacityTest, RangesRoundUpToTheStep) {
  Device device = SharedGpu();
  device.capacity["memory"].policy->min = 1 * kGiB;
  device.capacity["memory"].policy->step = 1 * kGiB;
  CapacityVerdict v =
      ConsumeCapacity(device, {{"memory", 1 * kGiB + 1}, {"cores", 30}}, {});
  ASSERT_TRUE(v.fits) << v.reason;
  EXPECT_EQ(v.consumed.at("memory"), 2 * kGiB);
  // Below the minimum: the minimum.
  v = ConsumeCapacity(device, {{"memory", 1}, {"cores", 30}}, {});
  EXPECT_EQ(v.consumed.at("memory"), 1 * kGiB);
}

TEST(ConsumableCapacityTest, ValidValuesTakeTheSmallestAbove) {
  Device device = SharedGpu();
  device.capacity["shares"] = {10, QuantityFormat::kDecimal,
                               RequestPolicy{1, 0, 0, 0, {1, 2, 4}}};
  CapacityVerdict v = ConsumeCapacity(device, {{"shares", 3}}, {});
  ASSERT_TRUE(v.fits) << v.reason;
  EXPECT_EQ(v.consumed.at("shares"), 4);
  v = ConsumeCapacity(device, {{"shares", 5}}, {});
  EXPECT_FALSE(v.fits);
  EXPECT_THAT(v.reason, HasSubstr("shares: 5 is above every valid value"));
}

TEST(ConsumableCapacityTest, WhatOthersHoldIsLeftAlone) {
  CapacityVerdict v =
      ConsumeCapacity(SharedGpu(), {{"memory", 8 * kGiB}, {"cores", 60}},
                      {{"memory", 73 * kGiB}, {"cores", 30}});
  EXPECT_FALSE(v.fits);
  EXPECT_THAT(v.reason, HasSubstr("left"));
  v = ConsumeCapacity(SharedGpu(), {{"memory", 8 * kGiB}, {"cores", 60}},
                      {{"memory", 72 * kGiB}, {"cores", 40}});
  EXPECT_TRUE(v.fits) << v.reason;
}

TEST(ConsumableCapacityTest, KeysAreLiteralAndMustExist) {
  CapacityVerdict v =
      ConsumeCapacity(SharedGpu(), {{"gpu.deviceshare.io/memory", 1}}, {});
  EXPECT_FALSE(v.fits);
  EXPECT_THAT(v.reason, HasSubstr("not a capacity"));
}

TEST(ConsumableCapacityTest, NoPolicyMeansExactlyTheRequestOrAll) {
  Device device = SharedGpu();
  device.capacity["memory"].policy.reset();
  CapacityVerdict v =
      ConsumeCapacity(device, {{"memory", 3 * kGiB + 5}, {"cores", 10}}, {});
  ASSERT_TRUE(v.fits);
  EXPECT_EQ(v.consumed.at("memory"), 3 * kGiB + 5);
  v = ConsumeCapacity(device, {{"cores", 10}}, {});
  EXPECT_EQ(v.consumed.at("memory"), 80 * kGiB);  // exclusive
}

TEST(ConsumableCapacityTest, AboveTheMaximumDoesNotFit) {
  CapacityVerdict v = ConsumeCapacity(SharedGpu(), {{"cores", 101}}, {});
  EXPECT_FALSE(v.fits);
  EXPECT_THAT(v.reason, HasSubstr("above the maximum 100"));
}

TEST(ConsumableCapacityTest, DedicatedDevicesOnlyFilter) {
  Device device = SharedGpu();
  device.allow_multiple_allocations = false;
  device.capacity["memory"].policy.reset();
  device.capacity["cores"].policy.reset();
  CapacityVerdict v = ConsumeCapacity(device, {{"memory", 40 * kGiB}}, {});
  EXPECT_TRUE(v.fits);
  EXPECT_TRUE(v.consumed.empty());
  v = ConsumeCapacity(device, {{"memory", 90 * kGiB}}, {});
  EXPECT_FALSE(v.fits);
}

}  // namespace
}  // namespace deviceshare::dra
