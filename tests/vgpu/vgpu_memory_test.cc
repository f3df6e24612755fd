// libvgpu.so's memory limit on every allocation path, reached through
// every way a program finds the driver: each stops with
// CUDA_ERROR_OUT_OF_MEMORY between L - step - 32 MiB and L, the GPU's
// physical use never passes L, and freeing gives it all back.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/vgpu_env.h"
#include "testing/vgpu_region.h"

namespace deviceshare::testing {
namespace {

constexpr uint64_t kLimit = 1024 * kMiB;
constexpr uint64_t kStep = 64 * kMiB;
constexpr uint64_t kPhysical = 4096 * kMiB;

struct PathMode {
  std::string path;
  std::string resolve;
};

class VgpuMemoryTest : public ::testing::TestWithParam<PathMode> {};

TEST_P(VgpuMemoryTest, EachPathIsLimited) {
  const PathMode& param = GetParam();
  VgpuWorld world({{FakeGpuUuid(0), kPhysical / kMiB}});
  const std::string held = world.dir() + "/held";
  const std::string go_on = world.dir() + "/go-on";
  ProbeProcess probe = world.Start(
      {.args = {"--resolve=" + param.resolve, "init", "alloc-until-oom",
                param.path, "64m", "signal-ready", held, "wait-file", go_on,
                "free-all", "alloc-until-oom", param.path, "64m"},
       .env = {{"CUDA_DEVICE_MEMORY_LIMIT", "1g"}},
       .preload = true,
       .linked = param.resolve == "linked"});
  // What the fake GPU holds while the probe sits at its limit.
  const bool reached = WaitForFile(held);
  const std::optional<uint64_t> physical = world.PhysicalUsed(FakeGpuUuid(0));
  VgpuRegionReader region;
  const bool mapped = region.Open(world.region_path());
  const int device = mapped ? region.Device(FakeGpuUuid(0)) : -1;
  const uint64_t charged = device >= 0 ? region.Charged(device) : 0;
  TouchFile(go_on);
  const ProbeResult result = probe.Wait();
  ASSERT_TRUE(reached) << result.Describe();
  ASSERT_EQ(result.exit_code, 0) << result.Describe();
  EXPECT_EQ(result.Op("init")["code"], 0) << result.Describe();
  ASSERT_TRUE(physical.has_value()) << result.Describe();
  EXPECT_LE(*physical, kLimit) << result.Describe();
  ASSERT_GE(device, 0) << result.Describe();
  EXPECT_LE(charged, kLimit) << result.Describe();
  // Charged covers what the GPU really gave (pool and graph reserves too).
  EXPECT_GE(charged, *physical) << result.Describe();
  for (int round = 0; round < 2; ++round) {
    const nlohmann::json oom = result.Op("alloc-until-oom", round);
    ASSERT_TRUE(oom.is_object()) << result.Describe();
    EXPECT_EQ(oom["code"], 2) << "round " << round << "\n" << result.Describe();
    const uint64_t bytes = oom["bytes"];
    EXPECT_GE(bytes, kLimit - kStep - 32 * kMiB) << "round " << round << "\n"
                                                 << result.Describe();
    EXPECT_LE(bytes, kLimit) << "round " << round << "\n" << result.Describe();
  }
  EXPECT_EQ(result.Op("free-all")["code"], 0) << result.Describe();
}

std::vector<PathMode> AllPathModes() {
  std::vector<PathMode> out;
  for (const char* resolve : {"getproc", "dlsym", "linked"}) {
    for (const char* path :
         {"memalloc", "pitch", "managed", "array", "array3d", "mipmapped",
          "vmm", "async", "frompool", "graph"}) {
      out.push_back({path, resolve});
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Paths, VgpuMemoryTest,
                         ::testing::ValuesIn(AllPathModes()),
                         [](const ::testing::TestParamInfo<PathMode>& info) {
                           return info.param.path + "_" + info.param.resolve;
                         });

// Allocations are charged what the driver really takes: 1 MiB + 1 byte
// costs a 2 MiB page, no more (so at least 511 fit in 1 GiB) and no less
// (so at most 512 do).
TEST(VgpuMemorySmallTest, ChargesAtMostTheRoundedSize) {
  VgpuWorld world({{FakeGpuUuid(0), kPhysical / kMiB}});
  const ProbeResult result =
      world.Run({.args = {"init", "alloc-until-oom", "memalloc", "1048577"},
                 .env = {{"CUDA_DEVICE_MEMORY_LIMIT", "1024m"}},
                 .preload = true});
  ASSERT_EQ(result.exit_code, 0) << result.Describe();
  const nlohmann::json oom = result.Op("alloc-until-oom");
  EXPECT_EQ(oom["code"], 2) << result.Describe();
  EXPECT_GE(oom["count"].get<int>(), 511) << result.Describe();
  EXPECT_LE(oom["count"].get<int>(), 512) << result.Describe();
}

}  // namespace
}  // namespace deviceshare::testing
