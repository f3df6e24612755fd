// Golden tests of the defragmentation planner: clusters small enough that
// the fewest moves are known by hand, and the query's rules (movable=false,
// disruption budgets, priorities, bad input). Every node has one GPU of
// 40960 MiB, hami-core, policies binpack/binpack; a target asks a whole
// GPU (40960 MiB).
#include "deviceshare/defrag/defrag_planner.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/hamicore/hamicore_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/status_matchers.h"
#include "testing/victim_world.h"

namespace deviceshare::defrag {
namespace {

using ::deviceshare::testing::GpuContainer;
using ::deviceshare::testing::MakePod;
using ::deviceshare::testing::ModeGpu;
using ::deviceshare::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr int64_t kGpuMib = 40960;
constexpr int64_t kGib = 1024;

MATCHER_P3(IsMove, pod, from, to, "") {
  return arg.pod == absl::StrCat("default/", pod) && arg.from == from &&
         arg.to == to;
}
MATCHER_P2(IsPlaced, pod, node, "") {
  return arg.pod == absl::StrCat("default/", pod) && arg.node == node;
}

class DefragPlannerTest : public ::testing::Test {
 protected:
  DefragPlannerTest() : planner_(&world_.path(), &world_.backends()) {
    EXPECT_OK(world_.status());
  }

  void AddNode(const std::string& name) {
    NodeInventory inventory;
    inventory.name = name;
    inventory.gpus = {ModeGpu(name, 0, hamicore::kMode, kGpuMib)};
    ASSERT_OK(world_.state().UpsertNode(std::move(inventory)));
  }
  // Binds pod `name` asking `gib` GiB of one GPU on `node`, and lists it
  // as movable with `priority` in `group`.
  void Bind(const std::string& name, const std::string& node, int64_t gib,
            int32_t priority = 0, std::string group = "") {
    ASSERT_TRUE(world_.Place(Pod(name, gib * kGib), node)) << name;
    query_.pods.push_back({absl::StrCat("uid-", name), priority, true, group});
  }
  static PodRequest Pod(const std::string& name, int64_t mib) {
    return MakePod(name, {GpuContainer("c", 1, mib)});
  }
  void Target(const std::string& name) {
    query_.targets.push_back(Pod(name, kGpuMib));
  }
  BoundPod& Listed(const std::string& name) {
    for (BoundPod& pod : query_.pods) {
      if (pod.uid == absl::StrCat("uid-", name)) return pod;
    }
    ADD_FAILURE() << name << " is not listed";
    return query_.pods.front();
  }
  std::string NodeOf(const std::string& name) const {
    const PodRecord* record =
        world_.state().FindPod(absl::StrCat("uid-", name));
    return record == nullptr ? "" : record->allocation.node_name;
  }

  // Four nodes with no free GPU: n1 and n2 hold 10 GiB each, n3 and n4
  // 30 GiB each. Two whole-GPU targets.
  void FragmentedFour() {
    for (const char* node : {"n1", "n2", "n3", "n4"}) AddNode(node);
    Bind("a", "n1", 10);
    Bind("b", "n2", 10);
    Bind("c", "n3", 30);
    Bind("d", "n4", 30);
    Target("p1");
    Target("p2");
  }

