// Golden policy tests of the share placement search (backend/
// share_placement.h) through the hami-core backend's Filter and Commit:
// GPU-level binpack and spread, ties, percent memory, exclusivity, split
// count, model/uuid filters, health, mode, multi-GPU containers, numa-bind,
// init containers, failure messages, and purity of Filter.
#include "deviceshare/backend/fractional_share.h"

#include <memory>
#include <string>
#include <vector>

#include "deviceshare/backend/container_placement.h"
#include "deviceshare/config/device_config.h"
#include "deviceshare/hamicore/hamicore_backend.h"
#include "deviceshare/mig/mig_backend.h"
#include "deviceshare/model/node_state.h"
#include "deviceshare/policy/scoring.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::GpuContainer;
using ::deviceshare::testing::MakeGpu;
using ::deviceshare::testing::MakeNode;
using ::deviceshare::testing::MakePod;
using ::testing::AllOf;
using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::SizeIs;
using ::testing::StartsWith;
using ::testing::UnorderedElementsAre;

constexpr int64_t kGiB = 1024;
const PlacementPolicy& kBinpack = BinpackPolicy();
const PlacementPolicy& kSpread = SpreadPolicy();

ContainerRequest InitContainer(const std::string& name, int64_t memory_mib,
                               int cores = 0) {
  ContainerRequest c = GpuContainer(name, 1, memory_mib, cores);
  c.is_init = true;
  return c;
}

// The GPU indices granted to container `c` of `allocation`.
std::vector<int32_t> GpuIndices(const PodAllocation& allocation, size_t c = 0) {
  std::vector<int32_t> indices;
  for (const DeviceGrant& grant : allocation.containers.at(c).devices) {
    indices.push_back(grant.gpu_index);
  }
  return indices;
}

class SharePlacementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto backend = hamicore::NewHamiCoreBackend(DeviceConfig{});
    ASSERT_OK(backend);
    backend_ = *std::move(backend);
  }

  NodeFit Filter(const PodRequest& pod, const NodeState& node,
                 const PlacementPolicy& gpu_policy) const {
    PlacementOptions options;
    options.gpu_policy = &gpu_policy;
    options.node_policy = &gpu_policy;
    return backend_->Filter(pod, node, options);
  }

  // Filter + Commit; the pod must fit.
  PodAllocation Place(const PodRequest& pod, NodeState& node,
                      const PlacementPolicy& gpu_policy) const {
    NodeFit fit = Filter(pod, node, gpu_policy);
    EXPECT_TRUE(fit.fits()) << pod.name << ": " << fit.message;
    if (!fit.fits()) return {};
    EXPECT_OK(backend_->Commit(pod, fit.allocation, node));
    return fit.allocation;
  }

  // Puts a one-container pod of `memory_mib`/`cores` on the GPU `uuid`.
  void PlaceOn(NodeState& node, const std::string& pod_name,
               const std::string& uuid, int64_t memory_mib,
               int cores = 0) const {
    PodRequest pod =
        MakePod(pod_name, {GpuContainer("c", 1, memory_mib, cores)});
    pod.use_uuids = {uuid};
    PodAllocation allocation = Place(pod, node, kBinpack);
    ASSERT_THAT(allocation.containers, SizeIs(1));
    ASSERT_THAT(allocation.containers[0].devices, SizeIs(1));
    ASSERT_EQ(allocation.containers[0].devices[0].uuid, uuid);
  }

  std::unique_ptr<SharingBackend> backend_;
};

// ----------------------------------------------------------------------------
// Spread, binpack, ties, score range

TEST_F(SharePlacementTest, SpreadPutsSuccessivePodsOnDistinctGpus) {
  NodeState node(MakeNode("n1", 4));
  std::vector<int32_t> chosen;
  for (int i = 0; i < 4; ++i) {
    PodAllocation allocation = Place(
        MakePod("p" + std::to_string(i), {GpuContainer("c", 1, 10 * kGiB)}),
        node, kSpread);
    ASSERT_THAT(GpuIndices(allocation), SizeIs(1));
    chosen.push_back(GpuIndices(allocation)[0]);
  }
  // Idle GPUs win over used ones; among idle ones the lower index.
  EXPECT_THAT(chosen, ElementsAre(0, 1, 2, 3));
  for (size_t i = 0; i < node.gpu_count(); ++i) {
    EXPECT_EQ(node.ledger(i).used_slots(), 1) << "gpu " << i;
  }
  // The fifth goes back to GPU 0 (all equal, lowest index).
  PodAllocation fifth =
      Place(MakePod("p4", {GpuContainer("c", 1, 10 * kGiB)}), node, kSpread);
  EXPECT_THAT(GpuIndices(fifth), ElementsAre(0));
}

