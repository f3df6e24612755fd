// spread: the emptier a node or GPU is after the placement, the better.
#include "deviceshare/policy/builtin_policies.h"
#include "deviceshare/policy/scoring.h"

namespace deviceshare {
namespace {

class SpreadPolicyImpl final : public PlacementPolicy {
 public:
  absl::string_view name() const override { return kSpreadPolicyName; }
  int GpuScore(const DeviceLedger& ledger,
               const PodCharge& extra) const override {
    return 100 - GpuUtilisationAfter(ledger, extra);
  }
  int WeightedGpuScore(const DeviceLedger& ledger, const PodCharge& extra,
                       const DeviceScoringWeights& weights) const override {
    return 100 - GpuUtilisationAfter(ledger, extra, weights);
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

absl::StatusOr<std::unique_ptr<PlacementPolicy>> NewSpreadPolicy(
    const Config& config) {
  return std::make_unique<SpreadPolicyImpl>();
}

const PlacementPolicy& SpreadPolicy() {
  static const SpreadPolicyImpl* const policy = new SpreadPolicyImpl;
  return *policy;
}

}  // namespace deviceshare
