// topology-aware: HAMi's pair-score placement (device.go Fit with
// needTopology; scores from hami.io/node-nvidia-score). Among every GPU
// that can take the share:
//   - a container of one GPU takes the one worst linked to the others (the
//     lowest sum of its scores to them), which keeps well-linked sets free;
//   - a container of several takes the set whose pairs score the most.
// Ties go to the GPU, or set, that ranks first; the GPUs rank as spread.
#include <cstdint>
#include <optional>

#include "deviceshare/policy/builtin_policies.h"
#include "spread_ranked_policy.h"

namespace deviceshare {
namespace {

// Sets are enumerated in full up to this many; beyond it (a node with
// dozens of fitting GPUs) the best-ranked GPUs are taken, as without the
// policy, instead of stalling the decision.
constexpr int64_t kMostSets = 100000;

int64_t ScoreTo(const Gpu& from, const Gpu& to) {
  for (const GpuPairScore& pair : from.pair_scores) {
    if (pair.peer_uuid == to.uuid) return pair.score;
  }
  return 0;
}

int64_t SetCount(int64_t n, int64_t k) {
  int64_t count = 1;
  for (int64_t i = 1; i <= k; ++i) {
    count = count * (n - k + i) / i;
    if (count > kMostSets) return kMostSets + 1;
  }
  return count;
}

size_t WorstLinked(absl::Span<const GpuCandidate> ranked) {
  std::optional<int64_t> worst;
  size_t pick = 0;
  for (size_t a = 0; a < ranked.size(); ++a) {
    int64_t total = 0;
    for (size_t b = 0; b < ranked.size(); ++b) {
      if (a != b) total += ScoreTo(*ranked[a].gpu, *ranked[b].gpu);
    }
    if (!worst || total < *worst) {
      worst = total;
      pick = a;
    }
  }
  return pick;
}

// Sets in lexicographic order of positions, so the first best set wins.
void BestSet(absl::Span<const GpuCandidate> ranked, size_t from, int32_t left,
             int64_t score, std::vector<size_t>& set,
             std::optional<int64_t>& best, std::vector<size_t>& best_set) {
  if (left == 0) {
    if (!best || score > *best) {
      best = score;
      best_set = set;
    }
    return;
  }
  for (size_t at = from; at + left <= ranked.size(); ++at) {
    int64_t added = 0;
    for (size_t in : set) added += ScoreTo(*ranked[in].gpu, *ranked[at].gpu);
    set.push_back(at);
    BestSet(ranked, at + 1, left - 1, score + added, set, best, best_set);
    set.pop_back();
  }
}

class TopologyPolicyImpl final : public internal::SpreadRankedPolicy {
 public:
  absl::string_view name() const override { return kTopologyPolicyName; }
  bool picks_gpus() const override { return true; }
  std::vector<size_t> PickGpus(absl::Span<const GpuCandidate> ranked,
                               int32_t want) const override {
    if (want == 1) return {WorstLinked(ranked)};
    if (SetCount(static_cast<int64_t>(ranked.size()), want) > kMostSets) {
      return PlacementPolicy::PickGpus(ranked, want);
    }
    std::vector<size_t> set;
    std::vector<size_t> best_set;
    std::optional<int64_t> best;
    BestSet(ranked, 0, want, 0, set, best, best_set);
    return best_set;
  }
  ChainRole chain_role() const override { return ChainRole::kFilter; }
};

}  // namespace

absl::StatusOr<std::unique_ptr<PlacementPolicy>> NewTopologyPolicy(
    const Config& config) {
  return std::make_unique<TopologyPolicyImpl>();
}

}  // namespace deviceshare
