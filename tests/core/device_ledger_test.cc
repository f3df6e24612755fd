// Tests of DeviceLedger and ChargeOf (model/device_ledger.h): the charging
// rule max(init, sum of app) and one slot per app container, the reasons
// CheckPod gives (with the numbers behind them), AddPod/RemovePod exactness
// and the invariants.
#include "deviceshare/model/device_ledger.h"

#include <string>
#include <vector>

#include "deviceshare/model/gpu_brief.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::MakeGpu;
using ::deviceshare::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

constexpr int64_t kGiB = 1024;

ContainerShare App(int32_t index, int64_t memory_mib, int32_t cores = 0) {
  return ContainerShare{index, /*is_init=*/false, memory_mib, cores};
}

ContainerShare Init(int32_t index, int64_t memory_mib, int32_t cores = 0) {
  return ContainerShare{index, /*is_init=*/true, memory_mib, cores};
}

// An 80 GiB GPU with index 3 and the given split count.
DeviceLedger MakeLedger(int split = 10) {
  return DeviceLedger(MakeGpu("n1", 3, 80 * kGiB, split));
}

// ----------------------------------------------------------------------------
// ChargeOf

TEST(DeviceLedgerChargeTest, InitChargesMaxNotSum) {
  // init: 60 GiB/50 %, 20 GiB/10 %; app: 30+10 GiB, 20+20 %.
  std::vector<ContainerShare> shares = {
      Init(0, 60 * kGiB, 50), Init(1, 20 * kGiB, 10), App(2, 30 * kGiB, 20),
      App(3, 10 * kGiB, 20)};
  PodCharge charge = ChargeOf(shares);
  // memory = max(60, 30 + 10) GiB, not 60 + 20 + 30 + 10.
  EXPECT_EQ(charge.memory_mib, 60 * kGiB);
  // cores = max(50, 20 + 20).
  EXPECT_EQ(charge.cores, 50);
  EXPECT_EQ(charge.slots, 2);
  EXPECT_FALSE(charge.exclusive);
}

TEST(DeviceLedgerChargeTest, AppSumWinsOverSmallerInit) {
  PodCharge charge = ChargeOf(
      {Init(0, 10 * kGiB, 5), App(1, 30 * kGiB, 30), App(2, 25 * kGiB, 40)});
  EXPECT_EQ(charge.memory_mib, 55 * kGiB);
  EXPECT_EQ(charge.cores, 70);
  EXPECT_EQ(charge.slots, 2);
}

TEST(DeviceLedgerChargeTest, EachAppContainerTakesASlot) {
  PodCharge charge =
      ChargeOf({App(0, 1000, 10), App(1, 2000, 10), App(2, 3000, 10)});
  EXPECT_EQ(charge, (PodCharge{6000, 30, 3, false}));
}

TEST(DeviceLedgerChargeTest, InitAloneTakesOneSlot) {
  EXPECT_EQ(ChargeOf({Init(0, 5000, 30)}), (PodCharge{5000, 30, 1, false}));
  // Two init containers run one after the other: still one slot.
  EXPECT_EQ(ChargeOf({Init(0, 5000, 30), Init(1, 7000, 10)}),
            (PodCharge{7000, 30, 1, false}));
}

TEST(DeviceLedgerChargeTest, ExclusiveWhenAnyShareHasAllCores) {
  EXPECT_TRUE(ChargeOf({App(0, 1000, 100)}).exclusive);
  EXPECT_FALSE(ChargeOf({App(0, 1000, 99)}).exclusive);
  EXPECT_EQ(ChargeOf({}), (PodCharge{0, 0, 0, false}));
}

// ----------------------------------------------------------------------------
// CheckPod reasons

TEST(DeviceLedgerTest, EmptyLedgerReportsCapacity) {
  DeviceLedger ledger = MakeLedger(7);
  EXPECT_EQ(ledger.memory_capacity_mib(), 81920);
  EXPECT_EQ(ledger.core_capacity(), 100);
  EXPECT_EQ(ledger.slot_capacity(), 7);
  EXPECT_EQ(ledger.free_memory_mib(), 81920);
  EXPECT_EQ(ledger.free_cores(), 100);
  EXPECT_EQ(ledger.free_slots(), 7);
  EXPECT_TRUE(ledger.idle());
  EXPECT_FALSE(ledger.held_exclusively());
}

