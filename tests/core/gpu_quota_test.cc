#include "deviceshare/model/gpu_quota.h"

#include <string>

#include "deviceshare/scheduler/cluster_state.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/builders.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::Container;
using ::deviceshare::testing::GpuContainer;
using ::deviceshare::testing::Grant;
using ::deviceshare::testing::MakePod;
using ::testing::HasSubstr;
using ::testing::Optional;

PodAllocation Allocation(std::vector<ContainerAllocation> containers) {
  PodAllocation allocation;
  allocation.pod_uid = "uid-p";
  allocation.node_name = "n";
  allocation.containers = std::move(containers);
  return allocation;
}

// HAMi's CollapseInitContainerUsage: per GPU the larger of the largest init
// container and the app containers' sum; GPUs add up.
TEST(GpuQuotaTest, APodHoldsItsPeakOnEachGpu) {
  const PodAllocation shared =
      Allocation({Container(0, true, {Grant("GPU-0", 800, 10)}),
                  Container(1, true, {Grant("GPU-0", 700, 30)}),
                  Container(2, false, {Grant("GPU-0", 500, 20)})});
  EXPECT_EQ(QuotaUseOf(shared), (GpuQuotaUse{800, 30}));
  const PodAllocation apart = Allocation(
      {Container(0, true, {Grant("GPU-0", 800, 10)}),
       Container(1, false, {Grant("GPU-1", 500, 20), Grant("GPU-2", 500, 20)}),
       Container(2, false, {Grant("GPU-1", 100, 5)})});
  EXPECT_EQ(QuotaUseOf(apart), (GpuQuotaUse{800 + 600 + 500, 10 + 25 + 20}));
}

TEST(GpuQuotaTest, TheLeastAPodHoldsComesFromItsRequest) {
  PodRequest pod = MakePod(
      "p", {GpuContainer("init", 1, 800, 10), GpuContainer("two", 2, 300, 5),
            GpuContainer("pct", 1, 0, 0)});
  pod.containers[0].is_init = true;
  EXPECT_EQ(LeastQuotaUseOf(pod), (GpuQuotaUse{800, 10}));
  pod.containers[0].memory_mib = 100;
  EXPECT_EQ(LeastQuotaUseOf(pod), (GpuQuotaUse{600, 10}));
}

TEST(GpuQuotaTest, ExcessNamesTheNamespaceAndTheFigures) {
  const GpuQuotaLimits limits{2000, 400};
  EXPECT_EQ(QuotaExcess("ns", limits, {1000, 200}, {1000, 200}), std::nullopt);
  EXPECT_THAT(QuotaExcess("ns", limits, {1000, 200}, {1024, 0}),
              Optional(HasSubstr("QuotaExceeded namespace ns GPU memory: "
                                 "1000MiB held + 1024MiB wanted > limit "
                                 "2000MiB")));
  EXPECT_THAT(QuotaExcess("ns", limits, {0, 300}, {0, 101}),
              Optional(HasSubstr("GPU cores: 300 held + 101 wanted > limit "
                                 "400")));
  EXPECT_EQ(QuotaExcess("ns", GpuQuotaLimits{}, {1 << 30, 1 << 20}, {1, 1}),
            std::nullopt);
  EXPECT_EQ(Tightest({100, std::nullopt}, {std::nullopt, 5}),
            (GpuQuotaLimits{100, 5}));
  EXPECT_EQ(Tightest({100, 7}, {50, 9}), (GpuQuotaLimits{50, 7}));
}

// The state counts every recorded pod of a namespace, on a ledger or not,
// and forgets it with the pod; quota objects combine per namespace.
TEST(GpuQuotaTest, TheStateCountsANamespacesPods) {
  ClusterState state(nullptr);
  PodRequest pod = MakePod("p", {GpuContainer("c", 1, 1000, 20)});
  pod.namespace_name = "team";
  PodAllocation allocation =
      Allocation({Container(0, false, {Grant("GPU-x", 1000, 20)})});
  allocation.pod_uid = pod.uid;
  allocation.node_name = "not-registered";
  ASSERT_TRUE(state.AddPod(pod, allocation).ok());
  EXPECT_EQ(state.QuotaUse("team"), (GpuQuotaUse{1000, 20}));
  EXPECT_EQ(state.QuotaUse("other"), GpuQuotaUse{});
  state.UpsertQuota({"team", "a", {5000, std::nullopt}});
  state.UpsertQuota({"team", "b", {8000, 50}});
  EXPECT_EQ(state.QuotaLimits("team"), (GpuQuotaLimits{5000, 50}));
  state.RemoveQuota("team", "a");
  state.RemoveQuota("team", "missing");
  EXPECT_EQ(state.QuotaLimits("team"), (GpuQuotaLimits{8000, 50}));
  state.RemovePod(pod.uid);
  EXPECT_EQ(state.QuotaUse("team"), GpuQuotaUse{});
}

}  // namespace
}  // namespace deviceshare
