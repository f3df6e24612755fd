// A HAMi registration whose migProfiles hold an entry Go's decoder accepts
// but no NVML report could (hami_mig_profiles.h): HAMi serves the node, so
// simulate places on it from the profiles that are usable, end to end.
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
using Json = nlohmann::ordered_json;

TEST(SimulateMigLeniencyTest, NodeWithAnUnusableProfileIsServed) {
  // 1g.5gb is usable; "big" is no profile name and the 7g's placement has
  // size 0, so both are left out of the GPU's catalogue.
  const std::string profiles =
      R"([{"name":"big","memoryMB":40960,"core":100,"sliceCount":7,)"
      R"("placements":[{"start":0,"size":8}]},)"
      R"({"name":"7g.40gb","memoryMB":40192,"core":100,"sliceCount":7,)"
      R"("placements":[{"start":0,"size":0}]},)"
      R"({"name":"1g.5gb","memoryMB":5120,"core":14,"sliceCount":1,)"
      R"("placements":[{"start":0,"size":1}]}])";
  const std::string node = absl::StrCat(
      "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  annotations:\n"
      "    hami.io/node-nvidia-register: '[{\"id\":\"GPU-n1-0\",\"count\":7,"
      "\"devmem\":40960,\"devcore\":100,\"type\":\"NVIDIA-A100-SXM4-40GB\","
      "\"mode\":\"mig\",\"migProfiles\":",
      profiles, ",\"health\":true}]'\n");
  auto report = SimulateJson(
      node,
      Docs({PodYaml("small", "nvidia.com/gpu: 1, nvidia.com/gpumem: 4000",
                    "nvidia.com/vgpu-mode: mig"),
            PodYaml("whole", "nvidia.com/gpu: 1, nvidia.com/gpumem: 30000",
                    "nvidia.com/vgpu-mode: mig")}),
      "scheduler: {modes: [hami-core, mig]}\n");
  ASSERT_OK(report);
  const Json small = PlacementOf(*report, "small");
  ASSERT_FALSE(small.is_null()) << report->dump(1);
  EXPECT_EQ(small["containers"][0]["devices"][0]["mig_profile"], "1g.5gb");
  // Nothing left in the catalogue holds 30000 MiB.
  EXPECT_TRUE(PlacementOf(*report, "whole").is_null()) << report->dump(1);
}

}  // namespace
}  // namespace deviceshare
