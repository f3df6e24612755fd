// Scheduler::Filter: the remembered verdicts (per pod and per request
// shape) must always agree with a fresh filter, however the state moved in
// between.
#include <random>

#include "absl/strings/str_cat.h"
#include "deviceshare/backend/backend_registry.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/scheduler/scheduler.h"
#include "gtest/gtest.h"
#include "testing/builders.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::GpuContainer;
using ::deviceshare::testing::MakeConfig;
using ::deviceshare::testing::MakeNode;
using ::deviceshare::testing::MakePod;

TEST(RememberedVerdictsTest, AgreeWithAFreshFilterAcrossRandomChanges) {
  BackendRegistry registry;
  ASSERT_TRUE(RegisterBuiltinBackends(registry).ok());
  auto scheduler = Scheduler::Create(MakeConfig(), registry);
  ASSERT_TRUE(scheduler.ok());
  std::vector<std::string> names;
  for (int i = 0; i < 6; ++i) {
    names.push_back(absl::StrCat("n", i));
    ASSERT_TRUE((*scheduler)->UpsertNode(MakeNode(names.back(), 2)).ok());
  }
  names.push_back("unknown");
  std::mt19937 random(7);
  std::vector<std::string> placed;
  for (int step = 0; step < 400; ++step) {
    // Few shapes, so the cache is hit, and pods come and go.
    const int64_t memory = 20000 * (1 + random() % 3);
    PodRequest pod =
        MakePod(absl::StrCat("p", step),
                {GpuContainer("main", 1 + random() % 2, memory,
                              static_cast<int>(random() % 3) * 30)});
    std::vector<NodeVerdict> fresh =
        (*scheduler)->FilterFreshForTest(pod, names);
    absl::StatusOr<std::vector<NodeVerdict>> remembered =
        (*scheduler)->Filter(pod, names);
    ASSERT_TRUE(remembered.ok()) << remembered.status();
    const std::vector<NodeVerdict>& screened = *remembered;
    ASSERT_EQ(fresh.size(), screened.size());
    for (size_t i = 0; i < fresh.size(); ++i) {
      SCOPED_TRACE(absl::StrCat("step ", step, " node ", fresh[i].node));
      EXPECT_EQ(screened[i].node, fresh[i].node);
      EXPECT_EQ(screened[i].fit.code, fresh[i].fit.code);
      EXPECT_EQ(screened[i].fit.message, fresh[i].fit.message);
      if (fresh[i].fit.fits()) {
        EXPECT_EQ(screened[i].score, fresh[i].score);
        EXPECT_EQ(screened[i].stranded_percent, fresh[i].stranded_percent);
        EXPECT_EQ(screened[i].mode, fresh[i].mode);
      }
    }
    if (random() % 3 == 0 && !placed.empty()) {
      (*scheduler)->Release(placed.back());
      placed.pop_back();
    } else {
      auto outcome = (*scheduler)->Schedule(pod);
      ASSERT_TRUE(outcome.ok());
      if (outcome->allocation) placed.push_back(pod.uid);
    }
    if (step % 97 == 0) {  // a node re-registers with other GPUs
      ASSERT_TRUE((*scheduler)->UpsertNode(MakeNode("n1", 1 + step % 3)).ok());
    }
  }
}

}  // namespace
}  // namespace deviceshare