TEST(DeviceLedgerTest, CheckPodFitsNamesTheGpuIndex) {
  DeviceLedger ledger = MakeLedger();
  GpuVerdict verdict = ledger.CheckPod({App(0, 80 * kGiB, 99)});
  EXPECT_TRUE(verdict.fits());
  EXPECT_EQ(verdict.gpu_index, 3);
}

TEST(DeviceLedgerTest, SplitExhaustedWhenTenantsAreAtTheSplitCount) {
  DeviceLedger ledger = MakeLedger(/*split=*/2);
  ASSERT_OK(ledger.AddPod("a", {App(0, 1000)}));
  ASSERT_OK(ledger.AddPod("b", {App(0, 1000)}));
  GpuVerdict verdict = ledger.CheckPod({App(0, 1000)});
  EXPECT_EQ(verdict.code, ReasonCode::kSplitExhausted);
  EXPECT_EQ(verdict.gpu_index, 3);
  EXPECT_EQ(verdict.detail, "tenants=2 split=2 want=1");
}

TEST(DeviceLedgerTest, SplitExhaustedCountsEveryAppContainerOfTheNewPod) {
  DeviceLedger ledger = MakeLedger(/*split=*/2);
  GpuVerdict verdict =
      ledger.CheckPod({App(0, 1000), App(1, 1000), App(2, 1000)});
  EXPECT_EQ(verdict.code, ReasonCode::kSplitExhausted);
  EXPECT_EQ(verdict.detail, "tenants=0 split=2 want=3");
}

TEST(DeviceLedgerTest, InsufficientMemoryGivesFreeAndWant) {
  DeviceLedger ledger = MakeLedger();
  ASSERT_OK(ledger.AddPod("a", {App(0, 70000)}));
  GpuVerdict verdict = ledger.CheckPod({App(0, 20000)});
  EXPECT_EQ(verdict.code, ReasonCode::kInsufficientMemory);
  // 81920 - 70000 = 11920.
  EXPECT_EQ(verdict.detail, "free=11920MiB want=20000MiB");
  // Exactly the free memory still fits.
  EXPECT_TRUE(ledger.CheckPod({App(0, 11920)}).fits());
}

TEST(DeviceLedgerTest, InsufficientMemoryWantIsThePodCharge) {
  DeviceLedger ledger = MakeLedger();
  ASSERT_OK(ledger.AddPod("a", {App(0, 50 * kGiB)}));
  // Two app containers of 20 GiB each: the pod wants 40 GiB, 30 GiB free.
  GpuVerdict verdict = ledger.CheckPod({App(0, 20 * kGiB), App(1, 20 * kGiB)});
  EXPECT_EQ(verdict.code, ReasonCode::kInsufficientMemory);
  EXPECT_EQ(verdict.detail, "free=30720MiB want=40960MiB");
}

TEST(DeviceLedgerTest, InsufficientCoresGivesFreeAndWant) {
  DeviceLedger ledger = MakeLedger();
  ASSERT_OK(ledger.AddPod("a", {App(0, 1000, 70)}));
  GpuVerdict verdict = ledger.CheckPod({App(0, 1000, 40)});
  EXPECT_EQ(verdict.code, ReasonCode::kInsufficientCores);
  EXPECT_EQ(verdict.detail, "free=30% want=40%");
  EXPECT_TRUE(ledger.CheckPod({App(0, 1000, 30)}).fits());
}

TEST(DeviceLedgerTest, ExclusiveRequestOntoAUsedGpuConflicts) {
  DeviceLedger ledger = MakeLedger();
  ASSERT_OK(ledger.AddPod("a", {App(0, 1000, 10)}));
  GpuVerdict verdict = ledger.CheckPod({App(0, 1000, 100)});
  EXPECT_EQ(verdict.code, ReasonCode::kExclusiveConflict);
  EXPECT_THAT(verdict.detail, HasSubstr("1 pods"));
}

TEST(DeviceLedgerTest, ExclusiveRequestOntoAnIdleGpuFits) {
  DeviceLedger ledger = MakeLedger();
  ASSERT_OK(ledger.AddPod("x", {App(0, 80 * kGiB, 100)}));
  EXPECT_TRUE(ledger.held_exclusively());
  EXPECT_EQ(ledger.used_cores(), 100);
}

