// GpuBrief (model/gpu_brief.h) and the checks that read briefs instead of
// ledgers (backend/fractional_share.cc): over random nodes and pods, the
// code a node gives without text (PlaceSharesCode, what counting a failed
// pod's reasons asks) equals the code of the full search with text, which
// reads the ledgers; MaySharesFit equals the same per-GPU checks made on
// the ledgers through their public API; a node none of whose GPUs takes a
// share gives every pod its blocked code (SharesBlockedCode); and every brief
// stays equal to its ledger's (NodeState::CheckInvariants) through commits and
// releases.
#include "deviceshare/model/gpu_brief.h"

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "deviceshare/backend/container_placement.h"
#include "deviceshare/backend/fractional_share.h"
#include "deviceshare/config/device_config.h"
#include "deviceshare/hamicore/hamicore_backend.h"
#include "deviceshare/model/node_state.h"
#include "deviceshare/policy/scoring.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::GpuContainer;
using ::deviceshare::testing::MakeGpu;
using ::deviceshare::testing::MakePod;

constexpr SharingMode kMps("mps");

// A node of 8 GPUs with random split counts; some GPUs unhealthy or
// cordoned; with `mixed`, one GPU runs another mode (the briefs then do
// not answer and the ledgers do).
NodeInventory RandomNode(std::mt19937_64& random, bool mixed) {
  NodeInventory inventory;
  inventory.name = "node";
  for (int i = 0; i < 8; ++i) {
    Gpu gpu = MakeGpu("node", i, 40960 + 40960 * (random() % 2),
                      1 + static_cast<int>(random() % 6));
    gpu.healthy = random() % 10 != 0;
    gpu.cordoned = random() % 12 == 0;
    if (mixed && i == 3) gpu.mode = kMps;
    inventory.gpus.push_back(gpu);
  }
  return inventory;
}

// A pod of one GPU container: a share (memory fixed or a percent of the
// card, cores 0..100 in steps of 10), sometimes an init container, asking
// 1..3 GPUs.
PodRequest RandomPod(std::mt19937_64& random, int n) {
  ContainerRequest container = GpuContainer(
      "c", 1 + static_cast<int>(random() % 3),
      random() % 3 == 0 ? 0 : 1024 * (1 + random() % 60),
      random() % 3 == 0 ? 100 : static_cast<int>(10 * (random() % 11)));
  if (container.memory_mib == 0) {
    container.memory_percent = 10 * (1 + static_cast<int>(random() % 10));
  }
  container.is_init = random() % 8 == 0;
  return MakePod("p" + std::to_string(n), {container});
}

// AloneCode through the ledger's public API: eligibility, the tenant
// limit, then the ledger's check of the share alone.
ReasonCode LedgerAloneCode(const PodRequest& pod,
                           const ContainerRequest& container,
                           const DeviceLedger& ledger, SharingMode mode,
                           const TenantLimit& limit) {
  ReasonCode code = EligibilityCode(pod, ledger.gpu(), mode);
  if (code != ReasonCode::kFits) return code;
  code = TenantLimitCode(limit, ledger, 1);
  if (code != ReasonCode::kFits) return code;
  ContainerShare share;
  share.container_index = 0;
  share.is_init = container.is_init;
  share.memory_mib = container.MemoryOn(ledger.memory_capacity_mib());
  share.cores = container.cores;
  return ledger.CheckPodCode(absl::MakeConstSpan(&share, 1));
}

bool LedgerMayFit(const PodRequest& pod, const NodeState& node,
                  SharingMode mode, const TenantLimit& limit) {
  const ContainerRequest& container = pod.containers.front();
  int usable = 0;
  for (size_t pos = 0; pos < node.gpu_count(); ++pos) {
    if (LedgerAloneCode(pod, container, node.ledger(pos), mode, limit) ==
        ReasonCode::kFits) {
      ++usable;
    }
  }
  return usable >= container.gpu_count;
}

class GpuBriefTest : public ::testing::TestWithParam<bool> {};

