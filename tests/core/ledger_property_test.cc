// Property test: 100,000 random allocate / release / rebuild / re-register
// operations on a small cluster. After every step, every ledger invariant
// holds and every ledger equals an independent recomputation from the
// recorded allocations (init containers charged as max, app containers
// summed, one slot per app container).
#include <map>
#include <random>

#include "absl/strings/str_cat.h"
#include "deviceshare/backend/backend_set.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/hamicore/hamicore_backend.h"
#include "deviceshare/scheduler/cluster_state.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::MakeGpu;

constexpr int kOperations = 100000;

struct Expected {
  int64_t memory = 0;
  int64_t cores = 0;
  int64_t slots = 0;
};

// The ledger's accounting rule, written again independently of
// DeviceLedger/ChargeOf: per (GPU, pod), memory and cores are
// max(largest init share, sum of app shares); slots are the number of app
// containers, or 1 for a pod with only init containers there.
std::map<std::string, Expected> Recompute(const ClusterState& state) {
  struct PodOnGpu {
    int64_t init_memory = 0, app_memory = 0;
    int64_t init_cores = 0, app_cores = 0;
    int64_t apps = 0;
    bool init = false;
  };
  std::map<std::pair<std::string, std::string>, PodOnGpu> per_pod;
  for (const auto& [name, node] : state.nodes()) {
    for (size_t i = 0; i < node->gpu_count(); ++i) {
      for (const std::string& uid : node->ledger(i).PodUids()) {
        const PodRecord* record = state.FindPod(uid);
        if (record == nullptr) continue;
        for (const ContainerAllocation& c : record->allocation.containers) {
          for (const DeviceGrant& g : c.devices) {
            if (g.uuid != node->inventory().gpus[i].uuid) continue;
            PodOnGpu& p = per_pod[{g.uuid, uid}];
            if (c.is_init) {
              p.init = true;
              p.init_memory = std::max(p.init_memory, g.memory_mib);
              p.init_cores = std::max<int64_t>(p.init_cores, g.cores);
            } else {
              ++p.apps;
              p.app_memory += g.memory_mib;
              p.app_cores += g.cores;
            }
          }
        }
      }
    }
  }
  std::map<std::string, Expected> expected;
  for (const auto& [key, p] : per_pod) {
    Expected& e = expected[key.first];
    e.memory += std::max(p.init_memory, p.app_memory);
    e.cores += std::max(p.init_cores, p.app_cores);
    e.slots += std::max<int64_t>(p.apps, p.init ? 1 : 0);
  }
  return expected;
}

NodeInventory Node(const std::string& name, int64_t memory, int split,
                   int gpus) {
  NodeInventory node;
  node.name = name;
  for (int i = 0; i < gpus; ++i) {
    node.gpus.push_back(MakeGpu(name, i, memory, split, i % 2));
  }
  return node;
}

class Driver {
 public:
  explicit Driver(uint64_t seed) : rng_(seed) {
    BackendRegistry registry;
    EXPECT_OK(RegisterBuiltinBackends(registry));
    Config config;
    auto backends = BackendSet::Create(registry, config);
    EXPECT_OK(backends);
    backends_ = std::make_unique<BackendSet>(*std::move(backends));
    state_ = std::make_unique<ClusterState>(backends_.get());
    inventories_ = {Node("a", 81920, 10, 4), Node("b", 40960, 4, 2),
                    Node("c", 24576, 3, 4)};
    for (const NodeInventory& inventory : inventories_) {
      EXPECT_OK(state_->UpsertNode(inventory));
    }
  }