// Volcano computed the spread score after bumping the tenant count, so it
// was a constant 0. Here an idle GPU must score higher than a used one.
TEST_F(SharePlacementTest, SpreadScoreOfIdleGpuIsHigherThanOfUsedGpu) {
  NodeState node(MakeNode("n1", 2));
  PlaceOn(node, "resident", "GPU-n1-0", 10 * kGiB);
  const PodCharge charge{10 * kGiB, 0, 1, false};
  int used = kSpread.GpuScore(node.ledger(0), charge);
  int idle = kSpread.GpuScore(node.ledger(1), charge);
  // Idle after: memory 10/80 = 12 %, cores 0 %, slots 1/10 = 10 %:
  // utilisation 22/3 = 7, spread 93.
  EXPECT_EQ(idle, 93);
  // Used after: memory 20/80 = 25 %, slots 2/10 = 20 %: 45/3 = 15, spread 85.
  EXPECT_EQ(used, 85);
  EXPECT_GT(idle, used);
  EXPECT_GT(idle, 0);
  // And binpack is the mirror image: 7 and 15.
  EXPECT_EQ(kBinpack.GpuScore(node.ledger(1), charge), 7);
  EXPECT_EQ(kBinpack.GpuScore(node.ledger(0), charge), 15);

  // So Filter under spread avoids the used GPU even though it is index 0.
  NodeFit fit =
      Filter(MakePod("p", {GpuContainer("c", 1, 10 * kGiB)}), node, kSpread);
  ASSERT_TRUE(fit.fits()) << fit.message;
  EXPECT_THAT(GpuIndices(fit.allocation), ElementsAre(1));
}

TEST_F(SharePlacementTest, BinpackStacksOnOneGpuUntilFullThenMovesOn) {
  NodeState node(MakeNode("n1", 4));
  std::vector<int32_t> chosen;
  for (int i = 0; i < 5; ++i) {
    PodAllocation allocation = Place(
        MakePod("p" + std::to_string(i), {GpuContainer("c", 1, 30 * kGiB)}),
        node, kBinpack);
    ASSERT_THAT(GpuIndices(allocation), SizeIs(1));
    chosen.push_back(GpuIndices(allocation)[0]);
  }
  // 80 GiB holds two 30 GiB pods; the third no longer fits GPU 0.
  EXPECT_THAT(chosen, ElementsAre(0, 0, 1, 1, 2));
  EXPECT_EQ(node.ledger(0).used_memory_mib(), 60 * kGiB);
  EXPECT_EQ(node.ledger(1).used_memory_mib(), 60 * kGiB);
  EXPECT_EQ(node.ledger(2).used_memory_mib(), 30 * kGiB);
  EXPECT_TRUE(node.ledger(3).idle());
}

TEST_F(SharePlacementTest, BinpackStacksUntilTheSplitCountThenMovesOn) {
  NodeState node(MakeNode("n1", 2, 80 * kGiB, /*split=*/3));
  std::vector<int32_t> chosen;
  for (int i = 0; i < 4; ++i) {
    PodAllocation allocation =
        Place(MakePod("p" + std::to_string(i), {GpuContainer("c", 1, kGiB)}),
              node, kBinpack);
    chosen.push_back(GpuIndices(allocation).at(0));
  }
  EXPECT_THAT(chosen, ElementsAre(0, 0, 0, 1));
}

TEST_F(SharePlacementTest, TiesGoToTheLowerGpuIndex) {
  NodeState node(MakeNode("n1", 4));
  PodRequest pod = MakePod("p", {GpuContainer("c", 1, 10 * kGiB)});
  EXPECT_THAT(GpuIndices(Filter(pod, node, kBinpack).allocation),
              ElementsAre(0));
  EXPECT_THAT(GpuIndices(Filter(pod, node, kSpread).allocation),
              ElementsAre(0));
  // Equal usage on GPUs 3 and 1 (placed in that order): binpack prefers the
  // used ones, and of those the lower index.
  PlaceOn(node, "r3", "GPU-n1-3", 20 * kGiB);
  PlaceOn(node, "r1", "GPU-n1-1", 20 * kGiB);
  EXPECT_THAT(GpuIndices(Filter(pod, node, kBinpack).allocation),
              ElementsAre(1));
  // Spread prefers the idle ones, the lower index first.
  EXPECT_THAT(GpuIndices(Filter(pod, node, kSpread).allocation),
              ElementsAre(0));
  PlaceOn(node, "r0", "GPU-n1-0", 20 * kGiB);
  EXPECT_THAT(GpuIndices(Filter(pod, node, kSpread).allocation),
              ElementsAre(2));
}

