// The Scheduler remembers verdicts per pod shape while a node is unchanged
// (src/scheduler/verdict_memory.h). A policy that learns from the pods it
// observes (fragaware without a typicalWorkload) changes its scores with
// no node changing: the remembered verdicts must then give way to fresh
// ones, while a policy that learns nothing keeps the memory fully
// effective (no node filtered twice for a replica).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "deviceshare/backend/backend_registry.h"
#include "deviceshare/policy/placement_policy.h"
#include "deviceshare/policy/policy_registry.h"
#include "deviceshare/scheduler/scheduler.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/counting_backend.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::FilterCounts;
using ::deviceshare::testing::GpuContainer;
using ::deviceshare::testing::MakeConfig;
using ::deviceshare::testing::MakeNode;
using ::deviceshare::testing::MakePod;

// A node policy whose scores move with every new pod it observes (by uid),
// as a learned workload moves fragaware's.
class LearningPolicy final : public PlacementPolicy {
 public:
  absl::string_view name() const override { return "learner"; }
  int GpuScore(const DeviceLedger&, const PodCharge&) const override {
    return 0;
  }
  int NodeScore(const NodeState& node, const PodAllocation&) const override {
    const int64_t learned = Learned();
    return static_cast<int>((learned * 17 + node.name().back() * 31) % 101);
  }
  int ScoreBound(const UtilisationRange&) const override { return 100; }
  void ObservePod(const PodRequest& pod) const override {
    absl::MutexLock lock(&mu_);
    seen_.insert(pod.uid);
  }
  uint64_t scores_version() const override { return Learned(); }

 private:
  int64_t Learned() const {
    absl::MutexLock lock(&mu_);
    return static_cast<int64_t>(seen_.size());
  }

  mutable absl::Mutex mu_;
  mutable absl::flat_hash_set<std::string> seen_ ABSL_GUARDED_BY(mu_);
};

PolicyRegistry WithLearner() {
  PolicyRegistry registry;
  EXPECT_OK(RegisterBuiltinPolicies(registry));
  EXPECT_OK(registry.Register(
      "learner",
      [](const Config&) -> absl::StatusOr<std::unique_ptr<PlacementPolicy>> {
        return std::make_unique<LearningPolicy>();
      }));
  return registry;
}

std::unique_ptr<Scheduler> MakeScheduler(const std::string& node_policy,
                                         FilterCounts* counts) {
  BackendRegistry backends;
  EXPECT_OK(RegisterCountingBuiltins(backends, counts));
  auto scheduler = Scheduler::Create(MakeConfig(node_policy, "binpack"),
                                     backends, WithLearner());
  EXPECT_OK(scheduler);
  if (!scheduler.ok()) return nullptr;
  // Nodes of different sizes: no two are twins (twin_classes.h), so the
  // filter counts tell each node's evaluation.
  for (int i = 0; i < 6; ++i) {
    EXPECT_OK(
        (*scheduler)
            ->UpsertNode(MakeNode(absl::StrCat("node-", i), 1 + i, 81920)));
  }
  return *std::move(scheduler);
}

void ExpectSameScores(const std::vector<NodeVerdict>& want,
                      const std::vector<NodeVerdict>& got) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].node);
    EXPECT_EQ(got[i].node, want[i].node);
    EXPECT_EQ(got[i].fit.code, want[i].fit.code);
    EXPECT_EQ(got[i].score, want[i].score);
    EXPECT_EQ(got[i].stranded_percent, want[i].stranded_percent);
  }
}

