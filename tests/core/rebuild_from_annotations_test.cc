// A restarted scheduler rebuilds its ledgers from the allocation records on
// the pods. The rebuilt ledgers must equal the ones that made the decisions,
// including pods whose containers share one GPU (each container is a
// tenant: upstream Volcano counted only the first after a rebuild, HAMi
// #2622 regressed the same way) and pods with init containers.
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/k8s/pod_annotations.h"
#include "deviceshare/scheduler/scheduler.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::GpuContainer;
using ::deviceshare::testing::MakeConfig;
using ::deviceshare::testing::MakeNode;
using ::deviceshare::testing::MakePod;

std::unique_ptr<Scheduler> NewScheduler() {
  BackendRegistry registry;
  EXPECT_OK(RegisterBuiltinBackends(registry));
  auto scheduler = Scheduler::Create(MakeConfig(), registry);
  EXPECT_OK(scheduler);
  EXPECT_OK((*scheduler)->UpsertNode(MakeNode("n1", 2, 40960, 8)));
  EXPECT_OK((*scheduler)->UpsertNode(MakeNode("n2", 2, 40960, 8)));
  return *std::move(scheduler);
}

std::vector<PodRequest> Workload(Dialect dialect) {
  std::vector<PodRequest> pods;
  for (int i = 0; i < 4; ++i) {
    // Three containers of one pod on one single-GPU slot each: with binpack
    // they land on the same GPU and must take three slots there.
    PodRequest pod =
        MakePod(absl::StrCat("multi-", i),
                {GpuContainer("a", 1, 3000, 10), GpuContainer("b", 1, 2000, 10),
                 GpuContainer("c", 1, 1000, 0)});
    pod.dialect = dialect;
    pods.push_back(pod);
  }
  ContainerRequest gpuless;
  gpuless.name = "sidecar";
  PodRequest two =
      MakePod("two-gpus", {GpuContainer("main", 2, 8000, 20), gpuless});
  two.dialect = dialect;
  pods.push_back(two);
  if (dialect == Dialect::kHami) {  // Volcano's record has no init entries
    ContainerRequest init = GpuContainer("init", 1, 12000, 50);
    init.is_init = true;
    PodRequest with_init =
        MakePod("with-init", {init, GpuContainer("app", 1, 4000, 20)});
    with_init.dialect = dialect;
    pods.push_back(with_init);
  }
  return pods;
}

std::vector<DeviceLedger> Ledgers(const Scheduler& scheduler) {
  std::vector<DeviceLedger> ledgers;
  scheduler.Inspect([&](const ClusterState& state) {
    EXPECT_OK(state.CheckInvariants());
    for (const auto& [name, node] : state.nodes()) {
      for (size_t i = 0; i < node->gpu_count(); ++i) {
        ledgers.push_back(node->ledger(i));
      }
    }
  });
  return ledgers;
}

class RebuildFromAnnotationsTest : public ::testing::TestWithParam<Dialect> {};

TEST_P(RebuildFromAnnotationsTest, RebuiltLedgersEqualTheLiveOnes) {
  std::unique_ptr<Scheduler> live = NewScheduler();
  std::vector<std::pair<PodRequest, std::map<std::string, std::string>>> pods;
  int shared_gpu_pods = 0;
  for (const PodRequest& pod : Workload(GetParam())) {
    auto outcome = live->Schedule(pod);
    ASSERT_OK(outcome);
    ASSERT_TRUE(outcome->allocation.has_value())
        << pod.name << ": "
        << (outcome->reasons.empty() ? "" : outcome->reasons.begin()->second);
    const auto& containers = outcome->allocation->containers;
    if (containers.size() == 3 &&
        containers[0].devices[0].uuid == containers[1].devices[0].uuid &&
        containers[1].devices[0].uuid == containers[2].devices[0].uuid) {
      ++shared_gpu_pods;
    }
    pods.emplace_back(pod, AllocationAnnotations(*outcome->allocation,
                                                 GetParam(), absl::Now(), 1));
  }
  ASSERT_GT(shared_gpu_pods, 0) << "the workload must put containers of one "
                                   "pod on one GPU";

  std::unique_ptr<Scheduler> restarted = NewScheduler();
  for (const auto& [pod, annotations] : pods) {
    std::string node = annotations.count("hami.io/vgpu-node")
                           ? annotations.at("hami.io/vgpu-node")
                           : annotations.at("volcano.sh/vgpu-node");
    auto allocation = AllocationFromAnnotations(pod, annotations, node, 1);
    ASSERT_OK(allocation);
    ASSERT_TRUE(allocation->has_value());
    ASSERT_OK(restarted->Bind(pod, **allocation));
  }
  EXPECT_EQ(Ledgers(*restarted), Ledgers(*live));
  // And the rebuilt ledger holds every container of a pod on a shared GPU
  // as its own tenant.
  int three_tenant_gpus = 0;
  for (const DeviceLedger& ledger : Ledgers(*restarted)) {
    for (const std::string& uid : ledger.PodUids()) {
      if (ledger.SharesOf(uid).size() == 3) {
        ++three_tenant_gpus;
        EXPECT_GE(ledger.used_slots(), 3);
      }
    }
  }
  EXPECT_EQ(three_tenant_gpus, shared_gpu_pods);
}

INSTANTIATE_TEST_SUITE_P(BothDialects, RebuildFromAnnotationsTest,
                         ::testing::Values(Dialect::kHami, Dialect::kVolcano),
                         [](const auto& info) {
                           return std::string(DialectName(info.param));
                         });

}  // namespace
}  // namespace deviceshare
