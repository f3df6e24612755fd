// Pods with DRA ResourceClaims on the one decision path (scheduler/
// scheduler.h): slices, classes and claims arrive as events; Schedule and
// the steps allocate the pod's claims on the node the pod's policies
// prefer; the decision lists each claim with its allocation; releasing an
// assumed allocation frees it; an allocation the API server shows pins the
// pod to its node and is charged.
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/dra/allocation_json.h"
#include "deviceshare/scheduler/scheduler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/dra_builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::Claim;
using ::deviceshare::testing::ClaimPod;
using ::deviceshare::testing::GpuClass;
using ::deviceshare::testing::GpuSlice;
using ::deviceshare::testing::kDraGiB;
using ::deviceshare::testing::MakeConfig;
using ::deviceshare::testing::ShareRequest;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::SizeIs;

class SchedulerDraTest : public ::testing::Test {
 protected:
  void Make(const std::string& policy = "binpack") {
    BackendRegistry backends;
    ASSERT_OK(RegisterBuiltinBackends(backends));
    auto made = Scheduler::Create(
        MakeConfig(policy, policy), backends, BuiltinPolicies(), nullptr,
        [this] { return absl::StrCat("share-", ++share_ids_); });
    ASSERT_OK(made);
    scheduler_ = *std::move(made);
    scheduler_->UpsertDeviceClass(GpuClass());
  }

  void AddClaim(const std::string& name, int64_t memory_gib, int cores) {
    ASSERT_OK(scheduler_->UpsertResourceClaim(
        Claim("ml", name, {ShareRequest("gpu", memory_gib * kDraGiB, cores)})));
  }

  // The node the pod went to ("" when none); its decision in `out`.
  std::string Place(const PodRequest& pod, Decision* out = nullptr) {
    absl::StatusOr<Decision> decision = scheduler_->Schedule(pod);
    EXPECT_OK(decision);
    if (!decision.ok()) return "";
    if (out != nullptr) *out = *decision;
    return decision->allocation ? decision->allocation->node_name : "";
  }

  std::unique_ptr<Scheduler> scheduler_;
  std::atomic<int> share_ids_{0};
};

TEST_F(SchedulerDraTest, ClaimPodTakesAShareOnTheFullerNode) {
  Make();
  ASSERT_OK(scheduler_->UpsertResourceSlice(GpuSlice("a", 2)));
  ASSERT_OK(scheduler_->UpsertResourceSlice(GpuSlice("b", 2)));
  AddClaim("first", 40, 50);
  EXPECT_EQ(Place(ClaimPod("ml", "first", {"first"})), "a");  // a tie: by name
  AddClaim("second", 4, 30);
  Decision decision;
  EXPECT_EQ(Place(ClaimPod("ml", "second", {"second"}), &decision), "a");
  ASSERT_THAT(decision.claims, SizeIs(1));
  const ClaimDecision& claim = decision.claims[0];
  EXPECT_EQ(claim.pod_claim, "second");
  EXPECT_EQ(claim.claim_key, "ml/second");
  EXPECT_TRUE(claim.newly_allocated);
  EXPECT_EQ(claim.allocation.node_name, "a");
  ASSERT_THAT(claim.allocation.results, SizeIs(1));
  const dra::DeviceResult& result = claim.allocation.results[0];
  EXPECT_EQ(result.request, "gpu");
  EXPECT_EQ(result.pool, "a");
  EXPECT_EQ(result.device, "gpu-0");  // best fit: beside the first share
  EXPECT_EQ(result.share_id, "share-2");
  EXPECT_THAT(
      result.consumed,
      ElementsAre(
          Pair("cores", dra::CapacityAmount{30, dra::QuantityFormat::kDecimal}),
          Pair("memory",
               dra::CapacityAmount{4 * kDraGiB, dra::QuantityFormat::kBinary}),
          Pair("shares",
               dra::CapacityAmount{1, dra::QuantityFormat::kDecimal})));
}

TEST_F(SchedulerDraTest, SpreadTakesTheEmptierNodeAndDevice) {
  Make("spread");
  ASSERT_OK(scheduler_->UpsertResourceSlice(GpuSlice("a", 2)));
  ASSERT_OK(scheduler_->UpsertResourceSlice(GpuSlice("b", 2)));
  AddClaim("first", 40, 50);
  AddClaim("second", 4, 30);
  AddClaim("third", 4, 30);
  EXPECT_EQ(Place(ClaimPod("ml", "first", {"first"})), "a");
  EXPECT_EQ(Place(ClaimPod("ml", "second", {"second"})), "b");
  Decision decision;
  EXPECT_EQ(Place(ClaimPod("ml", "third", {"third"}), &decision), "b");
  EXPECT_EQ(decision.claims[0].allocation.results[0].device, "gpu-1");
}

