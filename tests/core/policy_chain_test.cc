// HAMi's GPU order (pkg/scheduler/policy/gpu_policy_test.go
// TestDeviceUsageList_Less and its chain cases) and topology picks
// (pkg/device/nvidia/device_test.go TestFit_Topology*), restated over
// deviceshare's policies: each row says which of two GPUs a container tries
// first. HAMi sorts ascending and takes from the end, so its "a is Less
// than b" is "b is tried first" here.
#include "deviceshare/policy/policy_chain.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "deviceshare/config/device_config.h"
#include "deviceshare/model/device_ledger.h"
#include "deviceshare/policy/builtin_policies.h"
#include "deviceshare/policy/policy_set.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::MakeConfig;
using ::deviceshare::testing::MakeGpu;
using ::testing::ElementsAre;

// The pod's GPU policy as the decision path makes it from the annotation.
class PodPolicy {
 public:
  PodPolicy(const PolicySet& set, const std::string& text, bool numa_bind,
            DeviceScoringWeights weights = {}) {
    std::vector<const PlacementPolicy*> parts;
    for (absl::string_view name : absl::StrSplit(text, ',')) {
      parts.push_back(set.Find(name));
    }
    single_ = parts.size() == 1 && weights == DeviceScoringWeights{}
                  ? parts.front()
                  : nullptr;
    if (single_ == nullptr) {
      owned_ = MakePolicyChain(parts, weights, numa_bind);
    }
  }
  const PlacementPolicy& get() const {
    return single_ != nullptr ? *single_ : *owned_;
  }

 private:
  const PlacementPolicy* single_;
  std::unique_ptr<PlacementPolicy> owned_;
};

// A GPU whose utilisation after the share is `used` percent in all three
// fractions (capacity 100 MiB, 100 cores, 100 slots).
struct RowGpu {
  int index;
  int numa;
  int used;
};

GpuRank RankOf(const PlacementPolicy& policy, const RowGpu& row) {
  Gpu gpu =
      MakeGpu("n", row.index, /*memory_mib=*/100, /*split=*/100, row.numa);
  DeviceLedger ledger(gpu);
  const PodCharge charge{row.used, row.used, row.used, false};
  return policy.RankGpu(policy.GpuScore(ledger, charge), gpu);
}

struct OrderRow {
  const char* upstream;
  const char* policy;
  bool numa_bind;
  RowGpu a;
  RowGpu b;
  bool b_first;  // HAMi's expectedLess
};