TEST_F(SharePlacementTest, ScoresAreAlwaysWithinZeroAndHundred) {
  NodeState node(MakeNode("n1", 2, 80 * kGiB, /*split=*/4));
  // Extremes: nothing, exactly full, far over capacity.
  const DeviceLedger& idle = node.ledger(0);
  EXPECT_EQ(kBinpack.GpuScore(idle, PodCharge{}), 0);
  EXPECT_EQ(kSpread.GpuScore(idle, PodCharge{}), 100);
  EXPECT_EQ(kBinpack.GpuScore(idle, PodCharge{80 * kGiB, 100, 4, true}), 100);
  EXPECT_EQ(kSpread.GpuScore(idle, PodCharge{80 * kGiB, 100, 4, true}), 0);
  EXPECT_EQ(kBinpack.GpuScore(idle, PodCharge{1000 * kGiB, 900, 40, true}),
            100);
  EXPECT_EQ(kSpread.GpuScore(idle, PodCharge{1000 * kGiB, 900, 40, true}), 0);

  // Node scores while the node fills up: in range, and binpack never drops.
  PlacementOptions binpack{&kBinpack, &kBinpack};
  PlacementOptions spread{&kSpread, &kSpread};
  int last_binpack = -1;
  for (int i = 0;; ++i) {
    PodRequest pod =
        MakePod("p" + std::to_string(i), {GpuContainer("c", 1, 7 * kGiB, 11)});
    NodeFit fit = Filter(pod, node, kBinpack);
    if (!fit.fits()) break;
    int b = backend_->Score(node, fit.allocation, binpack);
    int s = backend_->Score(node, fit.allocation, spread);
    EXPECT_GE(b, 0);
    EXPECT_LE(b, 100);
    EXPECT_GE(s, 0);
    EXPECT_LE(s, 100);
    EXPECT_EQ(b + s, 100);
    EXPECT_GE(b, last_binpack);
    last_binpack = b;
    ASSERT_OK(backend_->Commit(pod, fit.allocation, node));
    ASSERT_LT(i, 100) << "the node never filled up";
  }
  // 4 slots per GPU: 8 pods; 8 x 7 GiB of 160, 8 x 11 of 200, 8 of 8 slots:
  // (35 + 44 + 100) / 3 = 59.
  EXPECT_EQ(node.ledger(0).used_slots() + node.ledger(1).used_slots(), 8);
  EXPECT_EQ(last_binpack, 59);
}

// ----------------------------------------------------------------------------
// Memory amounts

TEST_F(SharePlacementTest, PercentMemoryIsAShareOfTheCard) {
  NodeState node(MakeNode("n1", 1));
  ContainerRequest half = GpuContainer("c", 1, 0);
  half.memory_percent = 50;
  NodeFit fit = Filter(MakePod("p", {half}), node, kBinpack);
  ASSERT_TRUE(fit.fits()) << fit.message;
  ASSERT_THAT(fit.allocation.containers[0].devices, SizeIs(1));
  EXPECT_EQ(fit.allocation.containers[0].devices[0].memory_mib, 40960);
}

TEST_F(SharePlacementTest, PercentMemoryOnMixedSizeGpusIsPerCard) {
  NodeInventory inventory;
  inventory.name = "n1";
  inventory.gpus = {MakeGpu("n1", 0, 80 * kGiB), MakeGpu("n1", 1, 40 * kGiB),
                    MakeGpu("n1", 2, 24 * kGiB)};
  NodeState node(inventory);
  ContainerRequest quarter = GpuContainer("c", 3, 0);
  quarter.memory_percent = 25;
  PodAllocation allocation = Place(MakePod("p", {quarter}), node, kBinpack);
  ASSERT_THAT(allocation.containers, SizeIs(1));
  std::vector<std::pair<std::string, int64_t>> grants;
  for (const DeviceGrant& g : allocation.containers[0].devices) {
    grants.emplace_back(g.uuid, g.memory_mib);
  }
  EXPECT_THAT(grants, UnorderedElementsAre(
                          std::pair<std::string, int64_t>("GPU-n1-0", 20480),
                          std::pair<std::string, int64_t>("GPU-n1-1", 10240),
                          std::pair<std::string, int64_t>("GPU-n1-2", 6144)));
  EXPECT_EQ(node.ledger(0).used_memory_mib(), 20480);
  EXPECT_EQ(node.ledger(1).used_memory_mib(), 10240);
  EXPECT_EQ(node.ledger(2).used_memory_mib(), 6144);
}

TEST_F(SharePlacementTest, NoMemoryAndNoPercentMeansTheWholeCard) {
  NodeState node(MakeNode("n1", 2));
  PlaceOn(node, "r", "GPU-n1-0", 1);
  NodeFit fit = Filter(MakePod("p", {GpuContainer("c", 1, 0)}), node, kBinpack);
  ASSERT_TRUE(fit.fits()) << fit.message;
  // GPU 0 has 1 MiB taken, so only GPU 1 can take a whole card.
  ASSERT_THAT(fit.allocation.containers[0].devices, SizeIs(1));
  EXPECT_EQ(fit.allocation.containers[0].devices[0].uuid, "GPU-n1-1");
  EXPECT_EQ(fit.allocation.containers[0].devices[0].memory_mib, 81920);
}

// ----------------------------------------------------------------------------
// Exclusivity and split count