TEST_P(GpuBriefTest, BriefChecksAgreeWithLedgerChecks) {
  const bool mixed = GetParam();
  std::mt19937_64 random(mixed ? 17 : 5);
  const TenantLimit limits[] = {
      TenantLimit{},
      TenantLimit{3, ReasonCode::kSplitExhausted, "clients"},
  };
  const PlacementPolicy& binpack = BinpackPolicy();
  int compared = 0;
  int fitted = 0;
  int blocked_nodes = 0;
  for (int round = 0; round < 60; ++round) {
    NodeState node(RandomNode(random, mixed));
    for (int n = 0; n < 40; ++n) {
      const PodRequest pod = RandomPod(random, n);
      const TenantLimit& limit = limits[random() % 2];
      const ReasonCode quiet =
          PlaceSharesCode(pod, node, kDefaultSharingMode, binpack, limit);
      NodeFit full = PlaceShares(pod, node, kDefaultSharingMode, binpack,
                                 /*explain=*/true, limit);
      ASSERT_EQ(quiet, full.code)
          << "round " << round << " pod " << n << ": " << full.Reason();
      ASSERT_EQ(MaySharesFit(pod, node, kDefaultSharingMode, limit),
                LedgerMayFit(pod, node, kDefaultSharingMode, limit))
          << "round " << round << " pod " << n;
      ++compared;
      // A node none of whose GPUs takes any share gives every pod the
      // blocked code the index keeps beside it.
      const ReasonCode blocked = SharesBlockedCode(node, kDefaultSharingMode);
      if (blocked != ReasonCode::kFits && limit.max_tenants == 0 &&
          SharesBlockedCodeApplies(pod, kDefaultSharingMode) &&
          pod.containers.front().gpu_count <= 8) {
        ASSERT_EQ(blocked, full.code) << "round " << round << " pod " << n;
        ++blocked_nodes;
      }
      if (full.fits() && !pod.containers.front().is_init) {
        ASSERT_OK(
            CommitShares(pod, full.allocation, kDefaultSharingMode, node));
        ++fitted;
      }
      ASSERT_OK(node.CheckInvariants());
      if (random() % 4 == 0 && n > 0) {
        ReleaseShares("uid-p" + std::to_string(random() % n),
                      kDefaultSharingMode, node);
        ASSERT_OK(node.CheckInvariants());
      }
    }
  }
  // Both verdicts were met often enough to mean something.
  EXPECT_GT(fitted, compared / 5);
  EXPECT_LT(fitted, compared * 4 / 5);
  // A node of mixed modes has no blocked code (its GPUs are read).
  if (mixed) {
    EXPECT_EQ(blocked_nodes, 0);
  } else {
    EXPECT_GT(blocked_nodes, 20);
  }
}

INSTANTIATE_TEST_SUITE_P(UniformAndMixedModes, GpuBriefTest, ::testing::Bool());

TEST(GpuBriefOfTest, CopiesTheLedgersFiguresAndFlags) {
  Gpu gpu = MakeGpu("n", 0, 81920, 4);
  gpu.cordoned = true;
  DeviceLedger ledger(gpu);
  ContainerShare share;
  share.memory_mib = 10240;
  share.cores = 100;
  ASSERT_OK(ledger.AddPod("a", {share}));
  const GpuBrief brief = GpuBrief::Of(ledger);
  EXPECT_EQ(brief.free_memory_mib, 81920 - 10240);
  EXPECT_EQ(brief.memory_capacity_mib, 81920);
  EXPECT_EQ(brief.free_cores, 0);
  EXPECT_EQ(brief.used_slots, 1);
  EXPECT_EQ(brief.slot_capacity, 4);
  EXPECT_EQ(brief.flags, GpuBrief::kCordoned | GpuBrief::kHeldExclusively |
                             GpuBrief::kHasPods | GpuBrief::kExclusiveByCores);
  EXPECT_TRUE(brief.complete());
}

TEST(GpuBriefOfTest, AFigureBeyond32BitsMarksTheBriefIncomplete) {
  Gpu gpu = MakeGpu("n", 0, int64_t{1} << 40);
  const GpuBrief brief = GpuBrief::Of(DeviceLedger(gpu));
  EXPECT_FALSE(brief.complete());
}

}  // namespace
}  // namespace deviceshare