TEST(PolicyChainTableTest, HamiGpuPolicyOrder) {
  auto set = PolicySet::Create(BuiltinPolicies(), MakeConfig());
  ASSERT_OK(set);
  const OrderRow rows[] = {
      {"Bare numa: NUMA is the sort key regardless of score",
       "numa",
       false,
       {0, 0, 99},
       {1, 1, 5},
       true},
      {"Bare numa: same NUMA falls to deterministic Index tiebreak",
       "numa",
       false,
       {3, 0, 10},
       {1, 0, 20},
       false},
      {"Chain binpack,numa: score primary, numa tiebreak when scores equal",
       "binpack,numa",
       false,
       {0, 0, 15},
       {1, 1, 15},
       true},
      {"Chain binpack,numa: the fuller GPU first whatever its NUMA",
       "binpack,numa",
       false,
       {0, 1, 20},
       {1, 0, 30},
       true},
      {"Chain spread,numa: score primary, numa tiebreak when scores equal",
       "spread,numa",
       false,
       {0, 0, 15},
       {1, 1, 15},
       true},
      {"Chain numa,spread: numa primary regardless of score",
       "numa,spread",
       false,
       {0, 1, 5},
       {1, 0, 99},
       false},
      {"Chain numa,spread: same NUMA falls back to spread",
       "numa,spread",
       false,
       {0, 0, 20},
       {1, 0, 10},
       true},
      {"Chain mutex,spread: mutex is a filter, spread decides order",
       "mutex,spread",
       false,
       {0, 0, 10},
       {1, 0, 20},
       false},
      {"Chain with only filter tokens (mutex,topology-aware) falls back to "
       "spread",
       "mutex,topology-aware",
       false,
       {0, 0, 10},
       {1, 0, 20},
       false},
      {"Chain binpack,numa: deterministic Index tiebreak when score and numa "
       "both tie",
       "binpack,numa",
       false,
       {5, 0, 10},
       {2, 0, 10},
       false},
      {"Chain binpack,spread + NumaBind: numa forced primary",
       "binpack,spread",
       true,
       {0, 0, 99},
       {1, 1, 5},
       true},
      {"Chain spread,numa + NumaBind: numa moved to front, spread breaks "
       "same-NUMA ties",
       "spread,numa",
       true,
       {0, 0, 20},
       {1, 0, 10},
       true},
      // util_test.go TestPolicyContains: a list with blanks and all three.
      {"TestPolicyContains: spread,numa,mutex ranks as spread then numa",
       "spread,numa,mutex",
       false,
       {0, 1, 30},
       {1, 0, 20},
       true},
  };
  for (const OrderRow& row : rows) {
    SCOPED_TRACE(row.upstream);
    PodPolicy policy(*set, row.policy, row.numa_bind);
    const GpuRank a = RankOf(policy.get(), row.a);
    const GpuRank b = RankOf(policy.get(), row.b);
    EXPECT_EQ(b > a, row.b_first);
    EXPECT_NE(a, b);
  }
}

// HAMi makes any comma list a chain (gpu_policy.go Less), so a list left
// with one known word ("binpack,unknown") breaks ties by the highest
// index, where the single policy "binpack" keeps the lower index first.
TEST(PolicyChainTest, AListOfOneKnownWordIsStillAChain) {
  auto set = PolicySet::Create(BuiltinPolicies(), MakeConfig());
  ASSERT_OK(set);
  const PlacementPolicy* binpack = set->Find("binpack");
  ASSERT_NE(binpack, nullptr);
  auto chain = MakePolicyChain({binpack}, DeviceScoringWeights{},
                               /*numa_bind=*/false, /*written_as_list=*/true);
  const RowGpu low{2, 0, 10};
  const RowGpu high{5, 0, 10};
  EXPECT_GT(RankOf(*chain, high), RankOf(*chain, low));
  auto alone = MakePolicyChain({binpack}, DeviceScoringWeights{},
                               /*numa_bind=*/false);
  EXPECT_GT(RankOf(*alone, low), RankOf(*alone, high));
}

// A chain's filters all apply: mutex in a list still keeps a used GPU out.
TEST(PolicyChainTest, EveryFilterOfAChainApplies) {
  auto set = PolicySet::Create(BuiltinPolicies(), MakeConfig());
  ASSERT_OK(set);
  PodPolicy policy(*set, "binpack,mutex", false);
  DeviceLedger ledger(MakeGpu("n", 0));
  EXPECT_EQ(policy.get().GpuAdmits(ledger, {}), ReasonCode::kFits);
  ContainerShare share;
  share.memory_mib = 1024;
  ASSERT_OK(ledger.AddPod("other", {share}, ""));
  EXPECT_EQ(policy.get().GpuAdmits(ledger, {}), ReasonCode::kExclusiveConflict);
  EXPECT_EQ(policy.get().name(), "binpack,mutex");
}

// Weights change the score of one policy: HAMi's
// TestCalcScoreUsesPodDeviceScoringWeights GPUs, binpack.
TEST(PolicyChainTest, WeightsReweighTheScore) {
  auto set = PolicySet::Create(BuiltinPolicies(), MakeConfig());
  ASSERT_OK(set);
  Gpu gpu = MakeGpu("n", 0, /*memory_mib=*/100, /*split=*/10);
  DeviceLedger ledger(gpu);
  // 20 % slots, 90 % cores, 50 % memory after the share.
  const PodCharge charge{50, 90, 2, false};
  PodPolicy plain(*set, "binpack", false);
  PodPolicy weighted(*set, "binpack", false, DeviceScoringWeights{1, 1, 3});
  EXPECT_EQ(plain.get().GpuScore(ledger, charge), (20 + 90 + 50) / 3);
  EXPECT_EQ(weighted.get().GpuScore(ledger, charge), (20 + 90 + 150) / 5);
}

