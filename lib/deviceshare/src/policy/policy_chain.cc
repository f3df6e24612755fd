#include "deviceshare/policy/policy_chain.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_join.h"
#include "deviceshare/policy/builtin_policies.h"

namespace deviceshare {
namespace {

// One policy, with the pod's weights.
class WeightedPolicy final : public PlacementPolicy {
 public:
  WeightedPolicy(const PlacementPolicy* policy,
                 const DeviceScoringWeights& weights)
      : policy_(policy), weights_(weights) {}

  absl::string_view name() const override { return policy_->name(); }
  int GpuScore(const DeviceLedger& ledger,
               const PodCharge& extra) const override {
    return policy_->WeightedGpuScore(ledger, extra, weights_);
  }
  int WeightedGpuScore(const DeviceLedger& ledger, const PodCharge& extra,
                       const DeviceScoringWeights& weights) const override {
    return policy_->WeightedGpuScore(ledger, extra, weights);
  }
  GpuRank RankGpu(int64_t offer_score, const Gpu& gpu) const override {
    return policy_->RankGpu(offer_score, gpu);
  }
  bool ranks_on_node() const override { return policy_->ranks_on_node(); }
  GpuRank RankGpuOnNode(const PodRequest& pod, const NodeState& node,
                        size_t position, const PodCharge& extra,
                        int64_t offer_score) const override {
    return policy_->RankGpuOnNode(pod, node, position, extra, offer_score);
  }
  bool picks_gpus() const override { return policy_->picks_gpus(); }
  std::vector<size_t> PickGpus(absl::Span<const GpuCandidate> ranked,
                               int32_t want) const override {
    return policy_->PickGpus(ranked, want);
  }
  ChainRole chain_role() const override { return policy_->chain_role(); }
  ReasonCode GpuAdmits(
      const DeviceLedger& ledger,
      absl::Span<const ContainerShare> pod_shares_here) const override {
    return policy_->GpuAdmits(ledger, pod_shares_here);
  }
  int NodeScore(const NodeState& node,
                const PodAllocation& placement) const override {
    return policy_->NodeScore(node, placement);
  }
  int NodeScoreFor(const PodRequest& pod, const NodeState& node,
                   const PodAllocation& placement) const override {
    return policy_->NodeScoreFor(pod, node, placement);
  }
  int ScoreBound(const UtilisationRange& after) const override {
    return policy_->ScoreBound(after);
  }

 private:
  const PlacementPolicy* policy_;
  DeviceScoringWeights weights_;
};

class PolicyChain final : public PlacementPolicy {
 public:
  PolicyChain(std::vector<const PlacementPolicy*> policies,
              const DeviceScoringWeights& weights, bool numa_bind)
      : policies_(std::move(policies)), weights_(weights) {
    std::vector<absl::string_view> names;
    for (const PlacementPolicy* policy : policies_) {
      names.push_back(policy->name());
      if (policy->chain_role() != ChainRole::kFilter) AddKey(policy);
      if (picker_ == nullptr && policy->picks_gpus()) picker_ = policy;
    }
    name_ = absl::StrJoin(names, ",");
    if (keys_.empty()) keys_.push_back(&SpreadPolicy());
    if (numa_bind && keys_.front()->chain_role() != ChainRole::kNumaKey) {
      keys_.erase(std::remove_if(keys_.begin(), keys_.end(),
                                 [](const PlacementPolicy* key) {
                                   return key->chain_role() ==
                                          ChainRole::kNumaKey;
                                 }),
                  keys_.end());
      keys_.insert(keys_.begin(), &NumaPolicy());
    }
    for (const PlacementPolicy* key : keys_) {
      if (key->chain_role() == ChainRole::kScoreKey) {
        scorer_ = key;
        break;
      }
    }
  }

  absl::string_view name() const override { return name_; }
  int GpuScore(const DeviceLedger& ledger,
               const PodCharge& extra) const override {
    return WeightedGpuScore(ledger, extra, weights_);
  }
  int WeightedGpuScore(const DeviceLedger& ledger, const PodCharge& extra,
                       const DeviceScoringWeights& weights) const override {
    return scorer_ == nullptr
               ? 0
               : scorer_->WeightedGpuScore(ledger, extra, weights);
  }
  // The keys in order; a second score key only repeats (or reverses) the
  // first, so it adds nothing. The index last: HAMi sorts it ascending and
  // takes from the end.
  GpuRank RankGpu(int64_t offer_score, const Gpu& gpu) const override {
    GpuRank rank{};
    size_t at = 0;
    bool scored = false;
    for (const PlacementPolicy* key : keys_) {
      if (key->chain_role() == ChainRole::kNumaKey) {
        rank[at++] = gpu.numa_node;
      } else if (!scored) {
        rank[at++] = offer_score;
        scored = true;
      }
    }
    if (!scored && at < rank.size() - 1) rank[at++] = offer_score;
    rank[at] = gpu.index;
    return rank;
  }
  bool picks_gpus() const override { return picker_ != nullptr; }
  std::vector<size_t> PickGpus(absl::Span<const GpuCandidate> ranked,
                               int32_t want) const override {
    return picker_ != nullptr ? picker_->PickGpus(ranked, want)
                              : PlacementPolicy::PickGpus(ranked, want);
  }
  ReasonCode GpuAdmits(
      const DeviceLedger& ledger,
      absl::Span<const ContainerShare> pod_shares_here) const override {
    for (const PlacementPolicy* policy : policies_) {
      const ReasonCode code = policy->GpuAdmits(ledger, pod_shares_here);
      if (code != ReasonCode::kFits) return code;
    }
    return ReasonCode::kFits;
  }
  int NodeScore(const NodeState& node,
                const PodAllocation& placement) const override {
    return NodeLevel().NodeScore(node, placement);
  }
  int ScoreBound(const UtilisationRange& after) const override {
    return NodeLevel().ScoreBound(after);
  }

 private:
  void AddKey(const PlacementPolicy* policy) {
    if (std::find(keys_.begin(), keys_.end(), policy) == keys_.end()) {
      keys_.push_back(policy);
    }
  }
  const PlacementPolicy& NodeLevel() const {
    return scorer_ != nullptr ? *scorer_ : SpreadPolicy();
  }

  std::vector<const PlacementPolicy*> policies_;
  DeviceScoringWeights weights_;
  std::vector<const PlacementPolicy*> keys_;  // sort keys, in order
  const PlacementPolicy* scorer_ = nullptr;   // the first score key
  const PlacementPolicy* picker_ = nullptr;
  std::string name_;
};

}  // namespace

std::unique_ptr<PlacementPolicy> MakePolicyChain(
    std::vector<const PlacementPolicy*> policies,
    const DeviceScoringWeights& weights, bool numa_bind, bool written_as_list) {
  if (policies.size() == 1 && !written_as_list) {
    return std::make_unique<WeightedPolicy>(policies.front(), weights);
  }
  return std::make_unique<PolicyChain>(std::move(policies), weights, numa_bind);
}

}  // namespace deviceshare
