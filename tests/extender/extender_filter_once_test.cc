// /filter runs the filter step at most once per node (untouched twins of a
// fitting node take its fit): the rejected nodes get their reasons from the
// same evaluation, and the reserve step commits the
// allocation that evaluation found instead of filtering the node again.
#include "absl/strings/str_cat.h"
#include "deviceshare/extender/extender.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/counting_backend.h"
#include "testing/extender_calls.h"
#include "testing/kube_objects.h"

namespace deviceshare::extender {
namespace {

using ::deviceshare::testing::FilterArgs;
using ::deviceshare::testing::FilterCounts;
using ::deviceshare::testing::HamiPodObject;
using ::deviceshare::testing::MakeConfig;
using ::deviceshare::testing::NodeSpec;
using ::deviceshare::testing::PodSpec;
using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::Le;
using ::testing::Pair;
using ::testing::SizeIs;

std::unique_ptr<Scheduler> CountingScheduler(FilterCounts* counts) {
  BackendRegistry registry;
  EXPECT_TRUE(RegisterCountingBuiltins(registry, counts).ok());
  auto scheduler = Scheduler::Create(MakeConfig(), registry);
  EXPECT_TRUE(scheduler.ok()) << scheduler.status();
  return *std::move(scheduler);
}

class ExtenderFilterOnceTest : public ::testing::Test,
                               protected testing::ExtenderHarness {
 protected:
  ExtenderFilterOnceTest()
      : ExtenderHarness(ExtenderOptions{}, CountingScheduler(&counts_)) {}

  // Three 80 GiB nodes, two 16 GiB ones (too small for the pods below),
  // and a name kube-scheduler knows but the extender does not.
  std::vector<std::string> Cluster() {
    std::vector<NodeSpec> specs;
    std::vector<std::string> names;
    for (int i = 0; i < 5; ++i) {
      NodeSpec spec;
      spec.name = absl::StrCat("node-", i);
      spec.gpus = 2;
      spec.memory_mib = i < 3 ? 81920 : 16384;
      specs.push_back(spec);
      names.push_back(spec.name);
    }
    AddNodes(specs);
    names.push_back("not-registered");
    return names;
  }

  FilterCounts counts_;
};

TEST_F(ExtenderFilterOnceTest, EachNodeIsFilteredAtMostOncePerCall) {
  const std::vector<std::string> names = Cluster();
  for (int i = 0; i < 6; ++i) {
    SCOPED_TRACE(absl::StrCat("pod ", i));
    // Pods of two shapes: the second of a shape finds the first's verdicts
    // of the nodes that did not change.
    PodSpec spec{.name = absl::StrCat("p", i),
                 .memory_mib = i % 2 == 0 ? 30000 : 20000,
                 .cores = 10};
    counts_.Take();
    FilterResult result =
        extender_.Filter(FilterArgs(AddPod(HamiPodObject(spec)), names));
    ASSERT_TRUE(result.error.empty()) << result.error;
    EXPECT_THAT(result.node_names, SizeIs(3));
    EXPECT_THAT(result.failed_nodes, SizeIs(2));
    EXPECT_THAT(result.failed_and_unresolvable_nodes, SizeIs(1));
    const std::map<std::string, int> counts = counts_.Take();
    EXPECT_THAT(counts, Each(Pair(::testing::_, Le(1))));
    // The rejected nodes are explained from their one evaluation.
    EXPECT_EQ(counts.at("node-3"), 1);
    EXPECT_EQ(counts.at("node-4"), 1);
  }
}

TEST_F(ExtenderFilterOnceTest, TheFirstPodOfAShapeFiltersEachNodeAtMostOnce) {
  const std::vector<std::string> names = Cluster();
  counts_.Take();
  FilterResult result = extender_.Filter(FilterArgs(
      AddPod(HamiPodObject(PodSpec{.name = "p", .memory_mib = 30000})), names));
  ASSERT_TRUE(result.error.empty()) << result.error;
  const std::map<std::string, int> counts = counts_.Take();
  // The unregistered node costs nothing; node-1 and node-2 are untouched
  // twins of node-0, which fits, and take its fit; node-4, a twin of the
  // rejected node-3, is filtered for its own reason.
  EXPECT_THAT(counts, ElementsAre(Pair("node-0", 1), Pair("node-3", 1),
                                  Pair("node-4", 1)));
}

}  // namespace
}  // namespace deviceshare::extender