TEST(DeviceLedgerTest, NothingJoinsAnExclusivelyHeldGpu) {
  DeviceLedger ledger = MakeLedger();
  ASSERT_OK(ledger.AddPod("x", {App(0, 1000, 100)}));
  // Plenty of memory is free; cores=0 and a small share are still refused.
  EXPECT_EQ(ledger.CheckPod({App(0, 1000, 0)}).code,
            ReasonCode::kExclusiveConflict);
  EXPECT_EQ(ledger.CheckPod({App(0, 1, 0)}).code,
            ReasonCode::kExclusiveConflict);
  // HAMi #2965: a pod whose init container needs the GPU must not land on a
  // GPU another pod holds exclusively either.
  EXPECT_EQ(ledger.CheckPod({Init(0, 1000, 0)}).code,
            ReasonCode::kExclusiveConflict);
}

TEST(DeviceLedgerTest, ExclusiveContainerCannotShareWithASibling) {
  DeviceLedger ledger = MakeLedger();
  GpuVerdict verdict = ledger.CheckPod({App(0, 1000, 100), App(1, 1000, 0)});
  EXPECT_EQ(verdict.code, ReasonCode::kExclusiveConflict);
  EXPECT_THAT(verdict.detail, HasSubstr("another container of its pod"));
  EXPECT_THAT(ledger.AddPod("p", {App(0, 1000, 100), App(1, 1000, 0)}),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       StartsWith("ExclusiveConflict gpu=GPU-n1-3 pod=p")));
  // An init container runs before the app container: no conflict.
  EXPECT_TRUE(ledger.CheckPod({Init(0, 1000, 0), App(1, 1000, 100)}).fits());
}

TEST(DeviceLedgerTest, ComputeExhaustedForZeroCoreTenantOnFullyUsedCores) {
  DeviceLedger ledger = MakeLedger();
  ASSERT_OK(ledger.AddPod("a", {App(0, 1000, 60)}));
  ASSERT_OK(ledger.AddPod("b", {App(0, 1000, 40)}));
  EXPECT_EQ(ledger.free_cores(), 0);
  GpuVerdict verdict = ledger.CheckPod({App(0, 1000, 0)});
  EXPECT_EQ(verdict.code, ReasonCode::kComputeExhausted);
  EXPECT_EQ(verdict.detail, "used=100% of 100%");
  // With one core left a 0-core tenant is fine.
  ASSERT_TRUE(ledger.RemovePod("b"));
  ASSERT_OK(ledger.AddPod("b", {App(0, 1000, 39)}));
  EXPECT_TRUE(ledger.CheckPod({App(0, 1000, 0)}).fits());
}

TEST(DeviceLedgerTest, CheckPodIsPure) {
  DeviceLedger ledger = MakeLedger();
  ASSERT_OK(ledger.AddPod("a", {App(0, 1000, 10)}));
  const DeviceLedger before = ledger;
  (void)ledger.CheckPod({App(0, 2000, 20)});
  (void)ledger.CheckPod({App(0, 200000, 20)});
  EXPECT_TRUE(ledger == before);
}

// ----------------------------------------------------------------------------
// AddPod / RemovePod

TEST(DeviceLedgerTest, AddPodChargesTotals) {
  DeviceLedger ledger = MakeLedger();
  ASSERT_OK(ledger.AddPod("b", {Init(0, 30 * kGiB, 50), App(1, 10 * kGiB, 20),
                                App(2, 5 * kGiB, 20)}));
  ASSERT_OK(ledger.AddPod("a", {App(0, 8 * kGiB, 15)}));
  // b: max(30, 15) GiB, max(50, 40) %, 2 slots; a: 8 GiB, 15 %, 1 slot.
  EXPECT_EQ(ledger.used_memory_mib(), 38 * kGiB);
  EXPECT_EQ(ledger.used_cores(), 65);
  EXPECT_EQ(ledger.used_slots(), 3);
  EXPECT_EQ(ledger.free_memory_mib(), 42 * kGiB);
  EXPECT_EQ(ledger.free_cores(), 35);
  EXPECT_EQ(ledger.free_slots(), 7);
  EXPECT_EQ(ledger.pod_count(), 2u);
  EXPECT_THAT(ledger.PodUids(), ElementsAre("a", "b"));
  EXPECT_TRUE(ledger.HasPod("a"));
  EXPECT_FALSE(ledger.HasPod("c"));
  EXPECT_THAT(ledger.SharesOf("a"), ElementsAre(App(0, 8 * kGiB, 15)));
  EXPECT_THAT(ledger.SharesOf("c"), IsEmpty());
  EXPECT_OK(ledger.CheckInvariants());
}

