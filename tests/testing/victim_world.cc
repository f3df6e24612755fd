#include "testing/victim_world.h"

#include "deviceshare/builtin_backends.h"
#include "deviceshare/hamicore/hamicore_backend.h"
#include "deviceshare/mig/mig_backend.h"
#include "deviceshare/mps/mps_backend.h"
#include "deviceshare/policy/policy_registry.h"
#include "testing/builders.h"

namespace deviceshare::testing {

Gpu ModeGpu(const std::string& node, int index, SharingMode mode,
            int64_t memory_mib, int split) {
  Gpu gpu = MakeGpu(node, index, memory_mib, split);
  gpu.mode = mode;
  gpu.mig_capable = mode == mig::kMode;
  gpu.mps_capable = mode == mps::kMode;
  return gpu;
}

VictimWorld::VictimWorld() {
  BackendRegistry registry;
  status_ = RegisterBuiltinBackends(registry);
  if (!status_.ok()) return;
  config_.scheduler.enabled_modes = {hamicore::kMode, mig::kMode, mps::kMode};
  absl::StatusOr<BackendSet> backends = BackendSet::Create(registry, config_);
  absl::StatusOr<PolicySet> policies =
      PolicySet::Create(BuiltinPolicies(), config_);
  if (!backends.ok() || !policies.ok()) {
    status_ = !backends.ok() ? backends.status() : policies.status();
    return;
  }
  backends_ = std::make_unique<BackendSet>(*std::move(backends));
  policies_ = std::make_unique<PolicySet>(*std::move(policies));
  path_ = std::make_unique<DecisionPath>(&config_, backends_.get(),
                                         policies_.get());
  state_ = std::make_unique<ClusterState>(backends_.get());
  search_ =
      std::make_unique<preemption::VictimSearch>(path_.get(), backends_.get());
}

bool VictimWorld::Place(const PodRequest& pod, const std::string& node) {
  absl::StatusOr<PodCycle> cycle = path_->PreFilter(pod, state_.get());
  if (!cycle.ok()) return false;
  const NodeState* target = state_->FindNode(node);
  if (target == nullptr) return false;
  NodeVerdict verdict = path_->Filter(*cycle, *target, /*explain=*/false);
  return verdict.fit.fits() && state_->AddPod(pod, verdict.fit.allocation).ok();
}

}  // namespace deviceshare::testing