TEST_F(SharePlacementTest, ExclusiveCoresTakeAnEmptyGpuOnly) {
  NodeState node(MakeNode("n1", 2));
  PlaceOn(node, "r", "GPU-n1-0", 1 * kGiB, 10);
  // Binpack would prefer the used GPU 0; exclusivity forces GPU 1.
  PodRequest exclusive = MakePod("x", {GpuContainer("c", 1, 10 * kGiB, 100)});
  PodAllocation allocation = Place(exclusive, node, kBinpack);
  EXPECT_THAT(GpuIndices(allocation), ElementsAre(1));
  EXPECT_TRUE(node.ledger(1).held_exclusively());

  // Now no GPU is empty: another exclusive pod does not fit.
  NodeFit fit = Filter(MakePod("y", {GpuContainer("c", 1, 10 * kGiB, 100)}),
                       node, kBinpack);
  EXPECT_EQ(fit.code, ReasonCode::kExclusiveConflict);
  EXPECT_THAT(fit.message, StartsWith("ExclusiveConflict gpu=GPU-n1-0"));
  EXPECT_THAT(fit.gpu_verdicts,
              Each(Field(&GpuVerdict::code, ReasonCode::kExclusiveConflict)));

  // A small pod avoids the exclusively held GPU 1 even under spread.
  NodeFit small =
      Filter(MakePod("s", {GpuContainer("c", 1, kGiB)}), node, kSpread);
  ASSERT_TRUE(small.fits()) << small.message;
  EXPECT_THAT(GpuIndices(small.allocation), ElementsAre(0));
}

TEST_F(SharePlacementTest, SplitCountCapsTenants) {
  NodeState node(MakeNode("n1", 1, 80 * kGiB, /*split=*/3));
  for (int i = 0; i < 3; ++i) {
    Place(MakePod("p" + std::to_string(i), {GpuContainer("c", 1, kGiB)}), node,
          kBinpack);
  }
  NodeFit fit =
      Filter(MakePod("p3", {GpuContainer("c", 1, kGiB)}), node, kBinpack);
  EXPECT_EQ(fit.code, ReasonCode::kSplitExhausted);
  EXPECT_THAT(fit.message, StartsWith("SplitExhausted gpu=GPU-n1-0 "
                                      "tenants=3 split=3 want=1"));
}

// ----------------------------------------------------------------------------
// Filters: model, uuid, health, mode

TEST_F(SharePlacementTest, ModelAllowAndDenyListsAreCaseInsensitiveSubstrings) {
  NodeInventory inventory = MakeNode("n1", 2);
  inventory.gpus[0].model = "NVIDIA H100 80GB HBM3";
  NodeState node(inventory);  // GPU 1 stays "NVIDIA-NVIDIA A100-SXM4-80GB"

  PodRequest pod = MakePod("p", {GpuContainer("c", 1, kGiB)});
  pod.use_models = {"a100"};
  NodeFit fit = Filter(pod, node, kBinpack);
  ASSERT_TRUE(fit.fits()) << fit.message;
  EXPECT_THAT(GpuIndices(fit.allocation), ElementsAre(1));

  pod.use_models = {};
  pod.avoid_models = {"H100"};
  fit = Filter(pod, node, kBinpack);
  ASSERT_TRUE(fit.fits()) << fit.message;
  EXPECT_THAT(GpuIndices(fit.allocation), ElementsAre(1));

  pod.avoid_models = {"nvidia"};  // matches both
  fit = Filter(pod, node, kBinpack);
  EXPECT_EQ(fit.code, ReasonCode::kTypeMismatch);
  EXPECT_THAT(fit.message, StartsWith("TypeMismatch gpu=GPU-n1-0"));
  EXPECT_THAT(fit.message, HasSubstr("2/2 TypeMismatch"));

  pod.avoid_models = {};
  pod.use_models = {"V100", "T4"};
  fit = Filter(pod, node, kBinpack);
  EXPECT_EQ(fit.code, ReasonCode::kTypeMismatch);

  // Allowed by the allow list, then denied by the deny list.
  pod.use_models = {"80GB"};
  pod.avoid_models = {"sxm4"};
  fit = Filter(pod, node, kBinpack);
  ASSERT_TRUE(fit.fits()) << fit.message;
  EXPECT_THAT(GpuIndices(fit.allocation), ElementsAre(0));
}

TEST_F(SharePlacementTest, UuidAllowAndDenyListsAreExactAndDenyWins) {
  NodeState node(MakeNode("n1", 4));
  PodRequest pod = MakePod("p", {GpuContainer("c", 1, kGiB)});

  pod.use_uuids = {"GPU-n1-2"};
  NodeFit fit = Filter(pod, node, kBinpack);
  ASSERT_TRUE(fit.fits()) << fit.message;
  EXPECT_THAT(GpuIndices(fit.allocation), ElementsAre(2));

  pod.use_uuids = {"GPU-n1-1", "GPU-n1-3"};
  pod.avoid_uuids = {"GPU-n1-1"};
  fit = Filter(pod, node, kBinpack);
  ASSERT_TRUE(fit.fits()) << fit.message;
  EXPECT_THAT(GpuIndices(fit.allocation), ElementsAre(3));

  pod.use_uuids = {"GPU-n1-1"};
  pod.avoid_uuids = {"GPU-n1-1"};
  fit = Filter(pod, node, kBinpack);
  EXPECT_EQ(fit.code, ReasonCode::kUuidMismatch);
  EXPECT_THAT(fit.message, StartsWith("UuidMismatch gpu=GPU-n1-0"));
  EXPECT_THAT(fit.message, HasSubstr("4/4 UuidMismatch"));

  // Exact, not a substring: "GPU-n1" names no GPU.
  pod.use_uuids = {"GPU-n1"};
  pod.avoid_uuids = {};
  EXPECT_EQ(Filter(pod, node, kBinpack).code, ReasonCode::kUuidMismatch);

  pod.use_uuids = {};
  pod.avoid_uuids = {"GPU-n1-0", "GPU-n1-1"};
  fit = Filter(pod, node, kBinpack);
  ASSERT_TRUE(fit.fits()) << fit.message;
  EXPECT_THAT(GpuIndices(fit.allocation), ElementsAre(2));
}

