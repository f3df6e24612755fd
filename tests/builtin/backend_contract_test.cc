// The contract every registered sharing backend must keep (see
// backend/sharing_backend.h). Parameterised over the registry, so a new
// backend is covered by registering it.
#include <algorithm>
#include <optional>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "deviceshare/backend/backend_registry.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/policy/scoring.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::GpuContainer;
using ::deviceshare::testing::MakeNode;
using ::deviceshare::testing::MakePod;

BackendRegistry BuiltinRegistry() {
  BackendRegistry registry;
  absl::Status status = RegisterBuiltinBackends(registry);
  EXPECT_TRUE(status.ok()) << status;
  return registry;
}

std::vector<std::string> BackendNames() {
  return BuiltinRegistry().RegisteredNames();
}

class BackendContractTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    auto backend = BuiltinRegistry().Create(GetParam(), Config{});
    ASSERT_OK(backend);
    backend_ = *std::move(backend);
  }

  // A node of `gpus` GPUs that all run this backend's mode.
  NodeState MakeNodeState(int gpus, int64_t memory_mib = 81920) {
    NodeInventory inventory = MakeNode("n1", gpus, memory_mib);
    for (Gpu& gpu : inventory.gpus) {
      gpu.mode = backend_->mode();
      gpu.mig_capable = true;
      gpu.mps_capable = true;
    }
    return NodeState(std::move(inventory));
  }

  // Requests of every shape the contract must hold for.
  std::vector<PodRequest> SampleRequests() {
    std::vector<PodRequest> pods;
    pods.push_back(MakePod("small", {GpuContainer("c", 1, 4096, 10)}));
    pods.push_back(MakePod("two-gpus", {GpuContainer("c", 2, 10000, 30)}));
    pods.push_back(MakePod("exclusive", {GpuContainer("c", 1, 0, 100)}));
    ContainerRequest init = GpuContainer("init", 1, 20000, 20);
    init.is_init = true;
    pods.push_back(MakePod("with-init", {init, GpuContainer("a", 1, 8000, 10),
                                         GpuContainer("b", 1, 8000, 10)}));
    ContainerRequest percent = GpuContainer("c", 1, 0, 0);
    percent.memory_percent = 25;
    pods.push_back(MakePod("percent", {percent}));
    pods.push_back(MakePod("too-big", {GpuContainer("c", 1, 1 << 30, 0)}));
    pods.push_back(MakePod("no-gpu", {ContainerRequest{.name = "cpu"}}));
    for (PodRequest& pod : pods) pod.mode = backend_->mode();
    return pods;
  }

  std::unique_ptr<SharingBackend> backend_;
};

TEST_P(BackendContractTest, NameAndModeAgree) {
  EXPECT_EQ(backend_->name(), GetParam());
  EXPECT_EQ(SharingModeName(backend_->mode()), GetParam());
}

TEST_P(BackendContractTest, FilterNeverMutates) {
  NodeState node = MakeNodeState(4);
  ASSERT_OK(backend_->Allocate(
      MakePod("resident", {GpuContainer("c", 1, 30000, 40)}), node, {}));
  for (const PodRequest& pod : SampleRequests()) {
    for (const PlacementPolicy* policy : {&BinpackPolicy(), &SpreadPolicy()}) {
      NodeState before = node;
      backend_->Filter(pod, node, {policy, policy});
      for (size_t i = 0; i < node.gpu_count(); ++i) {
        EXPECT_EQ(node.ledger(i), before.ledger(i)) << pod.name;
      }
    }
  }
}

TEST_P(BackendContractTest, FilterAllocationIsWhatAllocateCommits) {
  for (const PodRequest& pod : SampleRequests()) {
    NodeState node = MakeNodeState(4);
    NodeFit fit = backend_->Filter(pod, node, {});
    auto allocated = backend_->Allocate(pod, node, {});
    EXPECT_EQ(fit.fits(), allocated.ok()) << pod.name << ": " << fit.message;
    if (fit.fits() && allocated.ok()) {
      EXPECT_EQ(fit.allocation, *allocated);
    }
  }
}

// Node score bounds trust a backend that says its grants charge as asked
// (grant_charges()): no grant may charge its GPU more cores, or more memory
// than its container asks of that card, on a node filling up.
TEST_P(BackendContractTest, GrantsChargeAsAskedWhereTheBackendSaysSo) {
  if (backend_->grant_charges() != GrantCharges::kAsAsked) {
    GTEST_SKIP() << GetParam() << " promises nothing of its grants' charges";
  }
  NodeState node = MakeNodeState(4, 40960);
  int grants = 0;
  for (int round = 0; round < 3; ++round) {
    for (PodRequest pod : SampleRequests()) {
      pod.uid = absl::StrCat(pod.uid, "-", round);
      absl::StatusOr<PodAllocation> allocated =
          backend_->Allocate(pod, node, {});
      if (!allocated.ok()) continue;
      for (const ContainerAllocation& container : allocated->containers) {
        const ContainerRequest& asked =
            pod.containers[container.container_index];
        for (const DeviceGrant& grant : container.devices) {
          const std::optional<size_t> at = node.FindGpuIndex(grant.gpu_index);
          ASSERT_TRUE(at.has_value()) << pod.name;
          EXPECT_LE(grant.cores, asked.cores) << pod.name;
          EXPECT_LE(grant.memory_mib,
                    asked.MemoryOn(node.ledger(*at).memory_capacity_mib()))
              << pod.name;
          ++grants;
        }
      }
    }
  }
  EXPECT_GT(grants, 10);
}

