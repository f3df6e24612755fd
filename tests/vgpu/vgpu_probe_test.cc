// The probe itself over the fake driver, without libvgpu.so: its argument
// errors, and every allocation path and resolve mode running into the
// fake GPU's physical memory. The preloaded suites rely on both.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/vgpu_env.h"

namespace deviceshare::testing {
namespace {

const std::vector<std::string> kPaths = {
    "memalloc",  "pitch", "managed", "array",    "array3d",
    "mipmapped", "vmm",   "async",   "frompool", "graph"};

TEST(VgpuProbeTest, BadArgumentsExitTwoNamingTheArgument) {
  VgpuWorld world({{FakeGpuUuid(0), 1024}});
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--resolve=sideways", "init"}, "--resolve=sideways"},
      {{"init", "frobnicate"}, "frobnicate"},
      {{"alloc", "memalloc"}, "alloc"},
      {{"alloc", "tape", "1m"}, "tape"},
      {{"alloc", "memalloc", "12q"}, "12q"},
      {{"alloc", "array", "3k"}, "3k"},
      {{"launch-loop", "spin_10us", "1", "4096", "1"}, "4096"},
      {{"init", "-1"}, "-1"},
      {{}, "no ops"}};
  for (const auto& [args, named] : cases) {
    const ProbeResult result = world.Run({.args = args});
    EXPECT_EQ(result.exit_code, 2) << result.Describe();
    EXPECT_NE(result.err.find(named), std::string::npos) << result.Describe();
    EXPECT_TRUE(result.lines.empty()) << result.Describe();
  }
}

struct PathMode {
  std::string path;
  std::string resolve;
};

class VgpuProbePhysicalTest : public ::testing::TestWithParam<PathMode> {};

// Without an interposer each path stops at the fake GPU's physical total
// with CUDA_ERROR_OUT_OF_MEMORY; after free-all the memory is all back.
TEST_P(VgpuProbePhysicalTest, EveryPathStopsAtPhysicalMemory) {
  const PathMode& param = GetParam();
  constexpr uint64_t kPhysical = 1024 * kMiB;
  constexpr uint64_t kStep = 64 * kMiB;
  VgpuWorld world({{FakeGpuUuid(0), kPhysical / kMiB}});
  const ProbeResult result =
      world.Run({.args = {"--resolve=" + param.resolve, "init",
                          "alloc-until-oom", param.path, "64m", "free-all",
                          "alloc-until-oom", param.path, "64m"},
                 .linked = param.resolve == "linked"});
  ASSERT_EQ(result.exit_code, 0) << result.Describe();
  EXPECT_EQ(result.Op("init")["code"], 0) << result.Describe();
  for (int round = 0; round < 2; ++round) {
    const nlohmann::json oom = result.Op("alloc-until-oom", round);
    ASSERT_TRUE(oom.is_object()) << result.Describe();
    EXPECT_EQ(oom["code"], 2) << result.Describe();
    const uint64_t bytes = oom["bytes"];
    // Pools grow in 32 MiB chunks: up to one chunk is reserved, not used.
    EXPECT_GE(bytes, kPhysical - kStep - 32 * kMiB) << result.Describe();
    EXPECT_LE(bytes, kPhysical) << result.Describe();
  }
  EXPECT_EQ(result.Op("free-all")["code"], 0) << result.Describe();
}

std::vector<PathMode> AllPathModes() {
  std::vector<PathMode> out;
  for (const char* resolve : {"getproc", "dlsym", "linked"}) {
    for (const std::string& path : kPaths) out.push_back({path, resolve});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Paths, VgpuProbePhysicalTest,
                         ::testing::ValuesIn(AllPathModes()),
                         [](const ::testing::TestParamInfo<PathMode>& info) {
                           return info.param.path + "_" + info.param.resolve;
                         });

// The reports of an untouched fake: physical totals everywhere, NVML and
// the driver agreeing on what is used.
TEST(VgpuProbeTest, ReportsPhysicalMemoryWithoutInterposer) {
  VgpuWorld world({{FakeGpuUuid(0), 2048}, {FakeGpuUuid(1), 4096}});
  const ProbeResult result =
      world.Run({.args = {"init", "1", "count", "uuid", "alloc", "memalloc",
                          "256m", "meminfo", "totalmem", "nvml-meminfo"}});
  ASSERT_EQ(result.exit_code, 0) << result.Describe();
  EXPECT_EQ(result.Op("count")["count"], 2);
  EXPECT_EQ(result.Op("uuid")["uuids"],
            nlohmann::json({FakeGpuUuid(0), FakeGpuUuid(1)}))
      << result.Describe();
  const nlohmann::json meminfo = result.Op("meminfo");
  EXPECT_EQ(meminfo["total"], 4096 * kMiB) << result.Describe();
  EXPECT_EQ(meminfo["free"], (4096 - 256) * kMiB) << result.Describe();
  EXPECT_EQ(result.Op("totalmem")["bytes"], 4096 * kMiB);
  const nlohmann::json nvml = result.Op("nvml-meminfo");
  EXPECT_EQ(nvml["uuid"], FakeGpuUuid(1)) << result.Describe();
  EXPECT_EQ(nvml["v1_total"], 4096 * kMiB) << result.Describe();
  EXPECT_EQ(nvml["v1_used"], 256 * kMiB) << result.Describe();
  EXPECT_EQ(nvml["v2_code"], 0) << result.Describe();
  EXPECT_EQ(nvml["v2_used"], 256 * kMiB) << result.Describe();
}

}  // namespace
}  // namespace deviceshare::testing