TEST_F(SharePlacementTest, UnhealthyGpuIsNeverChosen) {
  NodeInventory inventory = MakeNode("n1", 2);
  inventory.gpus[0].healthy = false;
  NodeState node(inventory);
  // Spread and binpack would both pick GPU 0 on an idle node.
  for (const PlacementPolicy* policy : {&kBinpack, &kSpread}) {
    NodeFit fit =
        Filter(MakePod("p", {GpuContainer("c", 1, kGiB)}), node, *policy);
    ASSERT_TRUE(fit.fits()) << fit.message;
    EXPECT_THAT(GpuIndices(fit.allocation), ElementsAre(1));
  }
  NodeFit two =
      Filter(MakePod("p", {GpuContainer("c", 2, kGiB)}), node, kBinpack);
  EXPECT_EQ(two.code, ReasonCode::kInsufficientGpus);
  EXPECT_THAT(two.message, HasSubstr("want=2 usable=1"));
  ASSERT_THAT(two.gpu_verdicts, SizeIs(1));
  EXPECT_EQ(two.gpu_verdicts[0].code, ReasonCode::kGpuUnhealthy);
  EXPECT_EQ(two.gpu_verdicts[0].gpu_index, 0);

  NodeInventory single = MakeNode("n2", 1);
  single.gpus[0].healthy = false;
  NodeFit fit = Filter(MakePod("p", {GpuContainer("c", 1, kGiB)}),
                       NodeState(single), kBinpack);
  EXPECT_EQ(fit.code, ReasonCode::kGpuUnhealthy);
  EXPECT_THAT(fit.message, StartsWith("GpuUnhealthy gpu=GPU-n2-0"));
}

TEST_F(SharePlacementTest, GpuInMigModeIsAModeMismatchForHamiCore) {
  NodeInventory inventory = MakeNode("n1", 2);
  inventory.gpus[0].mode = mig::kMode;
  NodeState node(inventory);
  NodeFit fit =
      Filter(MakePod("p", {GpuContainer("c", 1, kGiB)}), node, kBinpack);
  ASSERT_TRUE(fit.fits()) << fit.message;
  EXPECT_THAT(GpuIndices(fit.allocation), ElementsAre(1));
  EXPECT_EQ(fit.allocation.containers[0].devices[0].mode, hamicore::kMode);

  inventory.gpus[1].mode = mig::kMode;
  NodeState all_mig(inventory);
  fit = Filter(MakePod("p", {GpuContainer("c", 1, kGiB)}), all_mig, kBinpack);
  EXPECT_EQ(fit.code, ReasonCode::kModeMismatch);
  EXPECT_THAT(fit.message, StartsWith("ModeMismatch gpu=GPU-n1-0"));
  EXPECT_THAT(fit.message, HasSubstr("gpu mode=mig want=hami-core"));
}

TEST_F(SharePlacementTest, PodThatInsistsOnAnotherModeIsAModeMismatch) {
  NodeState node(MakeNode("n1", 2));
  PodRequest pod = MakePod("p", {GpuContainer("c", 1, kGiB)});
  pod.mode = mig::kMode;
  NodeFit fit = Filter(pod, node, kBinpack);
  EXPECT_EQ(fit.code, ReasonCode::kModeMismatch);
  EXPECT_THAT(fit.message, StartsWith("ModeMismatch"));
  pod.mode = hamicore::kMode;
  EXPECT_TRUE(Filter(pod, node, kBinpack).fits());
}

// ----------------------------------------------------------------------------
// Multi-GPU containers and NUMA

TEST_F(SharePlacementTest, MultiGpuContainerGetsDistinctGpus) {
  NodeState node(MakeNode("n1", 4));
  PlaceOn(node, "r", "GPU-n1-2", 20 * kGiB);
  PodAllocation allocation = Place(
      MakePod("p", {GpuContainer("c", 2, 10 * kGiB, 30)}), node, kBinpack);
  // Binpack: the used GPU 2 first, then the lowest idle index.
  EXPECT_THAT(GpuIndices(allocation), UnorderedElementsAre(0, 2));
  for (const DeviceGrant& grant : allocation.containers.at(0).devices) {
    EXPECT_EQ(grant.memory_mib, 10 * kGiB);
    EXPECT_EQ(grant.cores, 30);
    EXPECT_EQ(grant.uuid, "GPU-n1-" + std::to_string(grant.gpu_index));
  }
  EXPECT_EQ(node.ledger(2).used_memory_mib(), 30 * kGiB);
  EXPECT_EQ(node.ledger(0).used_memory_mib(), 10 * kGiB);

  // All four: each GPU exactly once.
  NodeFit four =
      Filter(MakePod("q", {GpuContainer("c", 4, kGiB)}), node, kSpread);
  ASSERT_TRUE(four.fits()) << four.message;
  EXPECT_THAT(GpuIndices(four.allocation), UnorderedElementsAre(0, 1, 2, 3));
}

