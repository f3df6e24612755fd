// The filter step of /filter (Scheduler::FilterBriefly, FilterForReserve)
// and Filter() evaluate each kind of untouched node once per request and
// give its twins the same fit (src/scheduler/twin_classes.h). Over random
// clusters of several node kinds, where nodes become touched and untouched
// again, the verdicts must be those of a plain per-node filter, and the
// reserve step must still take the best node with a fresh filter's
// allocation.
#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "deviceshare/backend/backend_registry.h"
#include "deviceshare/scheduler/scheduler.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/counting_backend.h"
#include "testing/verdict_order.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::FilterCounts;
using ::deviceshare::testing::FittingNodesBestFirst;
using ::deviceshare::testing::GpuContainer;
using ::deviceshare::testing::MakeConfig;
using ::deviceshare::testing::MakeNode;
using ::deviceshare::testing::MakePod;

void ExpectSameVerdicts(const std::vector<NodeVerdict>& want,
                        const std::vector<NodeVerdict>& got) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("node ", want[i].node));
    EXPECT_EQ(got[i].node, want[i].node);
    EXPECT_EQ(got[i].fit.code, want[i].fit.code);
    // The reason /filter reports (a brief verdict's only text).
    const std::string want_reason = want[i].fit.message.empty()
                                        ? want[i].fit.Reason()
                                        : want[i].fit.message;
    EXPECT_EQ(
        got[i].fit.message.empty() ? got[i].fit.Reason() : got[i].fit.message,
        want_reason);
    if (want[i].fit.fits()) {
      EXPECT_EQ(got[i].score, want[i].score);
      EXPECT_EQ(got[i].stranded_percent, want[i].stranded_percent);
      EXPECT_EQ(got[i].mode, want[i].mode);
    }
    EXPECT_TRUE(got[i].fit.allocation.node_name.empty());
  }
}

// FilterBriefly's verdicts of `names` as NodeVerdicts (the names put
// back, a rejection's reason as its message), to compare with Filter()'s.
absl::StatusOr<std::vector<NodeVerdict>> BriefsAsVerdicts(
    const Scheduler& s, const PodRequest& pod,
    const std::vector<absl::string_view>& names) {
  absl::StatusOr<std::vector<Scheduler::BriefVerdict>> briefs =
      s.FilterBriefly(pod, names);
  if (!briefs.ok()) return briefs.status();
  EXPECT_EQ(briefs->size(), names.size());
  std::vector<NodeVerdict> verdicts;
  for (size_t i = 0; i < briefs->size() && i < names.size(); ++i) {
    const Scheduler::BriefVerdict& brief = (*briefs)[i];
    NodeVerdict& verdict = verdicts.emplace_back();
    verdict.node = std::string(names[i]);
    verdict.fit.code = brief.code;
    verdict.score = brief.score;
    verdict.stranded_percent = brief.stranded_percent;
    verdict.mode = brief.mode;
    verdict.fit.message = brief.reason;
  }
  return verdicts;
}

// One of three node kinds (GPU count and memory; host CPU and memory on
// the third), so each kind has many twins.
NodeInventory NodeOfKind(const std::string& name, int kind) {
  switch (kind) {
    case 0:
      return MakeNode(name, 2, 81920);
    case 1:
      return MakeNode(name, 4, 40960);
    default: {
      NodeInventory node = MakeNode(name, 2, 81920, 10, /*two_numa=*/true);
      node.cpu_milli = 8000;
      node.memory_mib = 65536;
      return node;
    }
  }
}

// A random pod: one or two containers, sometimes host CPU and memory,
// sometimes a GPU allow or deny list by uuid (which twins tell apart).
PodRequest RandomPod(int step, std::mt19937& random,
                     const std::vector<std::string>& names) {
  const int64_t memory = 10000 * (1 + random() % 8);
  std::vector<ContainerRequest> containers = {GpuContainer(
      "main", 1 + random() % 2, memory, static_cast<int>(random() % 4) * 25)};
  if (random() % 4 == 0) {
    containers.push_back(GpuContainer("side", 1, 5000, 10));
  }
  PodRequest pod = MakePod(absl::StrCat("p", step), std::move(containers));
  if (random() % 3 == 0) {
    pod.cpu_milli = 1000 * (1 + random() % 10);
    pod.memory_mib = 8192 * (1 + random() % 10);
  }
  const std::string& someone = names[random() % names.size()];
  switch (random() % 8) {
    case 0:
      pod.use_uuids.push_back(absl::StrCat("GPU-", someone, "-0"));
      break;
    case 1:
      pod.avoid_uuids.push_back(absl::StrCat("GPU-", someone, "-1"));
      break;
    default:
      break;
  }
  return pod;
}

class TwinFilterTest : public ::testing::TestWithParam<const char*> {};

