// File: testing/victim_world.h
//
// VictimWorld: a cluster state with every built-in backend enabled
// (hami-core, mig, mps), its decision path and a VictimSearch over it: what
// the preemption tests and bench/victim_search_bench set up. No gtest, so
// a benchmark can use it too.
//
// Thread safety: none.
#ifndef DEVICESHARE_TESTS_TESTING_VICTIM_WORLD_H_
#define DEVICESHARE_TESTS_TESTING_VICTIM_WORLD_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "deviceshare/backend/backend_set.h"
#include "deviceshare/config/scheduler_config.h"
#include "deviceshare/model/gpu.h"
#include "deviceshare/policy/policy_set.h"
#include "deviceshare/preemption/victim_search.h"
#include "deviceshare/scheduler/cluster_state.h"
#include "deviceshare/scheduler/decision_path.h"

namespace deviceshare::testing {

// GPU `index` of `node` (uuid "GPU-<node>-<index>", an A100-80GB) run in
// `mode`, `memory_mib` MiB.
Gpu ModeGpu(const std::string& node, int index, SharingMode mode,
            int64_t memory_mib = 81920, int split = 10);

class VictimWorld {
 public:
  VictimWorld();

  // Whether the backends and policies were made; nothing else is usable
  // when not.
  const absl::Status& status() const { return status_; }

  ClusterState& state() { return *state_; }
  const ClusterState& state() const { return *state_; }
  const DecisionPath& path() const { return *path_; }
  const BackendSet& backends() const { return *backends_; }
  const preemption::VictimSearch& search() const { return *search_; }

  // Places `pod` on `node` as the decision path chooses; false when it
  // does not fit there.
  bool Place(const PodRequest& pod, const std::string& node);

 private:
  absl::Status status_;
  Config config_;
  std::unique_ptr<BackendSet> backends_;
  std::unique_ptr<PolicySet> policies_;
  std::unique_ptr<DecisionPath> path_;
  std::unique_ptr<ClusterState> state_;
  std::unique_ptr<preemption::VictimSearch> search_;
};

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_VICTIM_WORLD_H_