  testing::VictimWorld world_;
  DefragPlanner planner_;
  DefragQuery query_;
};

// By hand: each target needs an empty GPU and none is; one move empties
// at most one node, so two targets need at least two moves. Two suffice:
// a (10 GiB) fills n3's 10 GiB gap (binpack: n3 and n4 tie, by name), b
// fills n4's; n1 and n2 are then empty. The exact search proves no single
// move does it.
TEST_F(DefragPlannerTest, FragmentedClusterNeedsTwoMoves) {
  FragmentedFour();
  absl::StatusOr<DefragPlan> plan = planner_.Plan(world_.state(), query_);
  ASSERT_OK(plan);
  EXPECT_THAT(plan->moves,
              ElementsAre(IsMove("a", "n1", "n3"), IsMove("b", "n2", "n4")));
  EXPECT_THAT(plan->placements,
              ElementsAre(IsPlaced("p1", "n1"), IsPlaced("p2", "n2")));
  EXPECT_THAT(plan->unplaceable, IsEmpty());
  EXPECT_TRUE(plan->exact);
  EXPECT_TRUE(plan->complete);
  EXPECT_EQ(plan->movable_pods, 4);
}

TEST_F(DefragPlannerTest, PlanLeavesTheStateAsItWas) {
  FragmentedFour();
  ASSERT_OK(planner_.Plan(world_.state(), query_));
  EXPECT_EQ(NodeOf("a"), "n1");
  EXPECT_EQ(NodeOf("b"), "n2");
  EXPECT_EQ(NodeOf("c"), "n3");
  EXPECT_EQ(NodeOf("d"), "n4");
  EXPECT_EQ(world_.state().FindPod("uid-p1"), nullptr);
  EXPECT_EQ(world_.state().pod_count(), 4u);
  EXPECT_OK(world_.state().CheckInvariants());
}

TEST_F(DefragPlannerTest, WholeGpuTargetsAreTheSameProblem) {
  FragmentedFour();
  query_.targets = WholeGpuTargets(2);
  absl::StatusOr<DefragPlan> plan = planner_.Plan(world_.state(), query_);
  ASSERT_OK(plan);
  EXPECT_EQ(plan->moves.size(), 2u);
  EXPECT_THAT(plan->placements,
              ElementsAre(Field(&TargetPlacement::pod, "defrag/whole-gpu-1"),
                          Field(&TargetPlacement::pod, "defrag/whole-gpu-2")));
  EXPECT_TRUE(plan->complete);
}

TEST_F(DefragPlannerTest, NothingMovesWhenTheTargetsFit) {
  AddNode("n1");
  AddNode("n2");
  Bind("a", "n1", 10);
  Target("p1");
  absl::StatusOr<DefragPlan> plan = planner_.Plan(world_.state(), query_);
  ASSERT_OK(plan);
  EXPECT_THAT(plan->moves, IsEmpty());
  EXPECT_THAT(plan->placements, ElementsAre(IsPlaced("p1", "n2")));
  EXPECT_TRUE(plan->complete);
}

// a may not move: p1 takes n2 (b to n3); for p2, n1 is out (a stays), n3
// holds b now (moved once already) and c, so n4 goes: d (30 GiB) to n1's
// 30 GiB gap. Still two moves.
TEST_F(DefragPlannerTest, UnmovablePodNeverMoves) {
  FragmentedFour();
  Listed("a").movable = false;
  absl::StatusOr<DefragPlan> plan = planner_.Plan(world_.state(), query_);
  ASSERT_OK(plan);
  EXPECT_THAT(plan->moves,
              ElementsAre(IsMove("b", "n2", "n3"), IsMove("d", "n4", "n1")));
  EXPECT_THAT(plan->placements,
              ElementsAre(IsPlaced("p1", "n2"), IsPlaced("p2", "n4")));
  EXPECT_TRUE(plan->complete);
  EXPECT_EQ(plan->movable_pods, 3);
}

// a and b share a budget with one disruption left; c and d may not move.
// Two targets need two emptied nodes, only n1 and n2 can be emptied, and
// only one of them may lose its pod: p2 stays unplaceable, and the exact
// search proves no plan of up to max_moves places both.
TEST_F(DefragPlannerTest, DisruptionBudgetCapsTheGroup) {
  FragmentedFour();
  Listed("a").disruption_group = "g";
  Listed("b").disruption_group = "g";
  Listed("c").movable = false;
  Listed("d").movable = false;
  query_.disruptions_left["g"] = 1;
  absl::StatusOr<DefragPlan> plan = planner_.Plan(world_.state(), query_);
  ASSERT_OK(plan);
  EXPECT_THAT(plan->moves, ElementsAre(IsMove("a", "n1", "n3")));
  EXPECT_THAT(plan->placements, ElementsAre(IsPlaced("p1", "n1")));
  ASSERT_EQ(plan->unplaceable.size(), 1u);
  EXPECT_EQ(plan->unplaceable[0].pod, "default/p2");
  EXPECT_THAT(plan->unplaceable[0].reason, HasSubstr("fits no node"));
  EXPECT_TRUE(plan->complete);
}

TEST_F(DefragPlannerTest, ExhaustedBudgetMovesNothingOfTheGroup) {
  FragmentedFour();
  for (const char* pod : {"a", "b", "c", "d"}) {
    Listed(pod).disruption_group = "g";
  }
  query_.disruptions_left["g"] = 0;
  absl::StatusOr<DefragPlan> plan = planner_.Plan(world_.state(), query_);
  ASSERT_OK(plan);
  EXPECT_THAT(plan->moves, IsEmpty());
  EXPECT_EQ(plan->unplaceable.size(), 2u);
  EXPECT_EQ(plan->movable_pods, 0);
}

// Every node keeps a 30 GiB pod that may not move: no plan places a
// whole-GPU target, and the planner says so at once instead of searching
// every sequence of the small pods (which could move: each node has room).
TEST_F(DefragPlannerTest, HopelessTargetIsProvenWithoutSearching) {
  for (const char* node : {"n1", "n2", "n3"}) {
    AddNode(node);
    Bind(absl::StrCat("big-", node), node, 30);
    Listed(absl::StrCat("big-", node)).movable = false;
    Bind(absl::StrCat("small-", node), node, 1);
  }
  Target("p1");
  absl::StatusOr<DefragPlan> plan = planner_.Plan(world_.state(), query_);
  ASSERT_OK(plan);
  EXPECT_THAT(plan->moves, IsEmpty());
  ASSERT_EQ(plan->unplaceable.size(), 1u);
  EXPECT_THAT(plan->unplaceable[0].reason,
              HasSubstr("not even with every pod that may move moved off"));
  EXPECT_TRUE(plan->complete);
  EXPECT_EQ(plan->exact_steps, 0);
}

// One target; emptying n1 (a, priority 100) or n2 (b, priority 0) takes
// one move each: the lower priority moves.
TEST_F(DefragPlannerTest, LowerPriorityMovesFirst) {
  for (const char* node : {"n1", "n2", "n3"}) AddNode(node);
  Bind("a", "n1", 10, /*priority=*/100);
  Bind("b", "n2", 10, /*priority=*/0);
  Bind("c", "n3", 20, /*priority=*/0);
  Target("p1");
  absl::StatusOr<DefragPlan> plan = planner_.Plan(world_.state(), query_);
  ASSERT_OK(plan);
  EXPECT_THAT(plan->moves, ElementsAre(IsMove("b", "n2", "n3")));
  EXPECT_THAT(plan->placements, ElementsAre(IsPlaced("p1", "n2")));
}

// n1 holds a (30 GiB); n2 b (20 GiB); n3 c (20 GiB). a cannot move (no
// 30 GiB gap), but b fits n3's gap: one move empties n2.
TEST_F(DefragPlannerTest, OnlyPodsThatFitElsewhereMove) {
  for (const char* node : {"n1", "n2", "n3"}) AddNode(node);
  Bind("a", "n1", 30);
  Bind("b", "n2", 20);
  Bind("c", "n3", 20);
  Target("p1");
  absl::StatusOr<DefragPlan> plan = planner_.Plan(world_.state(), query_);
  ASSERT_OK(plan);
  EXPECT_THAT(plan->moves, ElementsAre(IsMove("b", "n2", "n3")));
  EXPECT_THAT(plan->placements, ElementsAre(IsPlaced("p1", "n2")));
}

TEST_F(DefragPlannerTest, RefusedTargetIsUnplaceableWithThePathsMessage) {
  FragmentedFour();
  query_.targets[0].scoring_weights = "no-such-weight=1";
  absl::StatusOr<DefragPlan> plan = planner_.Plan(world_.state(), query_);
  ASSERT_OK(plan);
  ASSERT_EQ(plan->unplaceable.size(), 1u);
  EXPECT_EQ(plan->unplaceable[0].pod, "default/p1");
  EXPECT_THAT(plan->unplaceable[0].reason, HasSubstr("no-such-weight"));
  EXPECT_EQ(plan->moves.size(), 1u);
}

TEST_F(DefragPlannerTest, BadInputIsAnError) {
  FragmentedFour();
  DefragQuery unknown = query_;
  unknown.pods.push_back({"uid-nobody"});
  EXPECT_THAT(
      planner_.Plan(world_.state(), unknown),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("uid-nobody")));
  DefragQuery twice = query_;
  twice.pods.push_back(twice.pods.front());
  EXPECT_THAT(
      planner_.Plan(world_.state(), twice),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("listed twice")));
  DefragQuery group = query_;
  group.pods[0].disruption_group = "g";
  EXPECT_THAT(planner_.Plan(world_.state(), group),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"g\"")));
  DefragQuery budget = query_;
  budget.budget.max_moves = -1;
  EXPECT_THAT(
      planner_.Plan(world_.state(), budget),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("max_moves")));
}

// max_moves 1: the greedy plan stops after p1; no plan of one move places
// both targets.
TEST_F(DefragPlannerTest, MaxMovesBoundsThePlan) {
  FragmentedFour();
  query_.budget.max_moves = 1;
  absl::StatusOr<DefragPlan> plan = planner_.Plan(world_.state(), query_);
  ASSERT_OK(plan);
  EXPECT_EQ(plan->moves.size(), 1u);
  EXPECT_THAT(plan->placements, ElementsAre(IsPlaced("p1", "n1")));
  ASSERT_EQ(plan->unplaceable.size(), 1u);
  EXPECT_TRUE(plan->complete);
}

// A step budget too small for the exact search: the greedy plan stands,
// not proven fewest.
TEST_F(DefragPlannerTest, StepBudgetLeavesThePlanIncomplete) {
  FragmentedFour();
  query_.budget.exact_steps = 2;
  absl::StatusOr<DefragPlan> plan = planner_.Plan(world_.state(), query_);
  ASSERT_OK(plan);
  EXPECT_EQ(plan->moves.size(), 2u);
  EXPECT_FALSE(plan->complete);
}

}  // namespace
}  // namespace deviceshare::defrag
