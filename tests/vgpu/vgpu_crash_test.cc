// SIGKILL inside each of libvgpu.so's critical sections (the library kills
// itself at a named failpoint): the next process still initializes and
// makes its first allocation in under 100 ms, and the accounting is exact,
// the dead process's charge reclaimed to the byte.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <vector>

#include "testing/vgpu_env.h"
#include "testing/vgpu_region.h"

namespace deviceshare::testing {
namespace {

constexpr uint64_t kLimit = 1024 * kMiB;
const std::pair<std::string, std::string> kLimitEnv = {
    "CUDA_DEVICE_MEMORY_LIMIT", "1g"};

// The process after the crash: init + a first allocation, then the rest
// of the limit.
const std::vector<std::string> kFreshScript = {
    "init",     "alloc", "memalloc", "64m", "alloc-until-oom",
    "memalloc", "64m",   "meminfo"};

class VgpuCrashTest : public ::testing::TestWithParam<std::string> {};

TEST_P(VgpuCrashTest, NextProcessRecoversFastAndExactly) {
  const std::string& failpoint = GetParam();

  // What a start costs on this machine now, in a world of its own.
  double baseline_ms = 0;
  {
    VgpuWorld warm({{FakeGpuUuid(0), 4096}});
    const ProbeResult result =
        warm.Run({.args = kFreshScript, .env = {kLimitEnv}, .preload = true});
    ASSERT_EQ(result.exit_code, 0) << result.Describe();
    baseline_ms = result.wall_ms;
  }

  VgpuWorld world({{FakeGpuUuid(0), 4096}});
  if (failpoint == "reclaim") {
    // A dead process for the victim to reclaim.
    const std::string held = world.dir() + "/held";
    ProbeProcess holder =
        world.Start({.args = {"init", "alloc", "memalloc", "256m",
                              "signal-ready", held, "hold", "30000"},
                     .env = {kLimitEnv},
                     .preload = true});
    ASSERT_TRUE(WaitForFile(held));
    kill(holder.pid(), SIGKILL);
    const ProbeResult result = holder.Wait();
    ASSERT_EQ(result.signal, SIGKILL) << result.Describe();
  }
  std::vector<std::string> victim_script = {"init", "alloc", "memalloc", "64m"};
  if (failpoint == "release") victim_script.push_back("free-all");
  const ProbeResult victim =
      world.Run({.args = victim_script,
                 .env = {kLimitEnv, {"DEVICESHARE_VGPU_FAILPOINT", failpoint}},
                 .preload = true});
  ASSERT_EQ(victim.signal, SIGKILL) << "the failpoint did not fire\n"
                                    << victim.Describe();

  const ProbeResult fresh =
      world.Run({.args = kFreshScript, .env = {kLimitEnv}, .preload = true});
  ASSERT_EQ(fresh.exit_code, 0) << fresh.Describe();
  const nlohmann::json init = fresh.Op("init");
  const nlohmann::json first = fresh.Op("alloc");
  ASSERT_EQ(init["code"], 0) << fresh.Describe();
  ASSERT_EQ(first["code"], 0) << fresh.Describe();
  EXPECT_LT(init["us"].get<int64_t>() + first["us"].get<int64_t>(), 100000)
      << fresh.Describe();
  // Work done before main (a constructor waiting on a lock) shows only in
  // the process's wall time.
  EXPECT_LT(fresh.wall_ms, baseline_ms + 100) << fresh.Describe();

  // Exact: the whole limit but the first allocation is still there.
  const nlohmann::json rest = fresh.Op("alloc-until-oom");
  EXPECT_EQ(rest["code"], 2) << fresh.Describe();
  EXPECT_EQ(rest["bytes"], kLimit - 64 * kMiB) << fresh.Describe();
  const nlohmann::json meminfo = fresh.Op("meminfo");
  EXPECT_EQ(meminfo["total"], kLimit) << fresh.Describe();
  EXPECT_EQ(meminfo["free"], 0) << fresh.Describe();

  // The fresh process exited normally: the ledger is empty again, no slot
  // of the dead left behind.
  VgpuRegionReader region;
  ASSERT_TRUE(region.Open(world.region_path()));
  const int device = region.Device(FakeGpuUuid(0));
  ASSERT_GE(device, 0);
  EXPECT_EQ(region.Charged(device), 0u);
  EXPECT_EQ(region.LiveSlots(), 0);
}

INSTANTIATE_TEST_SUITE_P(Failpoints, VgpuCrashTest,
                         ::testing::Values("region-init", "slot-claim",
                                           "reserve", "release", "reclaim"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace deviceshare::testing
