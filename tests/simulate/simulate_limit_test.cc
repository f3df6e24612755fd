// Tests of --limit-pods on a pods file (issue 45, "Big inputs"): without
// --seed the pending pods past the limit are counted but not read, while
// the objects after them still count; with --seed every pod is read, as
// the limit applies after the shuffle.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/simulate/simulate.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simulate_fixtures.h"
#include "testing/status_matchers.h"

namespace deviceshare::simulate {
namespace {

using ::deviceshare::testing::Docs;
using ::deviceshare::testing::PodYaml;
using ::deviceshare::testing::SimulateJson;
using ::deviceshare::testing::StatusIs;
using ::testing::Contains;
using ::testing::HasSubstr;

constexpr char kCluster[] =
    "nodes:\n- name: n7\n  gpus:\n  - {model: x, memory_mib: 81920, count: "
    "1, uuid: GPU-0}\n";

// Two good pods, a bad one, then a running pod holding the only GPU
// whole: what the limit must still read.
std::string PodsFile() {
  return Docs(
      {PodYaml("a", "nvidia.com/gpu: 1, nvidia.com/gpumem: 10"),
       PodYaml("b", "nvidia.com/gpu: 1, nvidia.com/gpumem: 10"),
       PodYaml("c", "nvidia.com/gpu: 1, nvidia.com/gpumem: \"-3\""),
       PodYaml("old", "nvidia.com/gpu: 1, nvidia.com/gpumem: 81920",
               "hami.io/vgpu-devices-allocated: 'GPU-0,NVIDIA,81920,0:;', "
               "hami.io/vgpu-node: n7")});
}

TEST(SimulateLimitTest, TheLimitLeavesLaterPendingPodsUnreadOnly) {
  EXPECT_THAT(SimulateJson(kCluster, PodsFile()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("pods.yaml: document 3 (line 25): pod "
                                 "default/c")));
  SimulateOptions limited;
  limited.limit_pods = 2;
  auto report = SimulateJson(kCluster, PodsFile(), "", limited);
  ASSERT_OK(report);
  EXPECT_EQ((*report)["summary"]["pods"], 2);
  // The running pod after the bad one was read: it fills the GPU.
  EXPECT_EQ((*report)["summary"]["placed"], 0);
  std::vector<std::string> notes;
  for (const auto& note : (*report)["notes"]) notes.push_back(note);
  EXPECT_THAT(notes,
              Contains(HasSubstr("--limit-pods: the first 2 of 3 pending "
                                 "pods; the other 1 were counted, not "
                                 "read")));
}

TEST(SimulateLimitTest, WithASeedEveryPodIsRead) {
  SimulateOptions seeded;
  seeded.limit_pods = 2;
  seeded.seed = 7;
  EXPECT_THAT(SimulateJson(kCluster, PodsFile(), "", seeded),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("document 3 (line 25): pod default/c")));
}

}  // namespace
}  // namespace deviceshare::simulate
