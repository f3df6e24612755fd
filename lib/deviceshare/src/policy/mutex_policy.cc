// mutex: one pod per GPU (HAMi's gpu-scheduler-policy mutex); among the
// idle GPUs, and between nodes, it ranks as spread does.
#include "deviceshare/policy/builtin_policies.h"
#include "spread_ranked_policy.h"

namespace deviceshare {
namespace {

class MutexPolicyImpl final : public internal::SpreadRankedPolicy {
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
  ChainRole chain_role() const override { return ChainRole::kFilter; }
};

}  // namespace

absl::StatusOr<std::unique_ptr<PlacementPolicy>> NewMutexPolicy(
    const Config& config) {
  return std::make_unique<MutexPolicyImpl>();
}

}  // namespace deviceshare