TEST_P(BackendContractTest, AllocateThenReleaseRestoresTheLedgerExactly) {
  for (const PodRequest& pod : SampleRequests()) {
    NodeState node = MakeNodeState(4);
    ASSERT_OK(backend_->Allocate(
        MakePod("resident", {GpuContainer("c", 2, 20000, 20)}), node, {}));
    NodeState before = node;
    auto allocated = backend_->Allocate(pod, node, {});
    if (!allocated.ok()) continue;
    EXPECT_OK(node.CheckInvariants());
    backend_->Release(pod.uid, node);
    for (size_t i = 0; i < node.gpu_count(); ++i) {
      EXPECT_EQ(node.ledger(i), before.ledger(i)) << pod.name;
    }
  }
}

TEST_P(BackendContractTest, ReleaseIsIdempotent) {
  NodeState node = MakeNodeState(2);
  PodRequest pod = MakePod("p", {GpuContainer("c", 1, 4096, 10)});
  pod.mode = backend_->mode();
  ASSERT_OK(backend_->Allocate(pod, node, {}));
  backend_->Release(pod.uid, node);
  NodeState once = node;
  backend_->Release(pod.uid, node);
  backend_->Release("never-placed", node);
  for (size_t i = 0; i < node.gpu_count(); ++i) {
    EXPECT_EQ(node.ledger(i), once.ledger(i));
    EXPECT_TRUE(node.ledger(i).idle());
  }
}

TEST_P(BackendContractTest, ScoresStayWithinZeroToHundred) {
  std::mt19937_64 rng(7);
  NodeState node = MakeNodeState(8);
  for (int step = 0; step < 200; ++step) {
    int64_t memory = std::uniform_int_distribution<int64_t>(1, 30000)(rng);
    int cores = std::uniform_int_distribution<int>(0, 60)(rng);
    PodRequest pod = MakePod(absl::StrCat("p", step),
                             {GpuContainer("c", 1 + step % 2, memory, cores)});
    pod.mode = backend_->mode();
    for (const PlacementPolicy* policy : {&BinpackPolicy(), &SpreadPolicy()}) {
      NodeFit fit = backend_->Filter(pod, node, {policy, policy});
      if (!fit.fits()) continue;
      int score = backend_->Score(node, fit.allocation, {policy, policy});
      EXPECT_GE(score, 0);
      EXPECT_LE(score, 100);
    }
    (void)backend_->Allocate(pod, node, {});
  }
}

// The scheduler prunes nodes with MayFit() and ScoreUpperBound(); both must
// be safe: never rule out a node that fits, never under-estimate a score.
TEST_P(BackendContractTest, MayFitAndScoreUpperBoundAreSafe) {
  std::mt19937_64 rng(11);
  NodeState node = MakeNodeState(4, 40960);
  int fits = 0;
  for (int step = 0; step < 400; ++step) {
    auto uniform = [&](int lo, int hi) {
      return std::uniform_int_distribution<int>(lo, hi)(rng);
    };
    ContainerRequest init = GpuContainer("init", 1, uniform(1, 20000), 10);
    init.is_init = true;
    ContainerRequest app = GpuContainer("app", uniform(1, 2), uniform(0, 20000),
                                        uniform(0, 4) * 25);
    if (uniform(0, 3) == 0) app.memory_percent = uniform(1, 60);
    std::vector<ContainerRequest> containers = {app};
    if (uniform(0, 3) == 0) containers.insert(containers.begin(), init);
    PodRequest pod = MakePod(absl::StrCat("p", step), containers);
    pod.mode = backend_->mode();
    for (const PlacementPolicy* policy : {&BinpackPolicy(), &SpreadPolicy()}) {
      PlacementOptions options{policy, policy};
      NodeFit fit = backend_->Filter(pod, node, options);
      if (!backend_->MayFit(pod, node)) {
        EXPECT_FALSE(fit.fits()) << pod.name << " ruled out but fits";
      }
      PlacementOptions quiet = options;
      quiet.explain = false;
      NodeFit quiet_fit = backend_->Filter(pod, node, quiet);
      EXPECT_EQ(quiet_fit.code, fit.code) << pod.name << ": " << fit.message;
      if (fit.fits()) {
        EXPECT_EQ(quiet_fit.allocation, fit.allocation);
      }
      if (!backend_->MayFitHeadroom(pod, node.shape(), node.headroom())) {
        EXPECT_FALSE(fit.fits()) << pod.name << " ruled out by headroom";
      }
      const int node_bound = backend_->ScoreUpperBound(pod, node, options);
      const int utilisation = NodeUtilisationPercent(node);
      EXPECT_LE(node_bound, backend_->ShapeScoreBound(pod, node.shape(),
                                                      utilisation, options))
          << pod.name;
      if (fit.fits()) {
        ++fits;
        EXPECT_LE(backend_->Score(node, fit.allocation, options), node_bound)
            << pod.name;
      }
    }
    if (uniform(0, 1)) (void)backend_->Allocate(pod, node, {});
    if (uniform(0, 4) == 0) {
      for (const std::string& uid : node.ledger(uniform(0, 3)).PodUids()) {
        backend_->Release(uid, node);
      }
    }
  }
  EXPECT_GT(fits, 100);
}