// device_test.go TestFit_Topology*: four GPUs, pair scores from
// hami.io/node-nvidia-score; 0-1 and 2-3 are NVLink pairs (100), others
// PCIe (10). Positions are in rank order.
std::vector<Gpu> LinkedGpus() {
  std::vector<Gpu> gpus;
  for (int i = 0; i < 4; ++i) gpus.push_back(MakeGpu("n", i));
  auto link = [&](int a, int b, int score) {
    gpus[a].pair_scores.push_back({gpus[b].uuid, score});
    gpus[b].pair_scores.push_back({gpus[a].uuid, score});
  };
  link(0, 1, 100);
  link(2, 3, 100);
  link(0, 2, 10);
  link(0, 3, 10);
  link(1, 2, 10);
  link(1, 3, 20);
  return gpus;
}

std::vector<GpuCandidate> Ranked(const std::vector<Gpu>& gpus,
                                 std::vector<int> order) {
  std::vector<GpuCandidate> ranked;
  for (int i : order) ranked.push_back({&gpus[i], {}});
  return ranked;
}

TEST(PolicyChainTableTest, HamiTopologyPicks) {
  auto set = PolicySet::Create(BuiltinPolicies(), MakeConfig());
  ASSERT_OK(set);
  const PlacementPolicy& topology = *set->Find(kTopologyPolicyName);
  ASSERT_TRUE(topology.picks_gpus());
  const std::vector<Gpu> gpus = LinkedGpus();
  // "best combination": two GPUs take the best-linked pair, 2-3 ranked
  // after 0-1 but equal, so the first of the tied sets (0-1).
  EXPECT_THAT(topology.PickGpus(Ranked(gpus, {0, 1, 2, 3}), 2),
              ElementsAre(0, 1));
  EXPECT_THAT(topology.PickGpus(Ranked(gpus, {2, 3, 0, 1}), 2),
              ElementsAre(0, 1));  // positions: GPUs 2 and 3
  // Without 0, the best pair among 1, 2, 3 is 2-3.
  EXPECT_THAT(topology.PickGpus(Ranked(gpus, {1, 2, 3}), 2), ElementsAre(1, 2));
  // "worst single card": one GPU takes the least linked to the others:
  // sums 0:120, 1:130, 2:120, 3:130 -> the first of 0 and 2.
  EXPECT_THAT(topology.PickGpus(Ranked(gpus, {0, 1, 2, 3}), 1), ElementsAre(0));
  EXPECT_THAT(topology.PickGpus(Ranked(gpus, {3, 2, 1, 0}), 1),
              ElementsAre(1));  // GPU 2
  // "zero scores": no scores at all, every set ties: the first.
  std::vector<Gpu> plain;
  for (int i = 0; i < 3; ++i) plain.push_back(MakeGpu("n", i));
  EXPECT_THAT(topology.PickGpus(Ranked(plain, {0, 1, 2}), 2),
              ElementsAre(0, 1));
  // "negative scores" count as scores: the pair with the least negative.
  plain[0].pair_scores = {{plain[1].uuid, -50}, {plain[2].uuid, -10}};
  plain[1].pair_scores = {{plain[0].uuid, -50}, {plain[2].uuid, -40}};
  plain[2].pair_scores = {{plain[0].uuid, -10}, {plain[1].uuid, -40}};
  EXPECT_THAT(topology.PickGpus(Ranked(plain, {0, 1, 2}), 2),
              ElementsAre(0, 2));
}

}  // namespace
}  // namespace deviceshare