TEST_F(SchedulerDraTest, ConcurrentPodsNeverOvercommitADevice) {
  Make();
  // One GPU of 80 GiB with 10 shares: eight 10 GiB claims fit, no more.
  ASSERT_OK(scheduler_->UpsertResourceSlice(GpuSlice("a", 1)));
  constexpr int kPods = 16;
  for (int i = 0; i < kPods; ++i) AddClaim(absl::StrCat("c", i), 10, 5);
  std::atomic<int> placed{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kPods; ++i) {
    threads.emplace_back([&, i] {
      const std::string name = absl::StrCat("c", i);
      // Filter, then reserve, as an extender does: the commit re-checks.
      PodRequest pod = ClaimPod("ml", name, {name});
      absl::StatusOr<std::vector<NodeVerdict>> verdicts =
          scheduler_->Filter(pod);
      if (!verdicts.ok()) return;
      absl::StatusOr<ReserveOutcome> outcome = scheduler_->Reserve(pod, {"a"});
      if (outcome.ok() && outcome->placed) ++placed;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(placed.load(), 8);
  scheduler_->Inspect([](const ClusterState& state) {
    int64_t memory = 0;
    for (int i = 0; i < kPods; ++i) {
      const dra::ClaimEntry* entry =
          state.dra().FindClaim(absl::StrCat("ml/c", i));
      ASSERT_NE(entry, nullptr);
      if (!entry->allocation) continue;
      memory += entry->allocation->results[0].consumed.at("memory").value;
    }
    EXPECT_EQ(memory, 80 * kDraGiB);
    // (100 % of the memory + 40 % of the cores + 8 of 10 shares) / 3.
    EXPECT_EQ(state.dra().UtilisationPercent("a"), 73);
  });
}

TEST_F(SchedulerDraTest, ReleaseFreesAnAssumedAllocation) {
  Make();
  ASSERT_OK(scheduler_->UpsertResourceSlice(GpuSlice("a", 1)));
  AddClaim("big", 80, 100);
  AddClaim("next", 80, 100);
  EXPECT_EQ(Place(ClaimPod("ml", "big", {"big"})), "a");
  EXPECT_EQ(Place(ClaimPod("ml", "next", {"next"})), "");
  // A failed bind: the pod is unreserved and its claim is unallocated.
  scheduler_->Release("uid-big");
  scheduler_->Inspect([](const ClusterState& state) {
    EXPECT_FALSE(state.dra().FindClaim("ml/big")->allocation.has_value());
  });
  EXPECT_EQ(Place(ClaimPod("ml", "next", {"next"})), "a");
}

TEST_F(SchedulerDraTest, AllocationShownByTheApiPinsThePodAndIsCharged) {
  Make();
  ASSERT_OK(scheduler_->UpsertResourceSlice(GpuSlice("a", 1)));
  ASSERT_OK(scheduler_->UpsertResourceSlice(GpuSlice("b", 1)));
  dra::ResourceClaim claim =
      Claim("ml", "held", {ShareRequest("gpu", 60 * kDraGiB, 50)});
  dra::AllocationResult allocation;
  allocation.node_name = "b";
  allocation.results.push_back(dra::DeviceResult{
      "gpu",
      testing::kDraDriver,
      "b",
      "gpu-0",
      "share-api",
      {{"memory", {60 * kDraGiB, dra::QuantityFormat::kBinary}},
       {"cores", {50, dra::QuantityFormat::kDecimal}},
       {"shares", {1, dra::QuantityFormat::kDecimal}}},
      false});
  claim.allocation = dra::AllocationResultToJson(allocation);
  claim.reserved_for_uids = {"uid-other"};
  ASSERT_OK(scheduler_->UpsertResourceClaim(claim));
  Decision decision;
  EXPECT_EQ(Place(ClaimPod("ml", "user", {"held"}), &decision), "b");
  ASSERT_THAT(decision.claims, SizeIs(1));
  EXPECT_FALSE(decision.claims[0].newly_allocated);
  EXPECT_EQ(decision.claims[0].allocation.results[0].share_id, "share-api");
  // 60 GiB of b's GPU is charged: a 40 GiB share goes to a.
  AddClaim("forty", 40, 10);
  EXPECT_EQ(Place(ClaimPod("ml", "forty", {"forty"})), "a");
  // The API server drops the allocation: b's GPU is free again.
  claim.allocation = nullptr;
  claim.reserved_for_uids.clear();
  ASSERT_OK(scheduler_->UpsertResourceClaim(claim));
  AddClaim("eighty", 80, 10);
  EXPECT_EQ(Place(ClaimPod("ml", "eighty", {"eighty"})), "b");
}

TEST_F(SchedulerDraTest, MissingClaimIsNotReadyOnEveryNode) {
  Make();
  ASSERT_OK(scheduler_->UpsertResourceSlice(GpuSlice("a", 1)));
  ASSERT_OK(scheduler_->UpsertResourceSlice(GpuSlice("b", 1)));
  absl::StatusOr<Decision> decision =
      scheduler_->Schedule(ClaimPod("ml", "p", {"absent"}));
  ASSERT_OK(decision);
  EXPECT_FALSE(decision->allocation.has_value());
  EXPECT_THAT(decision->reason_counts, ElementsAre(Pair("ClaimNotReady", 2)));
  EXPECT_THAT(decision->reasons.at("a"),
              HasSubstr("claim ml/absent does not exist"));
  PodRequest templated = ClaimPod("ml", "t", {});
  templated.claims.push_back(PodClaim{"gpu", "", "gpu-share"});
  decision = scheduler_->Schedule(templated);
  ASSERT_OK(decision);
  EXPECT_THAT(decision->reasons.at("b"),
              HasSubstr("claim gpu of pod ml/t (template gpu-share) is not "
                        "created yet"));
}

TEST_F(SchedulerDraTest, UnknownDeviceClassIsNotReadyUntilItExists) {
  Make();
  ASSERT_OK(scheduler_->UpsertResourceSlice(GpuSlice("a", 1)));
  scheduler_->RemoveDeviceClass("gpu.deviceshare.io");
  AddClaim("c", 4, 10);
  absl::StatusOr<NodeVerdict> verdict =
      scheduler_->FilterNode(ClaimPod("ml", "c", {"c"}), "a");
  ASSERT_OK(verdict);
  EXPECT_EQ(verdict->fit.code.name(), "ClaimNotReady");
  EXPECT_THAT(verdict->fit.message,
              HasSubstr("DeviceClass \"gpu.deviceshare.io\" does not exist"));
  scheduler_->UpsertDeviceClass(GpuClass());
  verdict = scheduler_->FilterNode(ClaimPod("ml", "c", {"c"}), "a");
  ASSERT_OK(verdict);
  EXPECT_TRUE(verdict->fit.fits()) << verdict->fit.message;
}

TEST_F(SchedulerDraTest, StepsFilterScoreAllocate) {
  Make();
  ASSERT_OK(scheduler_->UpsertResourceSlice(GpuSlice("a", 2)));
  ASSERT_OK(scheduler_->UpsertResourceSlice(GpuSlice("b", 2)));
  AddClaim("c", 40, 50);
  PodRequest pod = ClaimPod("ml", "c", {"c"});
  absl::StatusOr<std::vector<NodeVerdict>> verdicts =
      scheduler_->Filter(pod, {"a", "b", "nowhere"});
  ASSERT_OK(verdicts);
  ASSERT_THAT(*verdicts, SizeIs(3));
  EXPECT_TRUE((*verdicts)[0].fit.fits());
  EXPECT_TRUE((*verdicts)[0].claims.empty());  // handed out without them
  EXPECT_EQ((*verdicts)[2].fit.code, ReasonCode::kNodeUnknown);
  // (50 % + 50 % + 10 %) / 3 on one of the two GPUs.
  absl::StatusOr<int> score = scheduler_->ScoreNode(pod, "b");
  ASSERT_OK(score);
  EXPECT_EQ(*score, 18);
  absl::StatusOr<Decision> decision = scheduler_->Allocate(pod, "b");
  ASSERT_OK(decision);
  ASSERT_TRUE(decision->allocation.has_value());
  ASSERT_THAT(decision->claims, SizeIs(1));
  EXPECT_EQ(decision->claims[0].allocation.node_name, "b");
  EXPECT_EQ(scheduler_->PodNode("uid-c"), "b");
}

TEST_F(SchedulerDraTest, TwoSharesOfDifferentSizesOnTwoGpus) {
  Make();
  ASSERT_OK(scheduler_->UpsertResourceSlice(GpuSlice("a", 2)));
  ASSERT_OK(scheduler_->UpsertResourceClaim(
      Claim("ml", "pair",
            {ShareRequest("small", 4 * kDraGiB, 30),
             ShareRequest("large", 8 * kDraGiB, 60)},
            {dra::DeviceConstraint{{}, "", "gpu.deviceshare.io/uuid"}})));
  Decision decision;
  EXPECT_EQ(Place(ClaimPod("ml", "pair", {"pair"}), &decision), "a");
  const auto& results = decision.claims[0].allocation.results;
  ASSERT_THAT(results, SizeIs(2));
  EXPECT_NE(results[0].device, results[1].device);
  EXPECT_EQ(results[0].consumed.at("cores").value, 30);
  EXPECT_EQ(results[1].consumed.at("memory").value, 8 * kDraGiB);
}

TEST_F(SchedulerDraTest, AnnotatedAndClaimPodsShareOneCluster) {
  Make();
  ASSERT_OK(scheduler_->UpsertNode(testing::MakeNode("annotated", 1)));
  ASSERT_OK(scheduler_->UpsertResourceSlice(GpuSlice("dra", 1)));
  AddClaim("c", 10, 10);
  EXPECT_EQ(Place(ClaimPod("ml", "c", {"c"})), "dra");
  EXPECT_EQ(Place(testing::MakePod(
                "annotated", {testing::GpuContainer("main", 1, 1024, 10)})),
            "annotated");
  // A node known only from its slices goes with its last slice.
  scheduler_->Release("uid-c");
  scheduler_->RemoveResourceSlice("dra-gpus");
  scheduler_->Inspect([](const ClusterState& state) {
    EXPECT_EQ(state.FindNode("dra"), nullptr);
    EXPECT_NE(state.FindNode("annotated"), nullptr);
  });
}

TEST_F(SchedulerDraTest, ReservedClaimServesASecondPodOnItsNode) {
  Make();
  ASSERT_OK(scheduler_->UpsertResourceSlice(GpuSlice("a", 1)));
  ASSERT_OK(scheduler_->UpsertResourceSlice(GpuSlice("b", 1)));
  AddClaim("shared", 10, 10);
  EXPECT_EQ(Place(ClaimPod("ml", "one", {"shared"})), "a");
  Decision decision;
  EXPECT_EQ(Place(ClaimPod("ml", "two", {"shared"}), &decision), "a");
  EXPECT_FALSE(decision.claims[0].newly_allocated);
  // The allocation stays while one consumer is left.
  scheduler_->Release("uid-one");
  scheduler_->Inspect([](const ClusterState& state) {
    const dra::ClaimEntry* entry = state.dra().FindClaim("ml/shared");
    ASSERT_TRUE(entry->allocation.has_value());
    EXPECT_THAT(entry->reserved_by, ElementsAre("uid-two"));
  });
}

// The search visits nodes best bound first and stops early; it must pick
// the node a full scan of every node's verdict picks.
TEST_F(SchedulerDraTest, BoundedSearchPicksWhatAFullScanPicks) {
  for (const std::string policy : {"binpack", "spread"}) {
    SCOPED_TRACE(policy);
    Make(policy);
    for (int n = 0; n < 12; ++n) {
      ASSERT_OK(scheduler_->UpsertResourceSlice(
          GpuSlice(absl::StrCat("n", n), 1 + n % 4, n % 3 == 0 ? 40 : 80)));
    }
    uint64_t state = 12345;
    auto next = [&state](int bound) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      return static_cast<int>((state >> 33) % bound);
    };
    int placed = 0;
    for (int i = 0; i < 400; ++i) {
      const std::string name = absl::StrCat("p", i);
      ASSERT_OK(scheduler_->UpsertResourceClaim(
          Claim("ml", name,
                {ShareRequest("gpu", (1 + next(30)) * kDraGiB,
                              5 * (1 + next(20)), 1 + next(2))})));
      PodRequest pod = ClaimPod("ml", name, {name});
      std::optional<NodeVerdict> scanned;
      for (NodeVerdict& verdict : scheduler_->FilterFreshForTest(pod)) {
        if (verdict.fit.fits() &&
            (!scanned || BetterVerdict(verdict, *scanned))) {
          scanned = std::move(verdict);
        }
      }
      const std::string node = Place(pod);
      EXPECT_EQ(node, scanned ? scanned->node : "") << name;
      if (!node.empty()) ++placed;
      // Some leave, so nodes go up and down.
      if (next(4) == 0 && i > 0) {
        scheduler_->Release(absl::StrCat("uid-p", next(i)));
      }
    }
    EXPECT_GT(placed, 50);
  }
}

}  // namespace
}  // namespace deviceshare
