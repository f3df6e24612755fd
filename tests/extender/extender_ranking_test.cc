// /filter answers the fitting nodes in BetterVerdict() order (least
// stranded, highest score, then the smaller name) and /prioritize scores
// them down that order, whatever order kube-scheduler lists the names in,
// asked again with the same list or another.
#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "deviceshare/extender/extender.h"
#include "deviceshare/k8s/pod_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/extender_calls.h"
#include "testing/kube_objects.h"
#include "testing/verdict_order.h"

namespace deviceshare::extender {
namespace {

using ::deviceshare::testing::FilterArgs;
using ::deviceshare::testing::HamiPodObject;
using ::deviceshare::testing::NodeSpec;
using ::deviceshare::testing::PodSpec;

class ExtenderRankingTest : public ::testing::Test,
                            protected testing::ExtenderHarness {
 protected:
  ExtenderRankingTest() : ExtenderHarness(ExtenderOptions{}) {}

  // The fitting nodes of `pod` among `names`, best first, as a fresh
  // filter of every node finds them.
  std::vector<std::string> Expected(const nlohmann::json& pod,
                                    const std::vector<std::string>& names) {
    absl::StatusOr<PodRequest> request =
        ParsePodRequest(pod, scheduler_->config().device);
    EXPECT_TRUE(request.ok()) << request.status();
    return testing::FittingNodesBestFirst(
        scheduler_->FilterFreshForTest(*request, names));
  }
};

TEST_F(ExtenderRankingTest, FitsComeBestFirstWhateverTheRequestOrder) {
  // Names sharing long prefixes, names that are prefixes of others, two
  // GPU sizes (so scores differ) and many equal nodes (ties to the name).
  std::vector<NodeSpec> specs;
  std::vector<std::string> names;
  for (int i = 0; i < 24; ++i) {
    NodeSpec spec;
    spec.name = i % 3 == 0   ? absl::StrCat("n", i)
                : i % 3 == 1 ? absl::StrCat("gpu-node-pool-a-", i)
                             : absl::StrCat("gpu-node-pool-a-", i, "-x");
    spec.gpus = 2;
    spec.memory_mib = i % 4 == 0 ? 40960 : 81920;
    specs.push_back(spec);
    names.push_back(spec.name);
  }
  AddNodes(specs);
  names.push_back("not-registered");
  std::mt19937 random(3);
  for (int i = 0; i < 12; ++i) {
    SCOPED_TRACE(absl::StrCat("pod ", i));
    // Every third pod sees a new order; the others the last one again.
    if (i % 3 == 0) std::shuffle(names.begin(), names.end(), random);
    const nlohmann::json pod =
        AddPod(HamiPodObject(PodSpec{.name = absl::StrCat("p", i),
                                     .memory_mib = 10000 + 5000 * (i % 5),
                                     .cores = 10 * (1 + i % 3)}));
    const std::vector<std::string> expected = Expected(pod, names);
    FilterResult result = extender_.Filter(FilterArgs(pod, names));
    ASSERT_TRUE(result.error.empty()) << result.error;
    EXPECT_EQ(result.node_names, expected);
    ASSERT_FALSE(expected.empty());
    const std::vector<HostPriority> priorities =
        extender_.Prioritize(FilterArgs(pod, result.node_names));
    ASSERT_EQ(priorities.size(), expected.size());
    // The reserved node (the best) 10, then down the order.
    EXPECT_EQ(priorities.front().score, 10);
    for (size_t k = 0; k < priorities.size(); ++k) {
      EXPECT_EQ(priorities[k].host, expected[k]);
      if (k > 1) EXPECT_LE(priorities[k].score, priorities[k - 1].score);
    }
  }
}

}  // namespace
}  // namespace deviceshare::extender