  int Uniform(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng_);
  }

  PodRequest RandomPod() {
    PodRequest pod;
    pod.uid = absl::StrCat("uid-", next_pod_);
    pod.name = absl::StrCat("p", next_pod_++);
    int containers = Uniform(1, 3);
    for (int c = 0; c < containers; ++c) {
      ContainerRequest container;
      container.name = absl::StrCat("c", c);
      container.is_init = c == 0 && Uniform(0, 3) == 0;
      container.gpu_count = Uniform(0, 4) == 0 ? 0 : Uniform(1, 2);
      switch (Uniform(0, 3)) {
        case 0:
          container.memory_percent = Uniform(1, 100);
          break;
        case 1:
          break;  // whole card
        default:
          container.memory_mib = Uniform(1, 30000);
      }
      int cores_kind = Uniform(0, 9);
      container.cores = cores_kind == 0  ? 100
                        : cores_kind < 4 ? 0
                                         : Uniform(1, 60);
      pod.containers.push_back(container);
    }
    pod.numa_bind = Uniform(0, 5) == 0;
    if (Uniform(0, 7) == 0)
      pod.use_uuids = {absl::StrCat("GPU-a-", Uniform(0, 3))};
    return pod;
  }

  void Allocate() {
    PodRequest pod = RandomPod();
    const SharingBackend* backend = backends_->ForMode(hamicore::kMode);
    const auto& nodes = state_->nodes();
    auto it = std::next(nodes.begin(), Uniform(0, nodes.size() - 1));
    const PlacementPolicy* policy =
        Uniform(0, 1) ? &BinpackPolicy() : &SpreadPolicy();
    NodeFit fit = backend->Filter(pod, *it->second, {policy, policy});
    if (!fit.fits()) return;
    ASSERT_OK(state_->AddPod(pod, fit.allocation)) << pod.name;
    live_.push_back(pod.uid);
    ++placed_;
  }

  void Release() {
    if (live_.empty()) return;
    size_t i = Uniform(0, live_.size() - 1);
    state_->RemovePod(live_[i]);
    if (Uniform(0, 1)) state_->RemovePod(live_[i]);  // idempotent
    live_[i] = live_.back();
    live_.pop_back();
  }

  void Rebuild() {
    const NodeInventory& inventory = inventories_[Uniform(0, 2)];
    const NodeState* before = state_->FindNode(inventory.name);
    std::vector<DeviceLedger> ledgers;
    for (size_t i = 0; i < before->gpu_count(); ++i) {
      ledgers.push_back(before->ledger(i));
    }
    auto displaced = Uniform(0, 1) ? state_->RebuildNode(inventory.name)
                                   : state_->UpsertNode(inventory);
    ASSERT_OK(displaced);
    EXPECT_TRUE(displaced->empty());
    const NodeState* after = state_->FindNode(inventory.name);
    for (size_t i = 0; i < after->gpu_count(); ++i) {
      ASSERT_EQ(after->ledger(i), ledgers[i])
          << "rebuild changed " << inventory.name;
    }
  }

  void Check() {
    ASSERT_OK(state_->CheckInvariants());
    std::map<std::string, Expected> expected = Recompute(*state_);
    for (const auto& [name, node] : state_->nodes()) {
      for (size_t i = 0; i < node->gpu_count(); ++i) {
        const DeviceLedger& ledger = node->ledger(i);
        Expected e = expected[node->inventory().gpus[i].uuid];
        ASSERT_EQ(ledger.used_memory_mib(), e.memory);
        ASSERT_EQ(ledger.used_cores(), e.cores);
        ASSERT_EQ(ledger.used_slots(), e.slots);
        ASSERT_LE(e.memory, ledger.memory_capacity_mib());
        ASSERT_LE(e.cores, ledger.core_capacity());
        ASSERT_LE(e.slots, ledger.slot_capacity());
      }
    }
    ASSERT_EQ(state_->pod_count(), live_.size());
  }

  int placed() const { return placed_; }

 private:
  std::mt19937_64 rng_;
  std::unique_ptr<BackendSet> backends_;
  std::unique_ptr<ClusterState> state_;
  std::vector<NodeInventory> inventories_;
  std::vector<std::string> live_;
  int next_pod_ = 0;
  int placed_ = 0;
};

TEST(LedgerPropertyTest, InvariantsHoldAfterEveryRandomOperation) {
  Driver driver(20261122);
  for (int step = 0; step < kOperations; ++step) {
    int op = driver.Uniform(0, 99);
    if (op < 55) {
      driver.Allocate();
    } else if (op < 97) {
      driver.Release();
    } else {
      driver.Rebuild();
    }
    if (::testing::Test::HasFatalFailure()) {
      FAIL() << "at step " << step;
    }
    driver.Check();
    if (::testing::Test::HasFatalFailure()) {
      FAIL() << "at step " << step;
    }
  }
  // The walk must have exercised real placements, not only rejections.
  EXPECT_GT(driver.placed(), kOperations / 10);
}

}  // namespace
}  // namespace deviceshare