TEST(DeviceLedgerTest, AddPodTwiceIsAlreadyExists) {
  DeviceLedger ledger = MakeLedger();
  ASSERT_OK(ledger.AddPod("a", {App(0, 1000)}));
  const DeviceLedger before = ledger;
  EXPECT_THAT(ledger.AddPod("a", {App(0, 1000)}),
              StatusIs(absl::StatusCode::kAlreadyExists,
                       AllOf(HasSubstr("GPU-n1-3"), HasSubstr("a"))));
  EXPECT_TRUE(ledger == before);
  EXPECT_EQ(ledger.used_memory_mib(), 1000);
}

TEST(DeviceLedgerTest, AddPodRejectsBadArguments) {
  DeviceLedger ledger = MakeLedger();
  const DeviceLedger empty = ledger;
  EXPECT_THAT(ledger.AddPod("", {App(0, 1000)}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("pod uid is empty")));
  EXPECT_THAT(ledger.AddPod("p", {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("no container share")));
  EXPECT_THAT(
      ledger.AddPod("p", {App(0, -1)}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("negative")));
  EXPECT_THAT(
      ledger.AddPod("p", {App(0, 1000, -5)}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("cores=-5")));
  EXPECT_THAT(
      ledger.AddPod("p", {App(-1, 1000)}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("negative")));
  // A negative share next to a valid one still rejects the whole pod.
  EXPECT_THAT(ledger.AddPod("p", {App(0, 1000), App(1, -1000)}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_TRUE(ledger == empty);
}

TEST(DeviceLedgerTest, AddPodThatDoesNotFitIsFailedPreconditionWithVerdict) {
  DeviceLedger ledger = MakeLedger();
  ASSERT_OK(ledger.AddPod("a", {App(0, 70000)}));
  const DeviceLedger before = ledger;
  EXPECT_THAT(ledger.AddPod("p", {App(0, 20000)}),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "InsufficientMemory gpu=GPU-n1-3 pod=p "
                       "free=11920MiB want=20000MiB"));
  EXPECT_TRUE(ledger == before);
  EXPECT_FALSE(ledger.HasPod("p"));
}

TEST(DeviceLedgerTest, RemovePodRestoresTheLedgerExactly) {
  DeviceLedger ledger = MakeLedger();
  ASSERT_OK(ledger.AddPod("resident", {App(0, 10 * kGiB, 30)}));
  const DeviceLedger original = ledger;
  ASSERT_OK(ledger.AddPod(
      "visitor",
      {Init(0, 40 * kGiB, 60), App(1, 20 * kGiB, 10), App(2, 5 * kGiB, 10)}));
  EXPECT_FALSE(ledger == original);
  EXPECT_EQ(ledger.used_memory_mib(), 50 * kGiB);
  EXPECT_EQ(ledger.used_cores(), 90);
  EXPECT_EQ(ledger.used_slots(), 3);
  EXPECT_TRUE(ledger.RemovePod("visitor"));
  EXPECT_TRUE(ledger == original);
  EXPECT_EQ(ledger.used_memory_mib(), 10 * kGiB);
  EXPECT_EQ(ledger.used_cores(), 30);
  EXPECT_EQ(ledger.used_slots(), 1);
  EXPECT_OK(ledger.CheckInvariants());
}

TEST(DeviceLedgerTest, RemovePodIsIdempotent) {
  DeviceLedger ledger = MakeLedger();
  ASSERT_OK(ledger.AddPod("a", {App(0, 1000, 10)}));
  ASSERT_OK(ledger.AddPod("b", {App(0, 2000, 20)}));
  EXPECT_TRUE(ledger.RemovePod("a"));
  const DeviceLedger after_first = ledger;
  EXPECT_FALSE(ledger.RemovePod("a"));
  EXPECT_FALSE(ledger.RemovePod("never-here"));
  EXPECT_TRUE(ledger == after_first);
  EXPECT_EQ(ledger.used_memory_mib(), 2000);
  EXPECT_EQ(ledger.used_cores(), 20);
  EXPECT_EQ(ledger.used_slots(), 1);
}

TEST(DeviceLedgerTest, RemovingTheExclusiveHolderFreesTheGpu) {
  DeviceLedger ledger = MakeLedger();
  ASSERT_OK(ledger.AddPod("x", {App(0, 1000, 100)}));
  ASSERT_TRUE(ledger.RemovePod("x"));
  EXPECT_FALSE(ledger.held_exclusively());
  EXPECT_TRUE(ledger.idle());
  EXPECT_OK(ledger.AddPod("y", {App(0, 1000, 0)}));
}

TEST(DeviceLedgerTest, EqualityDependsOnTenants) {
  DeviceLedger a = MakeLedger();
  DeviceLedger b = MakeLedger();
  EXPECT_TRUE(a == b);
  ASSERT_OK(a.AddPod("p", {App(0, 1000)}));
  ASSERT_OK(b.AddPod("q", {App(0, 1000)}));
  // Same totals, different tenants.
  EXPECT_EQ(a.used_memory_mib(), b.used_memory_mib());
  EXPECT_FALSE(a == b);
  // Same tenant, different share.
  DeviceLedger c = MakeLedger();
  ASSERT_OK(c.AddPod("p", {App(1, 1000)}));
  EXPECT_FALSE(a == c);
  // Different GPU.
  EXPECT_FALSE(MakeLedger(10) == MakeLedger(9));
}

// HAMi #2622: N containers of one pod sharing a GPU are N tenants.
TEST(DeviceLedgerTest, MultiContainerPodTakesOneSlotPerContainer) {
  DeviceLedger ledger = MakeLedger(/*split=*/3);
  ASSERT_OK(ledger.AddPod("p", {App(0, 1000), App(1, 1000), App(2, 1000)}));
  EXPECT_EQ(ledger.used_slots(), 3);
  EXPECT_EQ(ledger.free_slots(), 0);
  EXPECT_EQ(ledger.pod_count(), 1u);
  GpuVerdict verdict = ledger.CheckPod({App(0, 1000)});
  EXPECT_EQ(verdict.code, ReasonCode::kSplitExhausted);
  EXPECT_EQ(verdict.detail, "tenants=3 split=3 want=1");
  EXPECT_THAT(ledger.AddPod("q", {App(0, 1000)}),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       StartsWith("SplitExhausted gpu=GPU-n1-3 pod=q")));
  // Releasing the pod frees all three slots.
  ASSERT_TRUE(ledger.RemovePod("p"));
  EXPECT_EQ(ledger.free_slots(), 3);
}

TEST(DeviceLedgerTest, CheckInvariantsHoldAfterAMixOfOperations) {
  DeviceLedger ledger = MakeLedger(/*split=*/4);
  ASSERT_OK(ledger.CheckInvariants());
  ASSERT_OK(ledger.AddPod("a", {App(0, 20 * kGiB, 25)}));
  ASSERT_OK(
      ledger.AddPod("b", {Init(0, 30 * kGiB, 50), App(1, 10 * kGiB, 25)}));
  EXPECT_THAT(ledger.AddPod("c", {App(0, 40 * kGiB, 10)}),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  ASSERT_OK(ledger.CheckInvariants());
  ASSERT_TRUE(ledger.RemovePod("a"));
  ASSERT_OK(ledger.AddPod("c", {App(0, 40 * kGiB, 10), App(1, 10 * kGiB, 10)}));
  EXPECT_OK(ledger.CheckInvariants());
  // b: 30 GiB / 50 %, 1 slot; c: 50 GiB / 20 %, 2 slots.
  EXPECT_EQ(ledger.used_memory_mib(), 80 * kGiB);
  EXPECT_EQ(ledger.used_cores(), 70);
  EXPECT_EQ(ledger.used_slots(), 3);
  ASSERT_TRUE(ledger.RemovePod("b"));
  ASSERT_TRUE(ledger.RemovePod("c"));
  EXPECT_OK(ledger.CheckInvariants());
  EXPECT_TRUE(ledger == MakeLedger(4));
}

// utils_test.go TestDeviceHasPodFromSameGroup: a group's pod blocks the GPU
// only while it uses memory or cores.
TEST(DeviceLedgerTest, UsedByGroupCountsOnlyPodsThatUseTheGpu) {
  DeviceLedger ledger = MakeLedger();
  EXPECT_FALSE(ledger.UsedByGroup("ns/job-1"));
  ASSERT_OK(ledger.AddPod("idle", {App(0, 0)}, "ns/job-1"));
  EXPECT_FALSE(ledger.UsedByGroup("ns/job-1"));
  ASSERT_OK(ledger.AddPod("busy", {App(0, 1024)}, "ns/job-1"));
  EXPECT_TRUE(ledger.UsedByGroup("ns/job-1"));
  EXPECT_FALSE(ledger.UsedByGroup("ns/job-2"));
  EXPECT_FALSE(ledger.UsedByGroup(""));
  ledger.RemovePod("busy");
  EXPECT_FALSE(ledger.UsedByGroup("ns/job-1"));
}

// A MIG share that holds the GPU (a record names the GPU but places no
// instance, mig_allocation_test.go TestGetNodesUsageFailsClosedWithout
// MigAllocation) is taken beside instances already there, and then no
// share is taken until it leaves.
// HAMi locks a GPU for a 100-core ask only when it registers exactly 100
// cores (nvidia/device.go Fit, "dev.Totalcore == 100"): under
// deviceCoreScaling 5 a 100-core share is 100 of 500, and others join it.
TEST(DeviceLedgerTest, HundredCoresAreExclusiveOnlyOnAHundredCoreGpu) {
  Gpu scaled = MakeGpu("n1", 0, 80 * kGiB, 10);
  scaled.core_capacity = 500;
  DeviceLedger ledger(scaled);
  ASSERT_OK(ledger.AddPod("a", {App(0, kGiB, 100)}));
  EXPECT_FALSE(ledger.held_exclusively());
  EXPECT_EQ(ledger.CheckPodCode({App(0, kGiB, 100)}), ReasonCode::kFits);
  ASSERT_OK(ledger.AddPod("b", {App(0, kGiB, 100), App(1, kGiB, 100)}));
  EXPECT_OK(ledger.CheckInvariants());
  EXPECT_EQ(ledger.free_cores(), 200);
  EXPECT_TRUE(GpuBrief::Of(ledger).flags & GpuBrief::kHasPods);
  EXPECT_FALSE(GpuBrief::Of(ledger).flags & GpuBrief::kExclusiveByCores);

  DeviceLedger whole = MakeLedger();
  ASSERT_OK(whole.AddPod("a", {App(0, kGiB, 100)}));
  EXPECT_TRUE(whole.held_exclusively());
  EXPECT_EQ(whole.CheckPodCode({App(0, kGiB, 0)}),
            ReasonCode::kExclusiveConflict);
  EXPECT_TRUE(GpuBrief::Of(whole).flags & GpuBrief::kExclusiveByCores);
}

TEST(DeviceLedgerTest, AShareThatHoldsTheGpuFailsItClosed) {
  DeviceLedger ledger = MakeLedger(7);
  ContainerShare placed = App(0, 4864, 14);
  placed.mig = MigSlot{"1g.5gb", 6, 1};
  ASSERT_OK(ledger.AddPod("placed", {placed}));
  ContainerShare blind = App(0, 5120, 14);
  blind.mig.holds_gpu = true;
  EXPECT_TRUE(blind.is_mig());
  ASSERT_OK(ledger.AddPod("blind", {blind}));
  EXPECT_OK(ledger.CheckInvariants());
  ContainerShare next = App(0, 4864, 14);
  next.mig = MigSlot{"1g.5gb", 0, 1};
  const GpuVerdict refused = ledger.CheckPod({next});
  EXPECT_EQ(refused.code, ReasonCode::kPartitionTaken);
  EXPECT_THAT(refused.detail, HasSubstr("does not place it"));
  EXPECT_EQ(ledger.CheckPodCode({App(0, kGiB)}), ReasonCode::kPartitionTaken);
  ASSERT_TRUE(ledger.RemovePod("blind"));
  EXPECT_EQ(ledger.CheckPodCode({next}), ReasonCode::kFits);
  EXPECT_OK(ledger.CheckInvariants());
}

}  // namespace
}  // namespace deviceshare
