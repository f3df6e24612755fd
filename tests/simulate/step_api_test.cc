// The step API driven the way a Volcano deviceshare plugin drives its
// devices (FilterNode on every node, ScoreNode on the feasible ones,
// Allocate on the best, Release and AddResource later), over the example
// cluster and workload: it places every pod exactly where `simulate` does.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/scheduler/scheduler.h"
#include "deviceshare/simulate/simulate.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace deviceshare::simulate {
namespace {

using ::testing::IsEmpty;
using ::testing::SizeIs;

SimulateOptions ExampleOptions() {
  SimulateOptions options;
  options.cluster_path = DEVICESHARE_EXAMPLES_DIR "/cluster.yaml";
  options.pods_path = DEVICESHARE_EXAMPLES_DIR "/workload.yaml";
  options.config_path = DEVICESHARE_EXAMPLES_DIR "/deviceshare.yaml";
  return options;
}

// The example's workload and a scheduler with its nodes registered (null
// and a test failure when they do not load).
struct Example {
  Workload workload;
  std::unique_ptr<Scheduler> scheduler;
};

Example LoadExample() {
  const SimulateOptions options = ExampleOptions();
  Example example;
  absl::StatusOr<Config> config = LoadConfig(options);
  EXPECT_OK(config);
  if (!config.ok()) return example;
  absl::StatusOr<Workload> workload = LoadWorkload(options, *config);
  EXPECT_OK(workload);
  if (!workload.ok()) return example;
  example.workload = *std::move(workload);
  BackendRegistry registry;
  EXPECT_OK(RegisterBuiltinBackends(registry));
  auto scheduler = Scheduler::Create(*config, registry);
  EXPECT_OK(scheduler);
  if (!scheduler.ok()) return example;
  for (const NodeInventory& node : example.workload.nodes) {
    EXPECT_OK((*scheduler)->UpsertNode(node));
  }
  example.scheduler = *std::move(scheduler);
  return example;
}

// Every GPU's used MiB, in node and GPU order, after checking the state's
// invariants.
std::string UsedMemory(const Scheduler& scheduler) {
  std::string used;
  scheduler.Inspect([&](const ClusterState& state) {
    EXPECT_OK(state.CheckInvariants());
    for (const NodeState* node : state.nodes_by_name()) {
      for (size_t i = 0; i < node->gpu_count(); ++i) {
        absl::StrAppend(&used, node->ledger(i).used_memory_mib(), ",");
      }
    }
  });
  return used;
}

// Per pod key, where it went: node and the devices of each container.
using Placements =
    std::map<std::string,
             std::pair<std::string, std::vector<std::vector<DeviceGrant>>>>;

// The host's own loop, one library call per host call. Ties go to the
// first node of the host's list (sorted by name), as BetterVerdict does.
std::optional<std::string> HostPicks(Scheduler& scheduler,
                                     const PodRequest& pod,
                                     const std::vector<std::string>& nodes) {
  std::optional<std::string> best;
  int best_score = -1;
  for (const std::string& node : nodes) {
    absl::StatusOr<NodeVerdict> verdict = scheduler.FilterNode(pod, node);
    EXPECT_OK(verdict);
    if (!verdict.ok() || !verdict->fit.fits()) continue;
    absl::StatusOr<int> score = scheduler.ScoreNode(pod, node);
    EXPECT_OK(score);
    if (score.ok() && *score > best_score) {
      best = node;
      best_score = *score;
    }
  }
  return best;
}

TEST(StepApiTest, AVolcanoStyleHostLoopPlacesLikeSimulate) {
  const SimulateOptions options = ExampleOptions();
  absl::StatusOr<SimulationReport> report = Simulate(options);
  ASSERT_OK(report);
  Placements expected;
  for (const PodPlacement& placement : report->result.placements) {
    auto& [node, devices] = expected[placement.pod];
    node = placement.node;
    for (const ContainerPlacement& c : placement.containers) {
      devices.push_back(c.devices);
    }
  }

  Example example = LoadExample();
  ASSERT_NE(example.scheduler, nullptr);
  auto* scheduler = &example.scheduler;
  const Workload* workload = &example.workload;
  std::vector<std::string> nodes;
  for (const NodeInventory& node : workload->nodes) nodes.push_back(node.name);
  std::sort(nodes.begin(), nodes.end());

  Placements placed;
  std::vector<std::pair<PodRequest, Decision>> decisions;
  for (const PodRequest& pod : workload->pods) {
    std::optional<std::string> node = HostPicks(**scheduler, pod, nodes);
    if (!node) continue;
    absl::StatusOr<Decision> decision = (*scheduler)->Allocate(pod, *node);
    ASSERT_OK(decision);
    ASSERT_TRUE(decision->allocation.has_value()) << pod.Key();
    EXPECT_THAT(decision->annotations, ::testing::Not(IsEmpty()));
    auto& [where, devices] = placed[pod.Key()];
    where = decision->allocation->node_name;
    for (const ContainerAllocation& c : decision->allocation->containers) {
      devices.push_back(c.devices);
    }
    decisions.emplace_back(pod, *std::move(decision));
  }
  EXPECT_EQ(placed, expected);
  EXPECT_THAT(placed, SizeIs(report->result.placements.size()));
  ASSERT_THAT(decisions, ::testing::Not(IsEmpty()));

  // Later: pods go (Release), and come back from their annotations as pods
  // bound elsewhere (AddBoundPod); the cluster ends as it was.
  const std::string before = UsedMemory(**scheduler);
  for (size_t i = 0; i < decisions.size(); i += 2) {
    (*scheduler)->Release(decisions[i].first.uid);
    (*scheduler)->Release(decisions[i].first.uid);  // idempotent
    EXPECT_FALSE((*scheduler)->PodNode(decisions[i].first.uid).has_value());
  }
  for (size_t i = 0; i < decisions.size(); i += 2) {
    const auto& [pod, decision] = decisions[i];
    absl::StatusOr<bool> added =
        (*scheduler)
            ->AddBoundPod(pod, decision.annotations,
                          decision.allocation->node_name);
    ASSERT_OK(added);
    EXPECT_TRUE(*added) << pod.Key();
  }
  const std::string after = UsedMemory(**scheduler);
  EXPECT_EQ(after, before);
}

TEST(StepApiTest, ScoreNodeOfANodeThatDoesNotFitSaysWhy) {
  Example example = LoadExample();
  ASSERT_NE(example.scheduler, nullptr);
  auto* scheduler = &example.scheduler;
  const Workload* workload = &example.workload;
  PodRequest huge = workload->pods.front();
  huge.containers.back().gpu_count = 64;
  EXPECT_THAT((*scheduler)->ScoreNode(huge, workload->nodes.front().name),
              testing::StatusIs(absl::StatusCode::kFailedPrecondition,
                                ::testing::HasSubstr("InsufficientGpus")));
  absl::StatusOr<Decision> decision =
      (*scheduler)->Allocate(huge, workload->nodes.front().name);
  ASSERT_OK(decision);
  EXPECT_FALSE(decision->allocation.has_value());
  EXPECT_THAT(decision->reasons, SizeIs(1));
}

}  // namespace
}  // namespace deviceshare::simulate
