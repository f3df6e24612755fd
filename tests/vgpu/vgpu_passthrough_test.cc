// Without a limit, and with CUDA_DISABLE_CONTROL=true whatever the limits
// say, libvgpu.so must be invisible: a scripted workload prints exactly
// the same output with and without it preloaded.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/vgpu_env.h"

namespace deviceshare::testing {
namespace {

std::vector<std::string> Script(const std::string& resolve) {
  std::vector<std::string> script = {
      "--no-timing", "--resolve=" + resolve, "init", "count", "uuid", "meminfo",
      "totalmem",    "nvml-meminfo"};
  for (const char* path : {"memalloc", "pitch", "managed", "array", "array3d",
                           "mipmapped", "vmm", "async", "frompool", "graph"}) {
    script.insert(script.end(), {"alloc", path, "64m"});
  }
  // Past the physical end, then back.
  script.insert(script.end(),
                {"meminfo", "nvml-meminfo", "alloc-until-oom", "memalloc",
                 "512m", "meminfo", "totalmem", "free-all", "meminfo",
                 "nvml-meminfo", "alloc", "memalloc", "1k", "free-all"});
  return script;
}

class VgpuPassThroughTest : public ::testing::TestWithParam<std::string> {};

TEST_P(VgpuPassThroughTest, OutputIsByteIdentical) {
  const std::string& resolve = GetParam();
  const bool linked = resolve == "linked";
  const std::vector<FakeGpuSpec> gpus = {{FakeGpuUuid(0), 4096},
                                         {FakeGpuUuid(1), 2048}};
  auto run = [&](bool preload,
                 std::vector<std::pair<std::string, std::string>> env) {
    VgpuWorld world(gpus);  // a fresh GPU for each run
    return world.Run({.args = Script(resolve),
                      .env = std::move(env),
                      .preload = preload,
                      .linked = linked});
  };
  const ProbeResult native = run(false, {});
  ASSERT_EQ(native.exit_code, 0) << native.Describe();
  ASSERT_EQ(native.Op("alloc-until-oom")["code"], 2) << native.Describe();

  const ProbeResult unlimited = run(true, {});
  EXPECT_EQ(unlimited.exit_code, 0) << unlimited.Describe();
  EXPECT_EQ(unlimited.out, native.out) << unlimited.Describe();

  const ProbeResult disabled =
      run(true, {{"CUDA_DISABLE_CONTROL", "true"},
                 {"CUDA_DEVICE_MEMORY_LIMIT", "1g"},
                 {"CUDA_DEVICE_SM_LIMIT", "25"},
                 {"GPU_CORE_UTILIZATION_POLICY", "force"}});
  EXPECT_EQ(disabled.exit_code, 0) << disabled.Describe();
  EXPECT_EQ(disabled.out, native.out) << disabled.Describe();
}

INSTANTIATE_TEST_SUITE_P(Resolve, VgpuPassThroughTest,
                         ::testing::Values("getproc", "dlsym", "linked"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace deviceshare::testing