TEST_P(BackendContractTest, ScoreIsDeterministic) {
  NodeState node = MakeNodeState(4);
  PodRequest pod = MakePod("p", {GpuContainer("c", 1, 5000, 25)});
  pod.mode = backend_->mode();
  NodeFit fit = backend_->Filter(pod, node, {});
  ASSERT_TRUE(fit.fits()) << fit.message;
  int first = backend_->Score(node, fit.allocation, {});
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(backend_->Filter(pod, node, {}).allocation, fit.allocation);
    EXPECT_EQ(backend_->Score(node, fit.allocation, {}), first);
  }
}

TEST_P(BackendContractTest, CommitIsAllOrNothing) {
  NodeState node = MakeNodeState(2, 10000);
  PodRequest filler = MakePod("filler", {GpuContainer("c", 1, 9000, 0)});
  filler.mode = backend_->mode();
  filler.use_uuids = {node.inventory().gpus[1].uuid};
  auto filled = backend_->Allocate(filler, node, {});
  ASSERT_OK(filled);
  // The filler's slot, for a backend whose grants carry one (mig): a grant
  // without one would be a record that holds the GPU, taken as it is.
  const MigSlot slot = filled->containers[0].devices[0].mig;
  NodeState before = node;
  // A hand-made allocation whose second grant cannot fit.
  PodAllocation allocation;
  allocation.pod_uid = "uid-greedy";
  allocation.pod_key = "default/greedy";
  allocation.node_name = "n1";
  ContainerAllocation container;
  container.name = "c";
  for (const Gpu& gpu : node.inventory().gpus) {
    container.devices.push_back(
        DeviceGrant{gpu.uuid, gpu.index, backend_->mode(), 5000, 0, slot});
  }
  allocation.containers.push_back(container);
  PodRequest greedy = MakePod("greedy", {GpuContainer("c", 2, 5000, 0)});
  EXPECT_FALSE(backend_->Commit(greedy, allocation, node).ok());
  for (size_t i = 0; i < node.gpu_count(); ++i) {
    EXPECT_EQ(node.ledger(i), before.ledger(i));
  }
}

TEST_P(BackendContractTest, UnfitVerdictHasCodeAndMessage) {
  // Larger than any GPU (and any MIG profile) there is.
  NodeState node = MakeNodeState(1);
  PodRequest pod = MakePod("big", {GpuContainer("c", 1, int64_t{1} << 30, 0)});
  pod.mode = backend_->mode();
  NodeFit fit = backend_->Filter(pod, node, {});
  ASSERT_FALSE(fit.fits());
  EXPECT_NE(fit.code, ReasonCode::kFits);
  EXPECT_TRUE(absl::StartsWith(fit.message, ReasonCodeName(fit.code)))
      << fit.message;
}

INSTANTIATE_TEST_SUITE_P(AllRegistered, BackendContractTest,
                         ::testing::ValuesIn(BackendNames()),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(BackendRegistryTest, RejectsDuplicatesAndNamesTheRegisteredOnes) {
  BackendRegistry registry = BuiltinRegistry();
  EXPECT_THAT(RegisterBuiltinBackends(registry),
              testing::StatusIs(absl::StatusCode::kAlreadyExists,
                                ::testing::HasSubstr("hami-core")));
  EXPECT_THAT(
      registry.Create("vgpu-magic", Config{}),
      testing::StatusIs(
          absl::StatusCode::kNotFound,
          ::testing::AllOf(::testing::HasSubstr("vgpu-magic"),
                           ::testing::HasSubstr("registered: hami-core"))));
  EXPECT_THAT(registry.Register("", nullptr),
              testing::StatusIs(absl::StatusCode::kInvalidArgument));
  auto names = registry.RegisteredNames();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

}  // namespace
}  // namespace deviceshare
