// binpack: the fuller a node or GPU is after the placement, the better.
#include "deviceshare/policy/builtin_policies.h"
#include "deviceshare/policy/scoring.h"

namespace deviceshare {
namespace {

class BinpackPolicyImpl final : public PlacementPolicy {
 public:
  absl::string_view name() const override { return kBinpackPolicyName; }
  int GpuScore(const DeviceLedger& ledger,
               const PodCharge& extra) const override {
    return GpuUtilisationAfter(ledger, extra);
  }
  int WeightedGpuScore(const DeviceLedger& ledger, const PodCharge& extra,
                       const DeviceScoringWeights& weights) const override {
    return GpuUtilisationAfter(ledger, extra, weights);
  }
  int NodeScore(const NodeState& node,
                const PodAllocation& placement) const override {
    return NodeUtilisationAfter(node, placement);
  }
  int ScoreBound(const UtilisationRange& after) const override {
    return after.most();
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<PlacementPolicy>> NewBinpackPolicy(
    const Config& config) {
  return std::make_unique<BinpackPolicyImpl>();
}

const PlacementPolicy& BinpackPolicy() {
  static const BinpackPolicyImpl* const policy = new BinpackPolicyImpl;
  return *policy;
}

}  // namespace deviceshare
