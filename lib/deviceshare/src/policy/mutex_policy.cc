// mutex: one pod per GPU (HAMi's gpu-scheduler-policy mutex); among the
// idle GPUs, and between nodes, as spread.
#include "deviceshare/policy/builtin_policies.h"
#include "deviceshare/policy/scoring.h"

namespace deviceshare {
namespace {

class MutexPolicyImpl final : public PlacementPolicy {
 public:
  absl::string_view name() const override { return kMutexPolicyName; }
  int GpuScore(const DeviceLedger& ledger,
               const PodCharge& extra) const override {
    return 100 - GpuUtilisationAfter(ledger, extra);
  }
  // HAMi counts the pod's own earlier containers as tenants too.
  ReasonCode GpuAdmits(
      const DeviceLedger& ledger,
      absl::Span<const ContainerShare> pod_shares_here) const override {
    return ledger.idle() && pod_shares_here.empty()
               ? ReasonCode::kFits
               : ReasonCode::kExclusiveConflict;
  }
  int NodeScore(const NodeState& node,
                const PodAllocation& placement) const override {
    return 100 - NodeUtilisationAfter(node, placement);
  }
  int ScoreBound(const UtilisationRange& after) const override {
    return 100 - after.least();
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<PlacementPolicy>> NewMutexPolicy(
    const Config& config) {
  return std::make_unique<MutexPolicyImpl>();
}

}  // namespace deviceshare
