// The index splits a bucket that grows past its limit into buckets by name
// range (BucketKey::first_name). Two states fed the same events, one whose
// buckets split at 3 nodes and one at the default, must agree on every
// decision: the node Search picks (with and without a node budget, which
// visits nodes in bucket order), and the reasons and counts of a pod that
// fits nowhere; and the split state's invariants (each bucket within its
// limit and its names) must hold after every event.
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/policy/policy_registry.h"
#include "deviceshare/policy/policy_set.h"
#include "deviceshare/scheduler/cluster_state.h"
#include "deviceshare/scheduler/decision_path.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::GpuContainer;
using ::deviceshare::testing::MakeConfig;
using ::deviceshare::testing::MakeNode;
using ::deviceshare::testing::MakePod;

// One state and the decision path over it, under the parameter's policy.
struct Side {
  Side(const Config& config, const BackendSet& backends,
       const PolicySet& policies, size_t most_nodes_per_bucket)
      : state(&backends, {}, most_nodes_per_bucket),
        path(&config, &backends, &policies) {}

  ClusterState state;
  DecisionPath path;
};

size_t BucketCount(const ClusterState& state) {
  size_t count = 0;
  for (const auto& [shape, group] : state.shape_groups()) {
    count += group.buckets.size();
  }
  return count;
}

// A node policy, and the nodes it scores (0: all; a budget visits nodes in
// bucket order, no budget skips twins, across buckets too).
class BucketSplitTest
    : public ::testing::TestWithParam<std::tuple<std::string, int64_t>> {};

TEST_P(BucketSplitTest, SplitBucketsDecideAsWholeOnes) {
  const auto& [node_policy, nodes_to_score] = GetParam();
  Config config = MakeConfig(node_policy, "binpack");
  config.scheduler.nodes_to_score = nodes_to_score;
  BackendRegistry registry;
  ASSERT_OK(RegisterBuiltinBackends(registry));
  absl::StatusOr<BackendSet> backends = BackendSet::Create(registry, config);
  ASSERT_OK(backends);
  absl::StatusOr<PolicySet> policies =
      PolicySet::Create(BuiltinPolicies(), config);
  ASSERT_OK(policies);
  Side split(config, *backends, *policies, 3);
  Side whole(config, *backends, *policies, ClusterState::kMostNodesPerBucket);

  std::mt19937_64 rng(31);
  auto uniform = [&rng](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  // Two kinds of node, names interleaved, so one class holds many.
  for (int n = 0; n < 40; ++n) {
    NodeInventory node =
        MakeNode(absl::StrCat("node-", 100 + n), n % 3 == 0 ? 4 : 2, 40960, 4);
    node.cpu_milli = 32000;
    for (Side* side : {&split, &whole}) {
      ASSERT_OK(side->state.UpsertNode(node));
    }
  }
  ASSERT_OK(split.state.CheckInvariants());
  // Untouched, the nodes fall in two classes: split, in buckets of 3 or
  // fewer.
  EXPECT_EQ(BucketCount(whole.state), 2u);
  EXPECT_GE(BucketCount(split.state), 14u);
  int placed = 0;
  int failed = 0;
  std::vector<std::string> live;
  for (int i = 0; i < 600; ++i) {
    PodRequest pod =
        MakePod(absl::StrCat("p", i),
                {GpuContainer("c", uniform(0, 4) == 0 ? 2 : 1,
                              uniform(1, 20) * 2048, uniform(0, 10) * 10)});
    pod.cpu_milli = uniform(0, 12) * 1000;
    std::optional<NodeVerdict> chosen[2];
    Decision explained[2];
    Side* sides[2] = {&split, &whole};
    for (int s = 0; s < 2; ++s) {
      absl::StatusOr<PodCycle> cycle = sides[s]->path.PreFilter(pod);
      ASSERT_OK(cycle);
      chosen[s] = sides[s]->path.Search(*cycle, sides[s]->state);
      if (!chosen[s]) {
        ScheduleOptions options;
        options.max_explained_nodes = 4;
        sides[s]->path.ExplainAll(*cycle, sides[s]->state, options, nullptr,
                                  explained[s]);
      }
    }
    ASSERT_EQ(chosen[0].has_value(), chosen[1].has_value()) << i;
    if (chosen[0]) {
      ASSERT_EQ(chosen[0]->node, chosen[1]->node) << i;
      ASSERT_EQ(chosen[0]->fit.allocation, chosen[1]->fit.allocation) << i;
      for (Side* side : sides) {
        ASSERT_OK(side->state.AddPod(pod, chosen[0]->fit.allocation));
      }
      live.push_back(pod.uid);
      ++placed;
    } else {
      EXPECT_EQ(explained[0].reason_counts, explained[1].reason_counts) << i;
      EXPECT_EQ(explained[0].reasons, explained[1].reasons) << i;
      ++failed;
    }
    if (!live.empty() && uniform(0, 2) == 0) {
      const size_t k = uniform(0, static_cast<int>(live.size()) - 1);
      for (Side* side : sides) side->state.RemovePod(live[k]);
      live[k] = live.back();
      live.pop_back();
    }
    ASSERT_OK(split.state.CheckInvariants()) << i;
  }
  EXPECT_GT(placed, 200);
  EXPECT_GT(failed, 20);
}

INSTANTIATE_TEST_SUITE_P(Policies, BucketSplitTest,
                         ::testing::Values(std::make_tuple("binpack", 0),
                                           std::make_tuple("spread", 0),
                                           std::make_tuple("fragaware", 5),
                                           std::make_tuple("fragaware", 0),
                                           std::make_tuple("fgd", 0)));

}  // namespace
}  // namespace deviceshare
