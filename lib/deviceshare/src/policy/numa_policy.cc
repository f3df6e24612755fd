// numa: GPUs of the highest NUMA node first, then the highest index
// (HAMi's bare "numa", a one-key chain: gpu_policy.go lessByChain sorts
// NUMA then Index ascending and Fit takes from the end). Utilisation plays
// no part at the GPU level; between nodes it ranks as spread.
#include "deviceshare/policy/builtin_policies.h"
#include "spread_ranked_policy.h"

namespace deviceshare {
namespace {

class NumaPolicyImpl final : public internal::SpreadRankedPolicy {
 public:
  absl::string_view name() const override { return kNumaPolicyName; }
  int GpuScore(const DeviceLedger& ledger,
               const PodCharge& extra) const override {
    return 0;
  }
  int WeightedGpuScore(const DeviceLedger& ledger, const PodCharge& extra,
                       const DeviceScoringWeights& weights) const override {
    return 0;
  }
  // The backend's own preferences (a MIG offer that needs no repartition,
  // say) still rank before the index.
  GpuRank RankGpu(int64_t offer_score, const Gpu& gpu) const override {
    return GpuRank{gpu.numa_node, offer_score, gpu.index};
  }
  ChainRole chain_role() const override { return ChainRole::kNumaKey; }
};

}  // namespace

absl::StatusOr<std::unique_ptr<PlacementPolicy>> NewNumaPolicy(
    const Config& config) {
  return std::make_unique<NumaPolicyImpl>();
}

const PlacementPolicy& NumaPolicy() {
  static const NumaPolicyImpl* const policy = new NumaPolicyImpl;
  return *policy;
}

}  // namespace deviceshare
