// libvgpu.so's SM limiter against the fake GPU's virtual clock: a process
// launching 1 ms full-GPU kernels back to back is held to its
// CUDA_DEVICE_SM_LIMIT share of GPU time, within 5 points in every 1 s
// window after the first 2 s, whichever way it launches; unlimited it
// keeps the GPU busy. GPU time comes from the fake's kernel log.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "testing/vgpu_env.h"

namespace deviceshare::testing {
namespace {

constexpr uint64_t kSecondNs = 1000000000ull;
// 8 blocks of 256 threads per SM on 132 SMs: one wave, 1 ms per launch.
const std::vector<std::string> kLoop = {"launch-loop", "spin_1000us", "1056",
                                        "256"};

struct SmCase {
  std::string launch;
  int limit;  // percent
};

// Runs the loop for `seconds` and returns the busy fraction of each whole
// 1 s window from `skip` seconds after its first kernel.
std::vector<double> BusyWindows(const VgpuWorld& world,
                                const ProbeResult& result, int skip,
                                int seconds) {
  const std::vector<fake_cuda::KernelView> kernels = world.Kernels();
  uint64_t first = ~0ull;
  for (const fake_cuda::KernelView& kernel : kernels) {
    if (kernel.pid == result.pid) first = std::min(first, kernel.start_ns);
  }
  std::vector<double> windows;
  if (first == ~0ull) return windows;
  for (int w = skip; w + 1 < seconds; ++w) {
    windows.push_back(BusyFraction(kernels, result.pid, first + w * kSecondNs,
                                   first + (w + 1) * kSecondNs));
  }
  return windows;
}

std::string Show(const std::vector<double>& windows) {
  std::string text = "busy per window:";
  for (const double busy : windows) text += " " + std::to_string(busy);
  return text;
}

class VgpuSmTest : public ::testing::TestWithParam<SmCase> {};

TEST_P(VgpuSmTest, BusyTracksTheLimit) {
  const SmCase& param = GetParam();
  constexpr int kSeconds = 5;
  VgpuWorld world({{FakeGpuUuid(0), 4096, 132}});
  std::vector<std::string> args = {"--launch=" + param.launch, "init"};
  args.insert(args.end(), kLoop.begin(), kLoop.end());
  args.push_back(std::to_string(kSeconds));
  const ProbeResult result =
      world.Run({.args = args,
                 .env = {{"CUDA_DEVICE_SM_LIMIT", std::to_string(param.limit)},
                         {"GPU_CORE_UTILIZATION_POLICY", "force"}},
                 .preload = true});
  ASSERT_EQ(result.exit_code, 0) << result.Describe();
  ASSERT_EQ(result.Op("launch-loop")["code"], 0) << result.Describe();
  const std::vector<double> windows = BusyWindows(world, result, 2, kSeconds);
  ASSERT_EQ(windows.size(), 2u) << result.Describe();
  // In the XML/JSON report (--gtest_output), for bench/README.md.
  RecordProperty("busy_per_window", Show(windows));
  for (const double busy : windows) {
    EXPECT_NEAR(busy, param.limit / 100.0, 0.05) << Show(windows);
  }
}

INSTANTIATE_TEST_SUITE_P(Launches, VgpuSmTest,
                         ::testing::Values(SmCase{"kernel", 25},
                                           SmCase{"kernel", 50},
                                           SmCase{"ex", 50}, SmCase{"coop", 25},
                                           SmCase{"graph", 25}),
                         [](const ::testing::TestParamInfo<SmCase>& info) {
                           return info.param.launch + "_" +
                                  std::to_string(info.param.limit);
                         });

TEST(VgpuSmUnlimitedTest, KeepsTheGpuBusy) {
  constexpr int kSeconds = 3;
  VgpuWorld world({{FakeGpuUuid(0), 4096, 132}});
  std::vector<std::string> args = {"init"};
  args.insert(args.end(), kLoop.begin(), kLoop.end());
  args.push_back(std::to_string(kSeconds));
  // Synchronizing leaves the GPU idle until the probe is scheduled again,
  // which on a loaded 2-core machine took long enough to fail this test now
  // and then when it synchronized every 8 ms; with a 64 ms queue the
  // wake-ups cost well under the 5 % this test allows, and what it measures
  // is left: the limiter, switched off, holds back no launch.
  args.push_back("sync-every");
  args.push_back("64");
  const ProbeResult result =
      world.Run({.args = args,
                 .env = {{"CUDA_DEVICE_MEMORY_LIMIT", "1g"},
                         {"GPU_CORE_UTILIZATION_POLICY", "force"}},
                 .preload = true});
  ASSERT_EQ(result.exit_code, 0) << result.Describe();
  const std::vector<double> windows = BusyWindows(world, result, 1, kSeconds);
  ASSERT_EQ(windows.size(), 1u) << result.Describe();
  EXPECT_GE(windows[0], 0.95) << Show(windows);
}

}  // namespace
}  // namespace deviceshare::testing
