// Tests of simulate's option checks: one complete kind of input, errors that
// name a missing file or a bad config, and the seed and limit options. The
// readers themselves are tested in tests/input.
#include <string>

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
using ::deviceshare::testing::WriteTempFile;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(SimulateOptionsTest, OneCompleteInputKind) {
  SimulateOptions none;
  EXPECT_THAT(CheckOptions(none), StatusIs(absl::StatusCode::kInvalidArgument,
                                           HasSubstr("no input")));
  SimulateOptions half;
  half.cluster_path = "c.yaml";
  EXPECT_THAT(CheckOptions(half), StatusIs(absl::StatusCode::kInvalidArgument,
                                           "--cluster needs --pods"));
  SimulateOptions mixed = half;
  mixed.pods_path = "p.yaml";
  mixed.trace_nodes_path = "n.csv";
  EXPECT_THAT(CheckOptions(mixed), StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr("give one")));
  SimulateOptions synthetic;
  synthetic.synthetic_nodes = 2;
  synthetic.gpus_per_node = 0;
  synthetic.synthetic_pods = 3;
  EXPECT_THAT(CheckOptions(synthetic),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--gpus-per-node: 0 is outside")));
  synthetic.gpus_per_node = 8;
  EXPECT_THAT(CheckOptions(synthetic), ::deviceshare::testing::IsOk());
}

TEST(SimulateOptionsTest, MissingFilesAndBadConfigNameTheFile) {
  SimulateOptions options;
  options.cluster_path = "/nonexistent/cluster.yaml";
  options.pods_path = WriteTempFile("pods.yaml", "");
  EXPECT_THAT(Simulate(options),
              StatusIs(absl::StatusCode::kNotFound,
                       StartsWith("--cluster /nonexistent/cluster.yaml: cannot "
                                  "open")));
  auto bad_config =
      SimulateJson("nodes: []\n", "", "nvidia:\n  deviceSplitCout: 3\n");
  EXPECT_THAT(bad_config, StatusIs(absl::StatusCode::kInvalidArgument,
                                   HasSubstr("config.yaml: nvidia."
                                             "deviceSplitCout: unknown key")));
}

TEST(SimulateOptionsTest, SeedShufflesAndLimitCuts) {
  std::vector<std::string> docs;
  for (int i = 0; i < 20; ++i) {
    docs.push_back(PodYaml(absl::StrCat("p", i),
                           "nvidia.com/gpu: 1, "
                           "nvidia.com/gpumem: 10"));
  }
  const std::string cluster =
      "nodes:\n- name: n\n  gpus:\n  - {model: x, memory_mib: 81920, "
      "count: 8}\n";
  auto order = [](const nlohmann::ordered_json& report) {
    std::vector<std::string> pods;
    for (const auto& p : report["placements"]) pods.push_back(p["pod"]);
    return pods;
  };
  auto plain = SimulateJson(cluster, Docs(docs));
  ASSERT_OK(plain);
  EXPECT_EQ(order(*plain).front(), "default/p0");
  SimulateOptions seeded;
  seeded.seed = 7;
  auto a = SimulateJson(cluster, Docs(docs), "", seeded);
  auto b = SimulateJson(cluster, Docs(docs), "", seeded);
  ASSERT_OK(a);
  ASSERT_OK(b);
  EXPECT_EQ(order(*a), order(*b));
  EXPECT_NE(order(*a), order(*plain));
  SimulateOptions limited;
  limited.limit_pods = 5;
  auto cut = SimulateJson(cluster, Docs(docs), "", limited);
  ASSERT_OK(cut);
  EXPECT_EQ((*cut)["summary"]["pods"], 5);
}

}  // namespace
}  // namespace deviceshare::simulate