TEST_P(TwinFilterTest, AgreesWithAPlainFilterOverRandomClusters) {
  FilterCounts counts;
  BackendRegistry registry;
  ASSERT_TRUE(RegisterCountingBuiltins(registry, &counts).ok());
  auto scheduler = Scheduler::Create(MakeConfig(GetParam()), registry);
  ASSERT_TRUE(scheduler.ok()) << scheduler.status();
  Scheduler& s = **scheduler;
  std::mt19937 random(17);
  std::vector<std::string> names;
  for (int i = 0; i < 30; ++i) {
    names.push_back(absl::StrCat("node-", i));
    ASSERT_TRUE(s.UpsertNode(NodeOfKind(names.back(), i % 3)).ok());
  }
  names.push_back("unknown");
  std::vector<std::string> placed;
  int reserved = 0;
  for (int step = 0; step < 300; ++step) {
    SCOPED_TRACE(absl::StrCat("step ", step));
    const PodRequest pod = RandomPod(step, random, names);
    if (step % 37 == 0) {  // a node re-registers as another kind
      const int node = static_cast<int>(random() % 30);
      ASSERT_TRUE(
          s.UpsertNode(NodeOfKind(names[node], static_cast<int>(random() % 3)))
              .ok());
    }
    const bool all_nodes = step % 5 == 0;
    const absl::Span<const std::string> asked =
        all_nodes ? absl::Span<const std::string>() : names;
    const std::vector<NodeVerdict> fresh = s.FilterFreshForTest(pod, asked);
    const std::vector<absl::string_view> views(asked.begin(), asked.end());
    // The extender's form on odd steps (it always names the nodes).
    absl::StatusOr<std::vector<NodeVerdict>> verdicts =
        step % 2 == 1 && !all_nodes ? BriefsAsVerdicts(s, pod, views)
                                    : s.FilterForReserve(pod, views);
    ASSERT_TRUE(verdicts.ok()) << verdicts.status();
    ExpectSameVerdicts(fresh, *verdicts);
    // Filter() of another pod of the same shape shares the twins too. It
    // is another pod: a policy that learns from the pods it observes
    // (fragaware) may move on seeing it, so the plain filter to compare
    // with comes after.
    PodRequest replica = pod;
    replica.uid += "-replica";
    absl::StatusOr<std::vector<NodeVerdict>> filtered =
        s.Filter(replica, asked);
    ASSERT_TRUE(filtered.ok()) << filtered.status();
    ExpectSameVerdicts(s.FilterFreshForTest(replica, asked), *filtered);
    const std::vector<std::string> order = FittingNodesBestFirst(*verdicts);
    if (random() % 3 == 0 && !placed.empty()) {
      const size_t gone = random() % placed.size();
      s.Release(placed[gone]);
      placed.erase(placed.begin() + static_cast<std::ptrdiff_t>(gone));
      continue;
    }
    absl::StatusOr<ReserveOutcome> outcome = s.Reserve(pod, order);
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    if (order.empty()) {
      EXPECT_FALSE(outcome->placed.has_value());
      continue;
    }
    ASSERT_TRUE(outcome->placed.has_value());
    EXPECT_EQ(outcome->placed->node, order.front());
    for (const NodeVerdict& verdict : fresh) {
      if (verdict.node != order.front()) continue;
      EXPECT_EQ(outcome->placed->fit.allocation, verdict.fit.allocation);
    }
    placed.push_back(pod.uid);
    ++reserved;
  }
  EXPECT_GT(reserved, 50);
}

TEST(TwinFilterCountTest, EvaluatesEachKindOfUntouchedNodeOnce) {
  FilterCounts counts;
  BackendRegistry registry;
  ASSERT_TRUE(RegisterCountingBuiltins(registry, &counts).ok());
  auto scheduler = Scheduler::Create(MakeConfig(), registry);
  ASSERT_TRUE(scheduler.ok()) << scheduler.status();
  Scheduler& s = **scheduler;
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(s.UpsertNode(NodeOfKind(absl::StrCat("node-", i), i % 3)).ok());
  }
  const PodRequest pod = MakePod("small", {GpuContainer("main", 1, 1000, 10)});
  absl::StatusOr<std::vector<NodeVerdict>> verdicts = s.FilterForReserve(pod);
  ASSERT_TRUE(verdicts.ok()) << verdicts.status();
  EXPECT_EQ(verdicts->size(), 30);
  EXPECT_EQ(FittingNodesBestFirst(*verdicts).size(), 30);
  // One node of each kind was evaluated.
  EXPECT_EQ(counts.Take().size(), 3);
  // A pod that names GPUs by uuid tells twins apart: every node is
  // evaluated.
  PodRequest picky = MakePod("picky", {GpuContainer("main", 1, 1000, 10)});
  picky.avoid_uuids.push_back("GPU-node-3-0");
  ASSERT_TRUE(s.FilterForReserve(picky).ok());
  EXPECT_EQ(counts.Take().size(), 30);
}

INSTANTIATE_TEST_SUITE_P(Policies, TwinFilterTest,
                         ::testing::Values("binpack", "spread", "fragaware"));

}  // namespace
}  // namespace deviceshare