TEST_F(SharePlacementTest, MultiGpuContainerFailsWhenTooFewGpusAreUsable) {
  NodeState node(MakeNode("n1", 4));
  PlaceOn(node, "r0", "GPU-n1-0", 75 * kGiB);
  PlaceOn(node, "r1", "GPU-n1-1", 75 * kGiB);
  NodeFit fit =
      Filter(MakePod("p", {GpuContainer("c", 3, 10 * kGiB)}), node, kBinpack);
  EXPECT_EQ(fit.code, ReasonCode::kInsufficientGpus);
  EXPECT_THAT(fit.message, StartsWith("InsufficientGpus container=c want=3 "
                                      "usable=2"));
  EXPECT_THAT(fit.message, HasSubstr("2/4 InsufficientMemory"));
  EXPECT_THAT(fit.gpu_verdicts, SizeIs(2));

  // More GPUs than the node has at all.
  fit = Filter(MakePod("p", {GpuContainer("c", 5, kGiB)}), node, kBinpack);
  EXPECT_EQ(fit.code, ReasonCode::kInsufficientGpus);
  EXPECT_THAT(fit.message, HasSubstr("want=5 gpus=4"));

  // Two still fit.
  NodeFit two =
      Filter(MakePod("p", {GpuContainer("c", 2, 10 * kGiB)}), node, kBinpack);
  ASSERT_TRUE(two.fits()) << two.message;
  EXPECT_THAT(GpuIndices(two.allocation), UnorderedElementsAre(2, 3));
}

TEST_F(SharePlacementTest, NumaBindKeepsAContainerOnOneNumaNode) {
  // GPUs 0-3 on NUMA 0, 4-7 on NUMA 1.
  NodeState node(MakeNode("n1", 8, 80 * kGiB, 10, /*two_numa=*/true));
  ASSERT_EQ(node.inventory().gpus[3].numa_node, 0);
  ASSERT_EQ(node.inventory().gpus[4].numa_node, 1);
  PlaceOn(node, "r0", "GPU-n1-0", 40 * kGiB);
  PlaceOn(node, "r1", "GPU-n1-1", 40 * kGiB);
  PlaceOn(node, "r4", "GPU-n1-4", 50 * kGiB);
  PlaceOn(node, "r5", "GPU-n1-5", 50 * kGiB);

  // Binpack scores with +10 GiB: GPUs 4,5 -> 31, GPUs 0,1 -> 27, idle -> 7.
  PodRequest pod = MakePod("p", {GpuContainer("c", 4, 10 * kGiB)});
  NodeFit plain = Filter(pod, node, kBinpack);
  ASSERT_TRUE(plain.fits()) << plain.message;
  // Without numa-bind the four best straddle both NUMA nodes.
  EXPECT_THAT(GpuIndices(plain.allocation), UnorderedElementsAre(0, 1, 4, 5));

  pod.numa_bind = true;
  NodeFit bound = Filter(pod, node, kBinpack);
  ASSERT_TRUE(bound.fits()) << bound.message;
  // NUMA 1 sums 31+31+7+7 = 76 > NUMA 0's 27+27+7+7 = 68.
  EXPECT_THAT(GpuIndices(bound.allocation), UnorderedElementsAre(4, 5, 6, 7));

  // Under spread the emptier NUMA node wins: NUMA 0 (less used).
  NodeFit spread = Filter(pod, node, kSpread);
  ASSERT_TRUE(spread.fits()) << spread.message;
  EXPECT_THAT(GpuIndices(spread.allocation), UnorderedElementsAre(0, 1, 2, 3));
}

TEST_F(SharePlacementTest, NumaBindFailsWhenNoNumaNodeHasEnoughGpus) {
  NodeInventory inventory = MakeNode("n1", 8, 80 * kGiB, 10, /*two_numa=*/true);
  for (int i : {0, 1, 4, 5}) inventory.gpus[i].healthy = false;
  NodeState node(inventory);
  PodRequest pod = MakePod("p", {GpuContainer("c", 3, 10 * kGiB)});
  // Four usable GPUs, two per NUMA node: fine without numa-bind.
  NodeFit plain = Filter(pod, node, kBinpack);
  ASSERT_TRUE(plain.fits()) << plain.message;
  EXPECT_THAT(GpuIndices(plain.allocation), UnorderedElementsAre(2, 3, 6));

  pod.numa_bind = true;
  NodeFit fit = Filter(pod, node, kBinpack);
  EXPECT_EQ(fit.code, ReasonCode::kNumaNotFit);
  EXPECT_THAT(fit.message, StartsWith("NumaNotFit container=c want=3 "
                                      "usable=4"));
  // Two GPUs fit within one NUMA node.
  pod.containers[0].gpu_count = 2;
  NodeFit two = Filter(pod, node, kBinpack);
  ASSERT_TRUE(two.fits()) << two.message;
  EXPECT_THAT(GpuIndices(two.allocation), UnorderedElementsAre(2, 3));
}

