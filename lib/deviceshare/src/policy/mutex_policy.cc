// mutex: one pod per GPU (HAMi's gpu-scheduler-policy mutex); among the
// idle GPUs, and between nodes, it ranks as spread does.
#include "deviceshare/policy/builtin_policies.h"

namespace deviceshare {
namespace {

class MutexPolicyImpl final : public PlacementPolicy {
 public:
  absl::string_view name() const override { return kMutexPolicyName; }
  // HAMi counts the pod's own earlier containers as tenants too.
  ReasonCode GpuAdmits(
      const DeviceLedger& ledger,
      absl::Span<const ContainerShare> pod_shares_here) const override {
    return ledger.idle() && pod_shares_here.empty()
               ? ReasonCode::kFits
               : ReasonCode::kExclusiveConflict;
  }
  int GpuScore(const DeviceLedger& ledger,
               const PodCharge& extra) const override {
    return SpreadPolicy().GpuScore(ledger, extra);
  }
  int WeightedGpuScore(const DeviceLedger& ledger, const PodCharge& extra,
                       const DeviceScoringWeights& weights) const override {
    return SpreadPolicy().WeightedGpuScore(ledger, extra, weights);
  }
  ChainRole chain_role() const override { return ChainRole::kFilter; }
  int NodeScore(const NodeState& node,
                const PodAllocation& placement) const override {
    return SpreadPolicy().NodeScore(node, placement);
  }
  int ScoreBound(const UtilisationRange& after) const override {
    return SpreadPolicy().ScoreBound(after);
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<PlacementPolicy>> NewMutexPolicy(
    const Config& config) {
  return std::make_unique<MutexPolicyImpl>();
}

}  // namespace deviceshare
