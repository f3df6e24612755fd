// File: preemption/victim_fixture.h
//
// A cluster with every built-in backend enabled (hami-core, mig, mps), its
// decision path and a VictimSearch over it, plus builders that bind pods
// with hand-chosen shares, so that each test sets up exactly the node it
// describes. Header-only: the suite compiles *_test.cc files alone.
#ifndef DEVICESHARE_TESTS_PREEMPTION_VICTIM_FIXTURE_H_
#define DEVICESHARE_TESTS_PREEMPTION_VICTIM_FIXTURE_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/hamicore/hamicore_backend.h"
#include "deviceshare/mig/mig_backend.h"
#include "deviceshare/mps/mps_backend.h"
#include "deviceshare/preemption/victim_search.h"
#include "deviceshare/scheduler/cluster_state.h"
#include "deviceshare/scheduler/decision_path.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/status_matchers.h"
#include "testing/victim_world.h"

namespace deviceshare::preemption::testing {

using ::deviceshare::testing::ModeGpu;

class VictimFixture {
 public:
  VictimFixture() { EXPECT_OK(world_.status()); }

  void AddNode(const std::string& name, std::vector<Gpu> gpus,
               int64_t cpu_milli = 0) {
    NodeInventory inventory;
    inventory.name = name;
    inventory.gpus = std::move(gpus);
    inventory.cpu_milli = cpu_milli;
    EXPECT_OK(world_.state().UpsertNode(std::move(inventory)));
  }

  // Binds pod `name` (uid "uid-<name>") on `node` with one container that
  // holds `grants` (one per GPU).
  void Bind(const std::string& node, const std::string& name,
            std::vector<DeviceGrant> grants, int64_t cpu_milli = 0) {
    ContainerRequest container;
    container.name = "c0";
    container.gpu_count = static_cast<int32_t>(grants.size());
    if (!grants.empty()) {
      container.memory_mib = grants.front().memory_mib;
      container.cores = grants.front().cores;
      container.mig_profile = grants.front().mig.profile;
    }
    PodRequest pod = deviceshare::testing::MakePod(name, {container});
    pod.cpu_milli = cpu_milli;
    PodAllocation allocation;
    allocation.pod_uid = pod.uid;
    allocation.pod_key = pod.Key();
    allocation.node_name = node;
    allocation.containers.push_back(
        deviceshare::testing::Container(0, false, std::move(grants)));
    EXPECT_OK(world_.state().AddPod(pod, allocation)) << name;
  }

  // A share of GPU `index` of `node` in `mode`.
  static DeviceGrant Share(const std::string& node, int index,
                           int64_t memory_mib, int32_t cores = 0,
                           SharingMode mode = hamicore::kMode) {
    DeviceGrant grant = deviceshare::testing::Grant(
        absl::StrCat("GPU-", node, "-", index), memory_mib, cores);
    grant.mode = mode;
    return grant;
  }

  // A MIG instance `profile` at memory slice `start` (`size` slices) of
  // GPU `index`, charged `memory_mib` and `cores` (the catalog's figures).
  static DeviceGrant Instance(const std::string& node, int index,
                              const std::string& profile, int32_t start,
                              int32_t size, int64_t memory_mib, int32_t cores) {
    DeviceGrant grant = Share(node, index, memory_mib, cores, mig::kMode);
    grant.mig = MigSlot{profile, start, size, "", -1};
    return grant;
  }

  absl::StatusOr<VictimSet> Find(
      const PodRequest& pending, int32_t priority, const std::string& node,
      std::vector<VictimCandidate> candidates,
      std::map<std::string, int32_t, std::less<>> disruptions_left = {},
      VictimBudget budget = {}) {
    absl::StatusOr<PodCycle> cycle =
        world_.path().PreFilter(pending, &world_.state());
    if (!cycle.ok()) return cycle.status();
    cycle_ = *std::move(cycle);
    VictimQuery query;
    query.cycle = &cycle_;
    query.priority = priority;
    query.node = node;
    query.candidates = std::move(candidates);
    query.disruptions_left = std::move(disruptions_left);
    query.budget = budget;
    return world_.search().Find(world_.state(), query);
  }

  // Places `pod` on `node` as the decision path chooses; false when it
  // does not fit there.
  bool Place(const PodRequest& pod, const std::string& node) {
    return world_.Place(pod, node);
  }

  const ClusterState& state() const { return world_.state(); }
  const DecisionPath& path() const { return world_.path(); }
  const BackendSet& backends() const { return world_.backends(); }
  const PodCycle& cycle() const { return cycle_; }

 private:
  deviceshare::testing::VictimWorld world_;
  PodCycle cycle_;
};

// Candidate "uid-<name>".
inline VictimCandidate Candidate(const std::string& name, int32_t priority,
                                 std::string group = "",
                                 bool evictable = true) {
  return VictimCandidate{absl::StrCat("uid-", name), priority, evictable,
                         std::move(group)};
}

}  // namespace deviceshare::preemption::testing

#endif  // DEVICESHARE_TESTS_PREEMPTION_VICTIM_FIXTURE_H_