// ----------------------------------------------------------------------------
// Several containers per pod

TEST_F(SharePlacementTest, InitAndAppContainerChargeTheMaxNotTheSum) {
  NodeState node(MakeNode("n1", 1));
  PodRequest pod = MakePod("p", {InitContainer("init", 60 * kGiB),
                                 GpuContainer("app", 1, 40 * kGiB)});
  PodAllocation allocation = Place(pod, node, kBinpack);
  ASSERT_THAT(allocation.containers, SizeIs(2));
  EXPECT_TRUE(allocation.containers[0].is_init);
  EXPECT_THAT(GpuIndices(allocation, 0), ElementsAre(0));
  EXPECT_THAT(GpuIndices(allocation, 1), ElementsAre(0));
  EXPECT_EQ(node.ledger(0).used_memory_mib(), 60 * kGiB);
  EXPECT_EQ(node.ledger(0).used_slots(), 1);

  // The same amounts as two app containers do not fit on one card.
  NodeState other(MakeNode("n2", 1));
  NodeFit fit = Filter(MakePod("q", {GpuContainer("a", 1, 60 * kGiB),
                                     GpuContainer("b", 1, 40 * kGiB)}),
                       other, kBinpack);
  EXPECT_EQ(fit.code, ReasonCode::kInsufficientMemory);
  EXPECT_THAT(fit.message,
              StartsWith("InsufficientMemory gpu=GPU-n2-0 free=81920MiB "
                         "want=102400MiB container=b"));
}

TEST_F(SharePlacementTest, TwoAppContainersShareAGpuAndTakeASlotEach) {
  NodeState node(MakeNode("n1", 1, 80 * kGiB, /*split=*/3));
  PodAllocation allocation =
      Place(MakePod("p", {GpuContainer("a", 1, 10 * kGiB, 20),
                          GpuContainer("b", 1, 15 * kGiB, 30)}),
            node, kBinpack);
  EXPECT_THAT(GpuIndices(allocation, 0), ElementsAre(0));
  EXPECT_THAT(GpuIndices(allocation, 1), ElementsAre(0));
  EXPECT_EQ(node.ledger(0).used_slots(), 2);
  EXPECT_EQ(node.ledger(0).used_memory_mib(), 25 * kGiB);
  EXPECT_EQ(node.ledger(0).used_cores(), 50);
  EXPECT_EQ(node.ledger(0).pod_count(), 1u);
  // One slot left: a two-container pod no longer fits.
  NodeFit fit = Filter(
      MakePod("q", {GpuContainer("a", 1, kGiB), GpuContainer("b", 1, kGiB)}),
      node, kBinpack);
  EXPECT_EQ(fit.code, ReasonCode::kSplitExhausted);
  EXPECT_THAT(fit.message, StartsWith("SplitExhausted gpu=GPU-n1-0 tenants=2 "
                                      "split=3 want=2 container=b"));
}

TEST_F(SharePlacementTest, ContainerWithoutGpusGetsAnEmptyEntry) {
  NodeState node(MakeNode("n1", 1));
  ContainerRequest sidecar;
  sidecar.name = "sidecar";
  PodAllocation allocation = Place(
      MakePod("p", {sidecar, GpuContainer("app", 1, kGiB)}), node, kBinpack);
  ASSERT_THAT(allocation.containers, SizeIs(2));
  EXPECT_EQ(allocation.containers[0].name, "sidecar");
  EXPECT_THAT(allocation.containers[0].devices, SizeIs(0));
  EXPECT_EQ(allocation.containers[1].container_index, 1);
  EXPECT_EQ(allocation.node_name, "n1");
  EXPECT_EQ(allocation.pod_uid, "uid-p");
  EXPECT_EQ(allocation.pod_key, "default/p");
}

// ----------------------------------------------------------------------------
// Messages and purity

TEST_F(SharePlacementTest, FailureMessageStartsWithCodeAndNamesGpuAndNumbers) {
  NodeState node(MakeNode("n1", 2));
  PlaceOn(node, "r0", "GPU-n1-0", 70000);
  PlaceOn(node, "r1", "GPU-n1-1", 70000);
  NodeFit fit =
      Filter(MakePod("p", {GpuContainer("main", 1, 20000)}), node, kBinpack);
  EXPECT_FALSE(fit.fits());
  EXPECT_EQ(fit.code, ReasonCode::kInsufficientMemory);
  EXPECT_THAT(fit.message, AllOf(StartsWith("InsufficientMemory gpu=GPU-n1-0 "
                                            "free=11920MiB want=20000MiB"),
                                 HasSubstr("container=main"),
                                 HasSubstr("2/2 InsufficientMemory")));
  ASSERT_THAT(fit.gpu_verdicts, SizeIs(2));
  EXPECT_EQ(fit.gpu_verdicts[0].gpu_index, 0);
  EXPECT_EQ(fit.gpu_verdicts[1].gpu_index, 1);
  EXPECT_THAT(fit.gpu_verdicts,
              Each(Field(&GpuVerdict::code, ReasonCode::kInsufficientMemory)));
}

