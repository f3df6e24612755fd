#include "deviceshare/config/device_registration.h"

#include "deviceshare/mig/mig_backend.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::MakeGpu;
using ::deviceshare::testing::StatusIs;

TEST(RegisteredGpuTest, AppliesSplitScalingAndCoreScaling) {
  DeviceConfig config;
  config.device_split_count = 4;
  config.device_memory_scaling_milli = 1500;
  config.device_core_scaling_milli = 2000;
  auto gpu = RegisteredGpu(MakeGpu("n", 0, 81920), config);
  ASSERT_OK(gpu);
  EXPECT_EQ(gpu->split_count, 4);
  EXPECT_EQ(gpu->memory_mib, 122880);
  EXPECT_EQ(gpu->core_capacity, 200);
}

TEST(RegisteredGpuTest, FloorsScaledMemory) {
  DeviceConfig config;
  config.device_memory_scaling_milli = 1333;
  EXPECT_EQ(RegisteredGpu(MakeGpu("n", 0, 1000), config)->memory_mib, 1333);
  EXPECT_EQ(RegisteredGpu(MakeGpu("n", 0, 1001), config)->memory_mib, 1334);
}

TEST(RegisteredGpuTest, MigGpusAreNeverOversubscribed) {
  DeviceConfig config;
  config.device_memory_scaling_milli = 2000;
  config.device_core_scaling_milli = 3000;
  Gpu physical = MakeGpu("n", 0, 40960);
  physical.mode = mig::kMode;
  auto gpu = RegisteredGpu(physical, config);
  ASSERT_OK(gpu);
  EXPECT_EQ(gpu->memory_mib, 40960);
  EXPECT_EQ(gpu->core_capacity, 100);
}

TEST(RegisteredGpuTest, UnknownMemoryNeedsPreconfiguredSize) {
  DeviceConfig config;
  EXPECT_THAT(RegisteredGpu(MakeGpu("n", 0, 0), config),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       ::testing::HasSubstr("preConfiguredDeviceMemory")));
  config.preconfigured_device_memory_mib = 122880;
  EXPECT_EQ(RegisteredGpu(MakeGpu("n", 0, 0), config)->memory_mib, 122880);
}

}  // namespace
}  // namespace deviceshare
