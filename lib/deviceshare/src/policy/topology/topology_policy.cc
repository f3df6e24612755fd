// topology-aware. GPU level, among every GPU that can take the share:
//   - when the node registered its links (Gpu::links: NVLink lanes, PCIe
//     level, NUMA), the link graph decides (policy/topology/
//     gpu_set_search.h): a container of several GPUs takes the set with the
//     most NVLink lanes, then the most pairs on one PCIe switch, then the
//     most pairs on one NUMA node; a container of one takes the GPU worst
//     linked to the others;
//   - otherwise HAMi's pair-score placement (device.go Fit with
//     needTopology; scores from hami.io/node-nvidia-score): one GPU takes
//     the one worst linked to the others (the lowest sum of its scores to
//     them), which keeps well-linked sets free; several take the set whose
//     pairs score the most.
// Ties go to the GPU, or set, that ranks first; the GPUs rank as spread.
//
// Node level (scheduler.nodePolicy / hami.io/node-scheduler-policy
// topology-aware): a placement whose containers take several GPUs of a
// node with links scores the link quality of those sets
// (LinkQualityScore: 51-100 with NVLink, 10-50 over PCIe; the worst
// container's set when there are several), and since the GPU level took
// each node's best set, the node that offers the better set wins. Any other
// placement (one GPU, shares, a node without links) scores as binpack, the
// node's utilisation after it, which keeps empty nodes, and their whole
// well-linked sets, free. A link score does not follow utilisation, so
// ScoreBound is 100 and every node that fits is evaluated.
#include <algorithm>
#include <cstdint>
#include <optional>

#include "deviceshare/policy/builtin_policies.h"
#include "deviceshare/policy/scoring.h"
#include "deviceshare/policy/topology/gpu_set_search.h"
#include "policy/spread_ranked_policy.h"

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

// The node score of one container's GPUs (positions in `node`), or
// nullopt when they are fewer than two or the node lists no links.
std::optional<int> ContainerLinkScore(const NodeState& node,
                                      const ContainerAllocation& container) {
  std::vector<const Gpu*> gpus;
  for (const DeviceGrant& grant : container.devices) {
    std::optional<size_t> at = node.FindGpuIndex(grant.gpu_index);
    if (!at) continue;
    const Gpu* gpu = &node.inventory().gpus[*at];
    if (std::find(gpus.begin(), gpus.end(), gpu) == gpus.end()) {
      gpus.push_back(gpu);
    }
  }
  if (gpus.size() < 2 || !AnyGpuLinks(gpus)) return std::nullopt;
  const LinkGraph graph(gpus);
  std::vector<size_t> all(gpus.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return LinkQualityScore(graph.SetQuality(all),
                          static_cast<int64_t>(gpus.size()));
}

class TopologyPolicyImpl final : public internal::SpreadRankedPolicy {
 public:
  absl::string_view name() const override { return kTopologyPolicyName; }
  bool picks_gpus() const override { return true; }
  std::vector<size_t> PickGpus(absl::Span<const GpuCandidate> ranked,
                               int32_t want) const override {
    std::vector<const Gpu*> gpus;
    gpus.reserve(ranked.size());
    for (const GpuCandidate& candidate : ranked) gpus.push_back(candidate.gpu);
    if (AnyGpuLinks(gpus) && gpus.size() <= LinkGraph::kMaxVertices) {
      const LinkGraph graph(gpus);
      if (want == 1) return {WorstLinkedGpu(graph)};
      std::vector<size_t> best = BestGpuSet(graph, want);
      if (!best.empty()) return best;
      return PlacementPolicy::PickGpus(ranked, want);
    }
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

  int NodeScore(const NodeState& node,
                const PodAllocation& placement) const override {
    std::optional<int> worst;
    for (const ContainerAllocation& container : placement.containers) {
      std::optional<int> score = ContainerLinkScore(node, container);
      if (score && (!worst || *score < *worst)) worst = score;
    }
    return worst ? *worst : NodeUtilisationAfter(node, placement);
  }
  int ScoreBound(const UtilisationRange& after) const override { return 100; }
  int UtilisationScore(int percent) const override { return percent; }
};

}  // namespace

absl::StatusOr<std::unique_ptr<PlacementPolicy>> NewTopologyPolicy(
    const Config& config) {
  return std::make_unique<TopologyPolicyImpl>();
}

}  // namespace deviceshare