TEST_F(SharePlacementTest, HeadlineIsTheMostFrequentReason) {
  NodeInventory inventory = MakeNode("n1", 3);
  inventory.gpus[0].healthy = false;
  NodeState node(inventory);
  PlaceOn(node, "r1", "GPU-n1-1", 70 * kGiB);
  PlaceOn(node, "r2", "GPU-n1-2", 70 * kGiB);
  NodeFit fit =
      Filter(MakePod("p", {GpuContainer("c", 1, 20 * kGiB)}), node, kBinpack);
  EXPECT_EQ(fit.code, ReasonCode::kInsufficientMemory);
  EXPECT_THAT(fit.message,
              AllOf(StartsWith("InsufficientMemory gpu=GPU-n1-1 "
                               "free=10240MiB want=20480MiB"),
                    HasSubstr("2/3 InsufficientMemory, 1/3 GpuUnhealthy")));
}

TEST_F(SharePlacementTest, FilterNeverMutatesTheNode) {
  NodeState node(MakeNode("n1", 4, 80 * kGiB, 10, /*two_numa=*/true));
  PlaceOn(node, "r0", "GPU-n1-0", 30 * kGiB, 40);
  PlaceOn(node, "r3", "GPU-n1-3", 70 * kGiB, 10);
  const NodeState before = node;

  std::vector<PodRequest> pods = {
      MakePod("fits", {GpuContainer("c", 1, 10 * kGiB, 10)}),
      MakePod("multi", {InitContainer("i", 50 * kGiB),
                        GpuContainer("a", 2, 5 * kGiB, 10),
                        GpuContainer("b", 1, 5 * kGiB, 10)}),
      MakePod("too-big", {GpuContainer("c", 1, 90 * kGiB)}),
      MakePod("exclusive", {GpuContainer("c", 4, 0, 100)}),
  };
  PodRequest numa = MakePod("numa", {GpuContainer("c", 2, kGiB)});
  numa.numa_bind = true;
  pods.push_back(numa);

  int fitted = 0;
  for (const PodRequest& pod : pods) {
    for (const PlacementPolicy* policy : {&kBinpack, &kSpread}) {
      NodeFit fit = Filter(pod, node, *policy);
      if (fit.fits()) ++fitted;
      for (size_t i = 0; i < node.gpu_count(); ++i) {
        EXPECT_TRUE(node.ledger(i) == before.ledger(i))
            << pod.name << " changed gpu " << i;
      }
      EXPECT_FALSE(node.ledger(1).HasPod(pod.uid));
    }
  }
  EXPECT_EQ(fitted, 6);  // fits, multi, numa under both policies
  EXPECT_EQ(node.used_cpu_milli(), before.used_cpu_milli());
  EXPECT_EQ(node.used_memory_mib(), before.used_memory_mib());
  EXPECT_OK(node.CheckInvariants());
}

TEST_F(SharePlacementTest, CommitChargesExactlyWhatFilterReturned) {
  NodeState node(MakeNode("n1", 2));
  PodRequest pod = MakePod("p", {InitContainer("i", 30 * kGiB, 50),
                                 GpuContainer("a", 2, 10 * kGiB, 20)});
  NodeFit fit = Filter(pod, node, kBinpack);
  ASSERT_TRUE(fit.fits()) << fit.message;
  ASSERT_OK(backend_->Commit(pod, fit.allocation, node));
  // Binpack: init on GPU 0; the app container's first GPU is GPU 0 again
  // (max(30, 10) keeps it fullest), the second GPU 1.
  EXPECT_THAT(GpuIndices(fit.allocation, 0), ElementsAre(0));
  EXPECT_THAT(GpuIndices(fit.allocation, 1), UnorderedElementsAre(0, 1));
  EXPECT_EQ(node.ledger(0).used_memory_mib(), 30 * kGiB);
  EXPECT_EQ(node.ledger(0).used_cores(), 50);
  EXPECT_EQ(node.ledger(1).used_memory_mib(), 10 * kGiB);
  EXPECT_EQ(node.ledger(1).used_cores(), 20);
  EXPECT_OK(node.CheckInvariants());

  backend_->Release(pod.uid, node);
  EXPECT_TRUE(node.ledger(0).idle());
  EXPECT_TRUE(node.ledger(1).idle());
  backend_->Release(pod.uid, node);  // idempotent
  EXPECT_OK(node.CheckInvariants());
}

}  // namespace
}  // namespace deviceshare
