// Golden tests of the victim search: nodes small enough that the minimal
// set is known by hand, per sharing mode, and the query's rules (priority,
// evictable, disruption budgets, the budget of work, bad input).
#include "deviceshare/preemption/victim_search.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "preemption/victim_fixture.h"

namespace deviceshare::preemption {
namespace {

using ::deviceshare::testing::GpuContainer;
using ::deviceshare::testing::MakePod;
using ::deviceshare::testing::StatusIs;
using testing::Candidate;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::ModeGpu;

constexpr int32_t kPending = 10;  // the pending pod's priority
constexpr int32_t kHigh = 100;    // pods the pending pod may never evict

class VictimSearchTest : public ::testing::Test, public testing::VictimFixture {
 protected:
  // Node `name` with `count` hami-core GPUs of 10000 MiB.
  void AddSharedNode(const std::string& name, int count) {
    std::vector<Gpu> gpus;
    for (int i = 0; i < count; ++i) {
      gpus.push_back(ModeGpu(name, i, hamicore::kMode, 10000));
    }
    AddNode(name, std::move(gpus));
  }
  // Pods on node n1: name, GPU index, MiB.
  struct Placed {
    const char* name;
    int gpu;
    int64_t memory_mib;
  };
  void BindMibs(std::initializer_list<Placed> pods) {
    for (const Placed& pod : pods) {
      Bind("n1", pod.name, {Share("n1", pod.gpu, pod.memory_mib)});
    }
  }
  static PodRequest Pending(int64_t memory_mib) {
    return MakePod("pending", {GpuContainer("c", 1, memory_mib)});
  }
  static std::string GpuOf(const VictimSet& set) {
    return set.verdict.fit.allocation.containers.at(0).devices.at(0).uuid;
  }
};

// ---- hami-core ------------------------------------------------------------

// GPU 0: two small shares (3000 + 3000) and a pod that stays; GPU 1: one
// big share (7000) and a pod that stays. The pod wants 6000 MiB: one
// eviction on GPU 1 beats two on GPU 0, though it frees more and its
// victim has the higher priority.
class TwoSmallVsOneBig : public VictimSearchTest {
 protected:
  TwoSmallVsOneBig() {
    AddSharedNode("n1", 2);
    BindMibs({{"a", 0, 3000},
              {"b", 0, 3000},
              {"keep0", 0, 3500},
              {"big", 1, 7000},
              {"keep1", 1, 2500}});
  }
  std::vector<VictimCandidate> Candidates(bool big_evictable) {
    return {Candidate("a", 1), Candidate("b", 1),
            Candidate("big", 5, "", big_evictable), Candidate("keep0", kHigh),
            Candidate("keep1", kHigh)};
  }
};

TEST_F(TwoSmallVsOneBig, OneBigShareBeatsTwoSmallOnes) {
  absl::StatusOr<VictimSet> set =
      Find(Pending(6000), kPending, "n1", Candidates(true));
  ASSERT_OK(set);
  EXPECT_TRUE(set->found);
  EXPECT_TRUE(set->complete);
  EXPECT_THAT(set->victims, ElementsAre("uid-big"));
  EXPECT_EQ(set->max_priority, 5);
  EXPECT_EQ(set->freed_milli, 350);  // 7000 of 10000 MiB, half weight
  EXPECT_EQ(set->excess_milli, 50);  // less the pod's 6000 MiB: 300
  EXPECT_EQ(GpuOf(*set), "GPU-n1-1");
}

TEST_F(TwoSmallVsOneBig, TwoSmallSharesWhenTheBigOneMayNotGo) {
  absl::StatusOr<VictimSet> set =
      Find(Pending(6000), kPending, "n1", Candidates(false));
  ASSERT_OK(set);
  EXPECT_TRUE(set->found);
  EXPECT_THAT(set->victims, ElementsAre("uid-a", "uid-b"));
  EXPECT_EQ(set->max_priority, 1);
  EXPECT_EQ(set->excess_milli, 0);  // 3000 + 3000 freed, 6000 taken
  EXPECT_EQ(GpuOf(*set), "GPU-n1-0");
}

TEST_F(TwoSmallVsOneBig, NoVictimAtOrAbovePendingPriority) {
  // Every candidate at the pending pod's priority: none may go.
  std::vector<VictimCandidate> candidates = Candidates(true);
  for (VictimCandidate& candidate : candidates) candidate.priority = kPending;
  absl::StatusOr<VictimSet> set =
      Find(Pending(6000), kPending, "n1", candidates);
  ASSERT_OK(set);
  EXPECT_FALSE(set->found);
  EXPECT_TRUE(set->complete);
  EXPECT_THAT(set->victims, IsEmpty());
  EXPECT_THAT(set->reason, HasSubstr("no candidate may be evicted"));
}

TEST_F(TwoSmallVsOneBig, FitsAsIsNeedsNoVictim) {
  absl::StatusOr<VictimSet> set =
      Find(Pending(500), kPending, "n1", Candidates(true));
  ASSERT_OK(set);
  EXPECT_TRUE(set->found);
  EXPECT_THAT(set->victims, IsEmpty());
  EXPECT_EQ(set->filter_calls, 1);
}

TEST_F(TwoSmallVsOneBig, NothingHelpsWhenEvenAllGoneIsTooSmall) {
  // 9000 MiB: GPU 0 reaches 6500 and GPU 1 7500 with every victim gone.
  absl::StatusOr<VictimSet> set =
      Find(Pending(9000), kPending, "n1", Candidates(true));
  ASSERT_OK(set);
  EXPECT_FALSE(set->found);
  EXPECT_TRUE(set->complete);
  EXPECT_THAT(set->reason, HasSubstr("even with all 3 candidates gone"));
}

// Equal counts: the lower highest priority wins, then the smaller share.
// GPU 0: x (7000) beside a pod that stays; GPU 1: y (8000) beside one.
class EqualCounts : public VictimSearchTest {
 protected:
  EqualCounts() {
    AddSharedNode("n1", 2);
    BindMibs({{"x", 0, 7000},
              {"keep0", 0, 2500},
              {"y", 1, 8000},
              {"keep1", 1, 1500}});
  }
  absl::StatusOr<VictimSet> FindWith(int32_t x_priority, int32_t y_priority) {
    return Find(Pending(6000), kPending, "n1",
                {Candidate("x", x_priority), Candidate("y", y_priority),
                 Candidate("keep0", kHigh), Candidate("keep1", kHigh)});
  }
};

TEST_F(EqualCounts, TheLowerPriorityGoes) {
  absl::StatusOr<VictimSet> set = FindWith(5, 3);
  ASSERT_OK(set);
  EXPECT_THAT(set->victims, ElementsAre("uid-y"));
  EXPECT_EQ(set->max_priority, 3);
}

TEST_F(EqualCounts, EqualPrioritiesGoToTheLeastShareFreed) {
  absl::StatusOr<VictimSet> set = FindWith(3, 3);
  ASSERT_OK(set);
  EXPECT_THAT(set->victims, ElementsAre("uid-x"));
  EXPECT_EQ(set->freed_milli, 350);
  EXPECT_EQ(set->excess_milli, 50);
}

// Pods of low priority on GPUs the pod cannot take (another model, another
// mode) are never victims; the one that helps is on the GPU it can take.
TEST_F(VictimSearchTest, VictimsOnlyOnGpusThePodCanTake) {
  Gpu h100 = ModeGpu("n1", 1, hamicore::kMode, 10000);
  h100.model = "NVIDIA H100 80GB HBM3";
  AddNode("n1", {ModeGpu("n1", 0, hamicore::kMode, 10000), h100,
                 ModeGpu("n1", 2, mps::kMode, 10000)});
  BindMibs({{"cheap0", 0, 3000},
            {"cheap1", 0, 3000},
            {"keep0", 0, 3500},
            {"h", 1, 7000},
            {"keep1", 1, 2500}});
  Bind("n1", "client", {Share("n1", 2, 9500, 0, mps::kMode)});
  PodRequest pending = Pending(6000);
  pending.mode = hamicore::kMode;
  pending.use_models = {"H100"};
  std::vector<VictimCandidate> candidates = {
      Candidate("cheap0", 0),    Candidate("cheap1", 0),
      Candidate("h", 5),         Candidate("client", 0),
      Candidate("keep0", kHigh), Candidate("keep1", kHigh)};
  absl::StatusOr<VictimSet> set = Find(pending, kPending, "n1", candidates);
  ASSERT_OK(set);
  EXPECT_THAT(set->victims, ElementsAre("uid-h"));
  EXPECT_EQ(GpuOf(*set), "GPU-n1-1");

  // Without h, the pods elsewhere free nothing the pod can use.
  candidates[2].evictable = false;
  set = Find(pending, kPending, "n1", candidates);
  ASSERT_OK(set);
  EXPECT_FALSE(set->found);
  EXPECT_TRUE(set->complete);
  EXPECT_THAT(set->victims, IsEmpty());
}

// GPU 0 needs its two pods of group "g"; GPU 1 needs three pods of no
// group. With one disruption left in g, only GPU 1's three may go.
TEST_F(VictimSearchTest, DisruptionBudgetRulesOutASet) {
  AddSharedNode("n1", 2);
  BindMibs({{"g1", 0, 3000},
            {"g2", 0, 3000},
            {"keep0", 0, 3500},
            {"c", 1, 2000},
            {"d", 1, 2000},
            {"e", 1, 2000},
            {"keep1", 1, 3500}});
  std::vector<VictimCandidate> candidates = {
      Candidate("g1", 1, "g"),  Candidate("g2", 1, "g"),
      Candidate("c", 1),        Candidate("d", 1),
      Candidate("e", 1),        Candidate("keep0", kHigh),
      Candidate("keep1", kHigh)};
  absl::StatusOr<VictimSet> set =
      Find(Pending(6000), kPending, "n1", candidates, {{"g", 1}});
  ASSERT_OK(set);
  EXPECT_THAT(set->victims, ElementsAre("uid-c", "uid-d", "uid-e"));

  set = Find(Pending(6000), kPending, "n1", candidates, {{"g", 2}});
  ASSERT_OK(set);
  EXPECT_THAT(set->victims, ElementsAre("uid-g1", "uid-g2"));
}

// The node is short of CPU: a pod without GPUs that holds CPU helps.
TEST_F(VictimSearchTest, HostCpuVictim) {
  AddNode("n1", {ModeGpu("n1", 0, hamicore::kMode, 10000)},
          /*cpu_milli=*/4000);
  Bind("n1", "cpuhog", {}, /*cpu_milli=*/3000);
  Bind("n1", "gpu", {Share("n1", 0, 1000)});
  PodRequest pending = Pending(2000);
  pending.cpu_milli = 1500;
  absl::StatusOr<VictimSet> set = Find(
      pending, kPending, "n1", {Candidate("gpu", 1), Candidate("cpuhog", 2)});
  ASSERT_OK(set);
  EXPECT_THAT(set->victims, ElementsAre("uid-cpuhog"));
}

// The best pair sits on GPU 1 (priorities 2 and 3); the search meets GPU
// 0's pair (1 and 4) first. Three Filter calls (as is, all gone, the first
// pair) leave that pair, marked incomplete; enough budget finds the best.
TEST_F(VictimSearchTest, BudgetGivesTheBestSoFarMarkedIncomplete) {
  AddSharedNode("n1", 2);
  BindMibs({{"a", 0, 3000},
            {"d", 0, 3000},
            {"keep0", 0, 3500},
            {"b", 1, 3000},
            {"c", 1, 3000},
            {"keep1", 1, 3500}});
  std::vector<VictimCandidate> candidates = {
      Candidate("a", 1), Candidate("b", 2),         Candidate("c", 3),
      Candidate("d", 4), Candidate("keep0", kHigh), Candidate("keep1", kHigh)};
  absl::StatusOr<VictimSet> set =
      Find(Pending(6000), kPending, "n1", candidates, {},
           VictimBudget{.filter_calls = 3});
  ASSERT_OK(set);
  EXPECT_TRUE(set->found);
  EXPECT_FALSE(set->complete);
  EXPECT_THAT(set->victims, ElementsAre("uid-a", "uid-d"));
  EXPECT_EQ(set->filter_calls, 3);

  set = Find(Pending(6000), kPending, "n1", candidates);
  ASSERT_OK(set);
  EXPECT_TRUE(set->complete);
  EXPECT_THAT(set->victims, ElementsAre("uid-b", "uid-c"));

  set = Find(Pending(6000), kPending, "n1", candidates, {},
             VictimBudget{.filter_calls = 2});
  ASSERT_OK(set);
  EXPECT_FALSE(set->found);
  EXPECT_FALSE(set->complete);
  EXPECT_THAT(set->reason, HasSubstr("budget spent"));
}

// ---- MIG ------------------------------------------------------------------

// One A100-80GB: 2g.20gb at slices 0-1 (priority 5), 1g.10gb at 4, 5 and 6
// (priorities 1, 1, 0). A 3g.40gb takes slices 0-3 or 4-7: the first needs
// one eviction, the second three. The lowest-priority pod, at slice 6,
// frees a slot the pod cannot use alone and is never chosen.
TEST_F(VictimSearchTest, MigSlotThatNeedsOneEvictionBeatsOneThatNeedsMore) {
  AddNode("m1", {ModeGpu("m1", 0, mig::kMode)});
  Bind("m1", "a", {Instance("m1", 0, "2g.20gb", 0, 2, 19968, 28)});
  Bind("m1", "b", {Instance("m1", 0, "1g.10gb", 4, 1, 9728, 14)});
  Bind("m1", "c", {Instance("m1", 0, "1g.10gb", 5, 1, 9728, 14)});
  Bind("m1", "d", {Instance("m1", 0, "1g.10gb", 6, 1, 9728, 14)});
  ContainerRequest container = GpuContainer("c", 1, 0);
  container.mig_profile = "3g.40gb";
  PodRequest pending = MakePod("pending", {container});
  pending.mode = mig::kMode;
  absl::StatusOr<VictimSet> set = Find(pending, kPending, "m1",
                                       {Candidate("a", 5), Candidate("b", 1),
                                        Candidate("c", 1), Candidate("d", 0)});
  ASSERT_OK(set);
  EXPECT_TRUE(set->found);
  EXPECT_THAT(set->victims, ElementsAre("uid-a"));
  const DeviceGrant& grant =
      set->verdict.fit.allocation.containers.at(0).devices.at(0);
  EXPECT_EQ(grant.mig.profile, "3g.40gb");
  EXPECT_EQ(grant.mig.start, 0);
}

// GPU 0: a 3g.40gb slot needs two evictions of priority 1; GPU 1: one of
// priority 6. Fewer victims first.
TEST_F(VictimSearchTest, MigPlacementWithFewestEvictionsAcrossGpus) {
  AddNode("m1", {ModeGpu("m1", 0, mig::kMode), ModeGpu("m1", 1, mig::kMode)});
  Bind("m1", "p", {Instance("m1", 0, "1g.10gb", 0, 1, 9728, 14)});
  Bind("m1", "q", {Instance("m1", 0, "1g.10gb", 1, 1, 9728, 14)});
  Bind("m1", "keep0", {Instance("m1", 0, "3g.40gb", 4, 4, 40192, 42)});
  Bind("m1", "r", {Instance("m1", 1, "3g.40gb", 0, 4, 40192, 42)});
  Bind("m1", "keep1", {Instance("m1", 1, "3g.40gb", 4, 4, 40192, 42)});
  ContainerRequest container = GpuContainer("c", 1, 0);
  container.mig_profile = "3g.40gb";
  PodRequest pending = MakePod("pending", {container});
  pending.mode = mig::kMode;
  absl::StatusOr<VictimSet> set =
      Find(pending, kPending, "m1",
           {Candidate("p", 1), Candidate("q", 1), Candidate("r", 6),
            Candidate("keep0", kHigh), Candidate("keep1", kHigh)});
  ASSERT_OK(set);
  EXPECT_THAT(set->victims, ElementsAre("uid-r"));
  EXPECT_EQ(GpuOf(*set), "GPU-m1-1");
}

// ---- MPS ------------------------------------------------------------------

// GPU 0 (split 3) has room in memory but every client slot taken, by
// pods of priority 3; GPU 1 needs one of two pods of priority 4 gone.
// One client of GPU 0 goes: the one that frees the least.
TEST_F(VictimSearchTest, MpsClientSlotFreedByTheSmallestClient) {
  AddNode("s1", {ModeGpu("s1", 0, mps::kMode, 10000, /*split=*/3),
                 ModeGpu("s1", 1, mps::kMode, 10000)});
  Bind("s1", "t1", {Share("s1", 0, 1500, 0, mps::kMode)});
  Bind("s1", "t2", {Share("s1", 0, 1000, 0, mps::kMode)});
  Bind("s1", "t3", {Share("s1", 0, 1200, 0, mps::kMode)});
  Bind("s1", "u1", {Share("s1", 1, 4500, 0, mps::kMode)});
  Bind("s1", "u2", {Share("s1", 1, 4500, 0, mps::kMode)});
  PodRequest pending = Pending(2000);
  pending.mode = mps::kMode;
  absl::StatusOr<VictimSet> set =
      Find(pending, kPending, "s1",
           {Candidate("t1", 3), Candidate("t2", 3), Candidate("t3", 3),
            Candidate("u1", 4), Candidate("u2", 4)});
  ASSERT_OK(set);
  EXPECT_THAT(set->victims, ElementsAre("uid-t2"));
  EXPECT_EQ(GpuOf(*set), "GPU-s1-0");
}

// ---- bad input ------------------------------------------------------------

class VictimSearchInputTest : public VictimSearchTest {
 protected:
  VictimSearchInputTest() {
    AddSharedNode("n1", 1);
    AddSharedNode("n2", 1);
    Bind("n1", "a", {Share("n1", 0, 9000)});
    Bind("n2", "elsewhere", {Share("n2", 0, 9000)});
  }
};

TEST_F(VictimSearchInputTest, UnknownUidNamesTheField) {
  EXPECT_THAT(Find(Pending(6000), kPending, "n1", {Candidate("ghost", 1)}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("candidates[0].uid \"uid-ghost\": no pod "
                                 "with this uid is bound on node \"n1\"")));
}

TEST_F(VictimSearchInputTest, PodOfAnotherNodeIsRefused) {
  EXPECT_THAT(Find(Pending(6000), kPending, "n1",
                   {Candidate("a", 1), Candidate("elsewhere", 1)}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("candidates[1].uid \"uid-elsewhere\"")));
}

TEST_F(VictimSearchInputTest, DuplicateUidIsRefused) {
  EXPECT_THAT(Find(Pending(6000), kPending, "n1",
                   {Candidate("a", 1), Candidate("a", 2)}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("candidates[1].uid \"uid-a\": listed twice")));
}

TEST_F(VictimSearchInputTest, GroupWithoutBudgetIsRefused) {
  EXPECT_THAT(Find(Pending(6000), kPending, "n1", {Candidate("a", 1, "pdb")}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("candidates[0].disruption_group \"pdb\"")));
  EXPECT_THAT(Find(Pending(6000), kPending, "n1", {Candidate("a", 1, "pdb")},
                   {{"pdb", -1}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("disruptions_left[\"pdb\"]: -1 is negative")));
}

TEST_F(VictimSearchInputTest, UnknownNodeIsNotFound) {
  EXPECT_THAT(Find(Pending(6000), kPending, "n9", {Candidate("a", 1)}),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("\"n9\"")));
}

TEST_F(VictimSearchInputTest, PendingPodIsNoCandidate) {
  EXPECT_THAT(Find(Pending(6000), kPending, "n1", {Candidate("pending", 1)}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("is the pending pod")));
}

TEST_F(VictimSearchInputTest, ZeroDisruptionsLeftKeepsThePod) {
  absl::StatusOr<VictimSet> set = Find(
      Pending(6000), kPending, "n1", {Candidate("a", 1, "pdb")}, {{"pdb", 0}});
  ASSERT_OK(set);
  EXPECT_FALSE(set->found);
  EXPECT_TRUE(set->complete);
}

}  // namespace
}  // namespace deviceshare::preemption
