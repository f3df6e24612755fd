// 16 processes under one container limit, started together and racing to
// allocate with different paths and step sizes: together they never hold
// more than the limit, not even for an instant (a sampler watches both the
// fake GPU's physical use and libvgpu.so's region), and they fill it.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "testing/vgpu_env.h"
#include "testing/vgpu_region.h"

namespace deviceshare::testing {
namespace {

constexpr uint64_t kLimit = 1024 * kMiB;
constexpr int kProcesses = 16;

TEST(VgpuRaceTest, SixteenProcessesNeverPassTheLimit) {
  VgpuWorld world({{FakeGpuUuid(0), 8192}});
  const std::vector<std::string> paths = {"memalloc", "vmm", "managed",
                                          "async"};
  const std::vector<uint64_t> steps_mib = {2, 4, 8, 16, 32, 64};
  std::mt19937 random(20261122);
  const std::string go = world.dir() + "/go";
  const std::string end = world.dir() + "/end";

  std::vector<ProbeProcess> probes;
  std::vector<uint64_t> steps;
  int pool_processes = 0;
  for (int i = 0; i < kProcesses; ++i) {
    const std::string& path = paths[i % paths.size()];
    pool_processes += path == "async";
    steps.push_back(steps_mib[random() % steps_mib.size()] * kMiB);
    probes.push_back(world.Start(
        {.args = {"init", "wait-file", go, "alloc-until-oom", path,
                  std::to_string(steps.back()), "signal-ready",
                  world.dir() + "/ready" + std::to_string(i), "wait-file", end},
         .env = {{"CUDA_DEVICE_MEMORY_LIMIT", "1g"}},
         .preload = true}));
  }

  // The sampler watches the GPU's physical use throughout the race.
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> max_physical{0};
  std::atomic<uint64_t> max_charged{0};
  std::atomic<int> samples{0};
  auto raise = [](std::atomic<uint64_t>& max, uint64_t value) {
    uint64_t seen = max.load();
    while (value > seen && !max.compare_exchange_weak(seen, value)) {
    }
  };
  std::thread sampler([&] {
    fake_cuda::StateReader state;
    VgpuRegionReader region;
    while (!stop.load()) {
      if (!state.is_open()) state.Open(world.state_path());
      if (!region.is_open()) region.Open(world.region_path());
      bool sampled = false;
      if (const auto used = state.PhysicalUsed(FakeGpuUuid(0))) {
        raise(max_physical, *used);
        sampled = true;
      }
      if (const int device = region.Device(FakeGpuUuid(0)); device >= 0) {
        raise(max_charged, region.Charged(device));
      }
      if (sampled) {
        ++samples;
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    }
  });
  TouchFile(go);
  bool all_ready = true;
  for (int i = 0; i < kProcesses; ++i) {
    all_ready =
        WaitForFile(world.dir() + "/ready" + std::to_string(i)) && all_ready;
  }
  const std::optional<uint64_t> held = world.PhysicalUsed(FakeGpuUuid(0));
  VgpuRegionReader region;
  ASSERT_TRUE(region.Open(world.region_path()));
  const int device = region.Device(FakeGpuUuid(0));
  ASSERT_GE(device, 0);
  const uint64_t charged = region.Charged(device);
  const uint64_t slot_sum = region.SlotSum(device);
  stop = true;
  sampler.join();
  TouchFile(end);

  uint64_t total = 0;
  std::string all;
  for (int i = 0; i < kProcesses; ++i) {
    const ProbeResult result = probes[i].Wait();
    all += result.Describe();
    ASSERT_EQ(result.exit_code, 0) << result.Describe();
    const nlohmann::json oom = result.Op("alloc-until-oom");
    ASSERT_TRUE(oom.is_object()) << result.Describe();
    EXPECT_EQ(oom["code"], 2) << result.Describe();
    total += oom["bytes"].get<uint64_t>();
  }
  ASSERT_TRUE(all_ready) << all;
  EXPECT_GT(samples.load(), 0);
  EXPECT_LE(max_physical.load(), kLimit) << all;
  EXPECT_LE(max_charged.load(), kLimit) << all;
  // The ledger adds up: the GPU's counter is its processes' charges, and
  // covers what they obtained.
  EXPECT_EQ(region.Limit(device), kLimit);
  EXPECT_EQ(charged, slot_sum) << all;
  EXPECT_LE(charged, kLimit) << all;
  ASSERT_TRUE(held.has_value());
  EXPECT_LE(*held, kLimit) << all;
  EXPECT_LE(total, kLimit) << all;
  // Every process stopped because the rest held more than L - its step, and
  // nobody freed: the container is full to within the smallest step, and a
  // pool's unused reserve (under one 32 MiB chunk) per pool process.
  const uint64_t smallest = *std::min_element(steps.begin(), steps.end());
  EXPECT_GE(total, kLimit - smallest - pool_processes * 32 * kMiB) << all;
  EXPECT_GE(charged, total) << all;
  EXPECT_GT(charged, kLimit - smallest) << all;
}

}  // namespace
}  // namespace deviceshare::testing
