// HAMi's and Volcano's own edge cases (docs/reference/upstream-cases.md),
// restated as inputs to `simulate` end to end: one test per disagreement
// kind the issue lists, each naming its upstream test or code. The wire
// side of each (records, registrations) is tested through the extender and
// the node agent.
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simulate_fixtures.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::Docs;
using ::deviceshare::testing::PlacementOf;
using ::deviceshare::testing::PodYaml;
using ::deviceshare::testing::SimulateJson;
using ::deviceshare::testing::UnschedulableOf;
using ::testing::HasSubstr;
using Json = nlohmann::ordered_json;

std::string VolcanoNode(const std::string& name, const std::string& register_) {
  return absl::StrCat("apiVersion: v1\nkind: Node\nmetadata:\n  name: ", name,
                      "\n  annotations:\n    volcano.sh/node-vgpu-register: '",
                      register_, "'\n");
}

// Kind 6. Volcano counts memory in gpuMemoryFactor units in the
// registration and the request alike (config/vgpu.go:111; its device plugin
// registers MiB / factor, its node plugin sets Usedmem x factor MiB): a
// 16384 MiB GPU registers 8192, a pod asking 3000 gets 6000 MiB, and two
// such pods fit where a third does not.
TEST(SimulateUpstreamTest, VolcanoMemoryFactorCountsUnitsOnBothSides) {
  const std::string pod_limits =
      "volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 3000, "
      "volcano.sh/vgpu-cores: 25";
  auto report = SimulateJson(
      VolcanoNode("v", "GPU-0000A,4,8192,NVIDIA-Tesla T4,true,hami-core:"),
      Docs({PodYaml("a", pod_limits), PodYaml("b", pod_limits),
            PodYaml("c", pod_limits)}),
      "nvidia: {gpuMemoryFactor: 2}\n");
  ASSERT_OK(report);
  EXPECT_EQ((*report)["summary"]["gpu_memory_capacity_mib"], 16384);
  const Json a = PlacementOf(*report, "a");
  ASSERT_FALSE(a.is_null()) << report->dump(1);
  EXPECT_EQ(a["containers"][0]["devices"][0]["memory_mib"], 6000);
  EXPECT_EQ(a["containers"][0]["env"]["CUDA_DEVICE_MEMORY_LIMIT_0"], "6000m");
  EXPECT_FALSE(PlacementOf(*report, "b").is_null());
  const Json c = UnschedulableOf(*report, "c");
  ASSERT_FALSE(c.is_null()) << report->dump(1);
  EXPECT_THAT(c.dump(), HasSubstr("Insufficient"));
}

}  // namespace
}  // namespace deviceshare
