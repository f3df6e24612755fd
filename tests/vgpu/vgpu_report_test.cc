// What a limited process is told about memory: cuMemGetInfo_v2,
// cuDeviceTotalMem_v2 and NVML's memory info v1/v2 all report
// total = min(limit, physical), used <= total and free = total - used, even
// when others hold the GPU's memory; and the limit follows the GPU, not
// the CUDA ordinal, when CUDA_VISIBLE_DEVICES renumbers (by index or UUID).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/vgpu_env.h"

namespace deviceshare::testing {
namespace {

const std::vector<std::string> kReportScript = {
    "init", "alloc", "memalloc", "256m", "meminfo", "totalmem", "nvml-meminfo"};

// The invariants every report must keep, whatever the numbers.
void ExpectConsistent(const ProbeResult& result, uint64_t total) {
  const nlohmann::json meminfo = result.Op("meminfo");
  ASSERT_EQ(meminfo["code"], 0) << result.Describe();
  EXPECT_EQ(meminfo["total"], total) << result.Describe();
  EXPECT_GE(meminfo["free"].get<int64_t>(), 0) << result.Describe();
  EXPECT_LE(meminfo["free"].get<uint64_t>(), total) << result.Describe();
  const nlohmann::json totalmem = result.Op("totalmem");
  EXPECT_EQ(totalmem["code"], 0) << result.Describe();
  EXPECT_EQ(totalmem["bytes"], total) << result.Describe();
  const nlohmann::json nvml = result.Op("nvml-meminfo");
  ASSERT_EQ(nvml["code"], 0) << result.Describe();
  for (const std::string& v : std::vector<std::string>{"v1", "v2"}) {
    ASSERT_EQ(nvml[v + "_code"], 0) << v << "\n" << result.Describe();
    const int64_t nvml_total = nvml[v + "_total"];
    const int64_t used = nvml[v + "_used"];
    const int64_t free_bytes = nvml[v + "_free"];
    const int64_t reserved = v == "v2" ? nvml.value("v2_reserved", 0) : 0;
    EXPECT_EQ(nvml_total, static_cast<int64_t>(total)) << v << "\n"
                                                       << result.Describe();
    EXPECT_GE(used, 0) << v << "\n" << result.Describe();
    EXPECT_GE(free_bytes, 0) << v << "\n" << result.Describe();
    EXPECT_LE(used, nvml_total) << v << "\n" << result.Describe();
    EXPECT_EQ(free_bytes + used + reserved, nvml_total) << v << "\n"
                                                        << result.Describe();
  }
}

TEST(VgpuReportTest, LimitBelowPhysicalIsTheTotal) {
  VgpuWorld world({{FakeGpuUuid(0), 4096}});
  const ProbeResult result =
      world.Run({.args = kReportScript,
                 .env = {{"CUDA_DEVICE_MEMORY_LIMIT", "1g"}},
                 .preload = true});
  ASSERT_EQ(result.exit_code, 0) << result.Describe();
  ExpectConsistent(result, 1024 * kMiB);
  // Exact: what this process holds is all that is used.
  EXPECT_EQ(result.Op("meminfo")["free"], 768 * kMiB) << result.Describe();
  EXPECT_EQ(result.Op("nvml-meminfo")["v1_used"], 256 * kMiB)
      << result.Describe();
}

TEST(VgpuReportTest, LimitAbovePhysicalIsClampedToPhysical) {
  VgpuWorld world({{FakeGpuUuid(0), 1024}});
  const ProbeResult result =
      world.Run({.args = kReportScript,
                 .env = {{"CUDA_DEVICE_MEMORY_LIMIT", "4g"}},
                 .preload = true});
  ASSERT_EQ(result.exit_code, 0) << result.Describe();
  ExpectConsistent(result, 1024 * kMiB);
  EXPECT_EQ(result.Op("meminfo")["free"], 768 * kMiB) << result.Describe();
}

// Another process (outside the container: no interposer) holds 3.5 GiB of
// the 4 GiB GPU; the container's 2 GiB view must still add up.
TEST(VgpuReportTest, UsedStaysWithinTotalWhenOthersHoldMemory) {
  VgpuWorld world({{FakeGpuUuid(0), 4096}});
  const std::string held = world.dir() + "/held";
  const std::string done = world.dir() + "/done";
  ProbeProcess outsider =
      world.Start({.args = {"init", "alloc", "memalloc", "3584m",
                            "signal-ready", held, "wait-file", done}});
  ASSERT_TRUE(WaitForFile(held));
  const ProbeResult result =
      world.Run({.args = kReportScript,
                 .env = {{"CUDA_DEVICE_MEMORY_LIMIT", "2g"}},
                 .preload = true});
  TouchFile(done);
  const ProbeResult outside = outsider.Wait();
  ASSERT_EQ(outside.Op("alloc")["code"], 0) << outside.Describe();
  ASSERT_EQ(result.exit_code, 0) << result.Describe();
  EXPECT_EQ(result.Op("alloc")["code"], 0) << result.Describe();
  ExpectConsistent(result, 2048 * kMiB);
}

struct Visible {
  std::string name;
  std::string value;  // CUDA_VISIBLE_DEVICES
};

class VgpuVisibleDevicesTest : public ::testing::TestWithParam<Visible> {};

// Two GPUs with limits 512 MiB (GPU 0) and 1 GiB (GPU 1). The container
// index of CUDA_DEVICE_MEMORY_LIMIT_<i> is the GPU's place in the
// container (NVML's enumeration here), so a process that sees GPU 1 as
// CUDA ordinal 0 gets GPU 1's limit and charges GPU 1 only.
TEST_P(VgpuVisibleDevicesTest, LimitFollowsTheGpu) {
  VgpuWorld world({{FakeGpuUuid(0), 4096}, {FakeGpuUuid(1), 4096}});
  const std::string held = world.dir() + "/held";
  const std::string done = world.dir() + "/done";
  const bool both = GetParam().value.find(',') != std::string::npos;
  std::vector<std::string> script = {"init", "count", "uuid", "totalmem", "0"};
  if (both) script.insert(script.end(), {"totalmem", "1"});
  script.insert(script.end(), {"alloc-until-oom", "memalloc", "64m",
                               "signal-ready", held, "wait-file", done});
  ProbeProcess probe =
      world.Start({.args = script,
                   .env = {{"CUDA_DEVICE_MEMORY_LIMIT_0", "512m"},
                           {"CUDA_DEVICE_MEMORY_LIMIT_1", "1g"},
                           {"CUDA_VISIBLE_DEVICES", GetParam().value}},
                   .preload = true});
  const bool reached = WaitForFile(held);
  const uint64_t used0 = world.PhysicalUsed(FakeGpuUuid(0)).value_or(0);
  const uint64_t used1 = world.PhysicalUsed(FakeGpuUuid(1)).value_or(0);
  TouchFile(done);
  const ProbeResult result = probe.Wait();
  ASSERT_TRUE(reached) << result.Describe();
  ASSERT_EQ(result.exit_code, 0) << result.Describe();
  EXPECT_EQ(result.Op("count")["count"], both ? 2 : 1) << result.Describe();
  EXPECT_EQ(result.Op("uuid")["uuids"][0], FakeGpuUuid(1)) << result.Describe();
  EXPECT_EQ(result.Op("totalmem")["bytes"], 1024 * kMiB) << result.Describe();
  if (both) {
    EXPECT_EQ(result.Op("totalmem", 1)["bytes"], 512 * kMiB)
        << result.Describe();
  }
  const nlohmann::json oom = result.Op("alloc-until-oom");
  EXPECT_EQ(oom["code"], 2) << result.Describe();
  EXPECT_EQ(oom["bytes"], 1024 * kMiB) << result.Describe();
  EXPECT_EQ(used0, 0u) << result.Describe();
  EXPECT_EQ(used1, 1024 * kMiB) << result.Describe();
}

INSTANTIATE_TEST_SUITE_P(
    Spellings, VgpuVisibleDevicesTest,
    ::testing::Values(Visible{"Index", "1"}, Visible{"Uuid", FakeGpuUuid(1)},
                      Visible{"ReorderedIndices", "1,0"},
                      Visible{"ReorderedUuids",
                              FakeGpuUuid(1) + "," + FakeGpuUuid(0)}),
    [](const ::testing::TestParamInfo<Visible>& info) {
      return info.param.name;
    });

}  // namespace
}  // namespace deviceshare::testing
