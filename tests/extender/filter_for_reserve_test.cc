// Scheduler::FilterForReserve, the filter step /filter runs: the same
// verdicts as Filter() however the state moved, and the reserve step that
// follows places the pod on the best fitting node with the allocation a
// fresh filter of that node finds.
#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "deviceshare/backend/backend_registry.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/scheduler/scheduler.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/verdict_order.h"

namespace deviceshare {
namespace {

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
    EXPECT_EQ(got[i].fit.message, want[i].fit.message);
    EXPECT_EQ(got[i].fit.gpu_verdicts.size(), want[i].fit.gpu_verdicts.size());
    EXPECT_EQ(got[i].score, want[i].score);
    EXPECT_EQ(got[i].stranded_percent, want[i].stranded_percent);
    EXPECT_EQ(got[i].mode, want[i].mode);
    EXPECT_EQ(got[i].mode_choice, want[i].mode_choice);
    // Like Filter(), it hands out no allocation.
    EXPECT_TRUE(got[i].fit.allocation.node_name.empty());
  }
}

TEST(FilterForReserveTest, AgreesWithFilterAndReservesTheBestAcrossChanges) {
  BackendRegistry registry;
  ASSERT_TRUE(RegisterBuiltinBackends(registry).ok());
  auto scheduler = Scheduler::Create(MakeConfig(), registry);
  ASSERT_TRUE(scheduler.ok());
  Scheduler& s = **scheduler;
  std::vector<std::string> names;
  for (int i = 0; i < 8; ++i) {
    names.push_back(absl::StrCat("n", i));
    ASSERT_TRUE(s.UpsertNode(MakeNode(names.back(), 2)).ok());
  }
  names.push_back("unknown");
  std::mt19937 random(11);
  std::vector<std::string> placed;
  int reserved = 0;
  for (int step = 0; step < 400; ++step) {
    SCOPED_TRACE(absl::StrCat("step ", step));
    // Few shapes, so the shape memory is hit; large ones fit nowhere at
    // times. Every fourth pod was filtered by Filter() first (its own
    // verdicts are remembered then).
    const int64_t memory = 20000 * (1 + random() % 4);
    PodRequest pod =
        MakePod(absl::StrCat("p", step),
                {GpuContainer("main", 1 + random() % 2, memory,
                              static_cast<int>(random() % 3) * 30)});
    const bool all_nodes = step % 5 == 0;
    const absl::Span<const std::string> asked =
        all_nodes ? absl::Span<const std::string>() : names;
    if (step % 4 == 0) {
      ASSERT_TRUE(s.Filter(pod, asked).ok());
    }
    std::vector<NodeVerdict> fresh = s.FilterFreshForTest(pod, asked);
    absl::StatusOr<std::vector<NodeVerdict>> verdicts = s.FilterForReserve(
        pod, std::vector<absl::string_view>(asked.begin(), asked.end()));
    ASSERT_TRUE(verdicts.ok()) << verdicts.status();
    ExpectSameVerdicts(fresh, *verdicts);
    const std::vector<std::string> order = FittingNodesBestFirst(*verdicts);
    if (random() % 3 == 0 && !placed.empty()) {
      s.Release(placed.back());
      placed.pop_back();
      continue;
    }
    absl::StatusOr<ReserveOutcome> outcome = s.Reserve(pod, order);
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    if (order.empty()) {
      EXPECT_FALSE(outcome->placed.has_value());
      continue;
    }
    ASSERT_TRUE(outcome->placed.has_value());
    EXPECT_TRUE(outcome->rejected.empty());
    EXPECT_EQ(outcome->placed->node, order.front());
    // The committed allocation is the one a fresh filter finds there.
    for (const NodeVerdict& verdict : fresh) {
      if (verdict.node != order.front()) continue;
      EXPECT_EQ(outcome->placed->fit.allocation, verdict.fit.allocation);
    }
    placed.push_back(pod.uid);
    ++reserved;
    if (step % 97 == 0) {  // a node re-registers with other GPUs
      ASSERT_TRUE(s.UpsertNode(MakeNode("n1", 1 + step % 3)).ok());
    }
  }
  EXPECT_GT(reserved, 50);
}

}  // namespace
}  // namespace deviceshare