// Replicas of one shape: each is observed first (the learner moves), then
// every filter form must score as a fresh filter does.
TEST(LearningPolicyMemoryTest, RememberedScoresFollowWhatThePolicyLearnt) {
  FilterCounts counts;
  std::unique_ptr<Scheduler> s = MakeScheduler("learner", &counts);
  ASSERT_NE(s, nullptr);
  for (int step = 0; step < 8; ++step) {
    SCOPED_TRACE(absl::StrCat("step ", step));
    const PodRequest pod = MakePod(absl::StrCat("replica-", step),
                                   {GpuContainer("main", 1, 10000, 25)});
    absl::StatusOr<std::vector<NodeVerdict>> reserve = s->FilterForReserve(pod);
    ASSERT_OK(reserve);
    // The pod is observed already: a fresh filter sees the same policy.
    const std::vector<NodeVerdict> fresh = s->FilterFreshForTest(pod);
    ExpectSameScores(fresh, *reserve);
    absl::StatusOr<std::vector<NodeVerdict>> filtered = s->Filter(pod);
    ASSERT_OK(filtered);
    ExpectSameScores(fresh, *filtered);
    const std::vector<std::string> names = {"node-0", "node-3"};
    const std::vector<absl::string_view> views(names.begin(), names.end());
    absl::StatusOr<std::vector<Scheduler::BriefVerdict>> briefs =
        s->FilterBriefly(pod, views);
    ASSERT_OK(briefs);
    ASSERT_EQ(briefs->size(), 2);
    EXPECT_EQ((*briefs)[0].score, fresh[0].score);
    EXPECT_EQ((*briefs)[1].score, fresh[3].score);
  }
}

// Only what changes the scores forgets verdicts: a retry of a pod the
// learner has seen is a lookup per node.
TEST(LearningPolicyMemoryTest, ANewPodRefiltersButARetryDoesNot) {
  FilterCounts counts;
  std::unique_ptr<Scheduler> s = MakeScheduler("learner", &counts);
  ASSERT_NE(s, nullptr);
  const PodRequest first =
      MakePod("first", {GpuContainer("main", 1, 10000, 25)});
  ASSERT_OK(s->Filter(first));
  counts.Take();
  // The same pod again (an extender retry): nothing learnt, all remembered.
  ASSERT_OK(s->Filter(first));
  EXPECT_TRUE(counts.Take().empty());
  // A replica is a new pod: the learner moved, every node is filtered.
  const PodRequest second =
      MakePod("second", {GpuContainer("main", 1, 10000, 25)});
  ASSERT_OK(s->Filter(second));
  EXPECT_EQ(counts.Take().size(), 6);
}

// The learner is registered, so it observes every pod and learns, but
// the pods here are scored by binpack alone.
TEST(LearningPolicyMemoryTest, APolicyThatLearnsNothingKeepsTheMemory) {
  FilterCounts counts;
  std::unique_ptr<Scheduler> s = MakeScheduler("binpack", &counts);
  ASSERT_NE(s, nullptr);
  ASSERT_OK(s->Filter(MakePod("first", {GpuContainer("main", 1, 10000, 25)})));
  EXPECT_EQ(counts.Take().size(), 6);
  // Every replica after the first is a lookup per node.
  for (int i = 0; i < 4; ++i) {
    ASSERT_OK(s->Filter(MakePod(absl::StrCat("replica-", i),
                                {GpuContainer("main", 1, 10000, 25)})));
    ASSERT_OK(s->FilterForReserve(MakePod(
        absl::StrCat("reserve-", i), {GpuContainer("main", 1, 10000, 25)})));
  }
  EXPECT_TRUE(counts.Take().empty());
}

// A pod that names the learner (hami.io/node-scheduler-policy) is scored by
// it although the config's policy learns nothing.
TEST(LearningPolicyMemoryTest, APodThatNamesALearningPolicyFollowsIt) {
  FilterCounts counts;
  std::unique_ptr<Scheduler> s = MakeScheduler("binpack", &counts);
  ASSERT_NE(s, nullptr);
  for (int step = 0; step < 4; ++step) {
    SCOPED_TRACE(absl::StrCat("step ", step));
    PodRequest pod = MakePod(absl::StrCat("named-", step),
                             {GpuContainer("main", 1, 10000, 25)});
    pod.node_policy = "learner";
    absl::StatusOr<std::vector<NodeVerdict>> filtered = s->Filter(pod);
    ASSERT_OK(filtered);
    EXPECT_EQ(counts.Take().size(), 6);
    ExpectSameScores(s->FilterFreshForTest(pod), *filtered);
  }
}

}  // namespace
}  // namespace deviceshare
