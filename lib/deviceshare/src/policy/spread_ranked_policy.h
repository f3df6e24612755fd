// SpreadRankedPolicy: the base of HAMi's GPU-level policies that rank GPUs,
// and score nodes, as spread does (mutex, numa, topology-aware): each adds
// only what makes it itself.
#ifndef DEVICESHARE_POLICY_SPREAD_RANKED_POLICY_H_
#define DEVICESHARE_POLICY_SPREAD_RANKED_POLICY_H_

#include "deviceshare/policy/builtin_policies.h"
#include "deviceshare/policy/placement_policy.h"

namespace deviceshare::internal {

class SpreadRankedPolicy : public PlacementPolicy {
 public:
  int GpuScore(const DeviceLedger& ledger,
               const PodCharge& extra) const override {
    return SpreadPolicy().GpuScore(ledger, extra);
  }
  int WeightedGpuScore(const DeviceLedger& ledger, const PodCharge& extra,
                       const DeviceScoringWeights& weights) const override {
    return SpreadPolicy().WeightedGpuScore(ledger, extra, weights);
  }
  int NodeScore(const NodeState& node,
                const PodAllocation& placement) const override {
    return SpreadPolicy().NodeScore(node, placement);
  }
  int ScoreBound(const UtilisationRange& after) const override {
    return SpreadPolicy().ScoreBound(after);
  }
};

}  // namespace deviceshare::internal

#endif  // DEVICESHARE_POLICY_SPREAD_RANKED_POLICY_H_
