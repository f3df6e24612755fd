#include "deviceshare/policy/topology/gpu_set_search.h"

#include <algorithm>
#include <functional>
#include <numeric>

#include "boost/graph/adjacency_matrix.hpp"
#include "boost/graph/connected_components.hpp"

namespace deviceshare {
namespace {

using NvlinkGraph = boost::adjacency_matrix<boost::undirectedS>;

// The relation of a to b as a's links say (nullptr: none listed).
const GpuLink* LinkTo(const Gpu& a, const Gpu& b) {
  for (const GpuLink& link : a.links) {
    if (link.peer_index == b.index) return &link;
  }
  return nullptr;
}

LinkQuality PairQuality(const Gpu& a, const Gpu& b) {
  const GpuLink* ab = LinkTo(a, b);
  const GpuLink* ba = LinkTo(b, a);
  LinkQuality q;
  if (ab == nullptr && ba == nullptr) {
    q.numa_pairs = a.numa_node == b.numa_node ? 1 : 0;
    return q;
  }
  int64_t lanes = 0;
  PcieLevel level = PcieLevel::kSystem;
  bool numa = false;
  for (const GpuLink* link : {ab, ba}) {
    if (link == nullptr) continue;
    lanes = std::max<int64_t>(lanes, link->nvlinks);
    level = std::min(level, link->pcie);
    numa = numa || link->same_numa || link->pcie <= PcieLevel::kNuma;
  }
  q.nvlink_lanes = lanes;
  q.switch_pairs = level <= PcieLevel::kSwitch ? 1 : 0;
  q.numa_pairs = numa ? 1 : 0;
  return q;
}

// The objective as one integer with the same order: lanes, then switch
// pairs, then NUMA pairs, each sum below 2^12 pairs (at most 64 vertices:
// 2,016 pairs) and lanes clamped to 2^20 a pair.
constexpr int kFieldBits = 12;
constexpr int64_t kMostLanes = int64_t{1} << 20;

int64_t Weight(const LinkQuality& q) {
  const int64_t lanes = std::clamp<int64_t>(q.nvlink_lanes, 0, kMostLanes);
  return (lanes << (2 * kFieldBits)) | (q.switch_pairs << kFieldBits) |
         q.numa_pairs;
}

// Branch and bound over the vertices in `order_`; a set is a bit set with
// vertex v at bit (n - 1 - v), so of two sets of one size the
// lexicographically first has the larger bits: (weight, bits) is the
// total order to maximise.
class SetSearch {
 public:
  SetSearch(const LinkGraph& graph, std::vector<size_t> order, int32_t k)
      : n_(graph.size()),
        k_(k),
        order_(std::move(order)),
        weight_(n_ * n_, 0),
        best_links_(n_),
        gain_(n_, 0),
        rest_bits_(n_ + 1, 0) {
    for (size_t a = 0; a < n_; ++a) {
      std::vector<int64_t> row;
      row.reserve(n_);
      for (size_t b = 0; b < n_; ++b) {
        if (a == b) continue;
        weight_[a * n_ + b] = Weight(graph.Pair(a, b));
        row.push_back(weight_[a * n_ + b]);
      }
      std::sort(row.begin(), row.end(), std::greater<>());
      // best_links_[a][j]: the sum of a's j best links.
      best_links_[a].assign(row.size() + 1, 0);
      std::partial_sum(row.begin(), row.end(), best_links_[a].begin() + 1);
    }
    for (size_t i = n_; i-- > 0;) {
      rest_bits_[i] = rest_bits_[i + 1] | Bit(order_[i]);
    }
    bound_.reserve(n_);
  }

  uint64_t Run() {
    Visit(0, 0, 0, 0);
    return best_bits_;
  }

 private:
  uint64_t Bit(size_t v) const { return uint64_t{1} << (n_ - 1 - v); }

  void Visit(size_t at, int32_t chosen, int64_t weight, uint64_t bits) {
    if (chosen == k_) {
      if (!found_ || weight > best_weight_ ||
          (weight == best_weight_ && bits > best_bits_)) {
        found_ = true;
        best_weight_ = weight;
        best_bits_ = bits;
      }
      return;
    }
    const int32_t left = k_ - chosen;
    if (n_ - at < static_cast<size_t>(left)) return;
    if (found_) {
      // Twice what `left` more vertices can add, at most: each adds its
      // links to the chosen ones and half of its links to the others.
      bound_.clear();
      for (size_t i = at; i < n_; ++i) {
        const size_t v = order_[i];
        bound_.push_back(2 * gain_[v] + best_links_[v][left - 1]);
      }
      std::nth_element(bound_.begin(), bound_.begin() + (left - 1),
                       bound_.end(), std::greater<>());
      const int64_t most =
          weight +
          std::accumulate(bound_.begin(), bound_.begin() + left, int64_t{0}) /
              2;
      if (most < best_weight_) return;
      if (most == best_weight_ && (bits | rest_bits_[at]) <= best_bits_) {
        return;
      }
    }
    const size_t v = order_[at];
    for (size_t i = at + 1; i < n_; ++i) {
      gain_[order_[i]] += weight_[v * n_ + order_[i]];
    }
    Visit(at + 1, chosen + 1, weight + gain_[v], bits | Bit(v));
    for (size_t i = at + 1; i < n_; ++i) {
      gain_[order_[i]] -= weight_[v * n_ + order_[i]];
    }
    Visit(at + 1, chosen, weight, bits);
  }

  const size_t n_;
  const int32_t k_;
  const std::vector<size_t> order_;
  std::vector<int64_t> weight_;
  std::vector<std::vector<int64_t>> best_links_;
  std::vector<int64_t> gain_;        // links of each vertex to the chosen ones
  std::vector<uint64_t> rest_bits_;  // bits of order_[i..n)
  std::vector<int64_t> bound_;
  bool found_ = false;
  int64_t best_weight_ = 0;
  uint64_t best_bits_ = 0;
};

// The search order: the islands with the most NVLink lanes inside first
// (then the larger, then the one with the smaller vertex), each island's
// vertices ascending.
std::vector<size_t> SearchOrder(const LinkGraph& graph) {
  struct Island {
    const std::vector<size_t>* vertices;
    int64_t lanes;
  };
  std::vector<Island> islands;
  for (const std::vector<size_t>& vertices : graph.islands()) {
    islands.push_back({&vertices, graph.SetQuality(vertices).nvlink_lanes});
  }
  std::stable_sort(islands.begin(), islands.end(),
                   [](const Island& a, const Island& b) {
                     if (a.lanes != b.lanes) return a.lanes > b.lanes;
                     return a.vertices->size() > b.vertices->size();
                   });
  std::vector<size_t> order;
  order.reserve(graph.size());
  for (const Island& island : islands) {
    order.insert(order.end(), island.vertices->begin(), island.vertices->end());
  }
  return order;
}

}  // namespace

bool AnyGpuLinks(absl::Span<const Gpu* const> gpus) {
  for (const Gpu* gpu : gpus) {
    if (!gpu->links.empty()) return true;
  }
  return false;
}

LinkGraph::LinkGraph(absl::Span<const Gpu* const> gpus)
    : size_(gpus.size()), pairs_(size_ * size_) {
  NvlinkGraph nvlink(size_);
  for (size_t a = 0; a < size_; ++a) {
    for (size_t b = a + 1; b < size_; ++b) {
      const LinkQuality q = PairQuality(*gpus[a], *gpus[b]);
      pairs_[a * size_ + b] = q;
      pairs_[b * size_ + a] = q;
      if (q.nvlink_lanes > 0) boost::add_edge(a, b, nvlink);
    }
  }
  std::vector<size_t> component(size_);
  const size_t count = size_ == 0
                           ? 0
                           : static_cast<size_t>(boost::connected_components(
                                 nvlink, component.data()));
  // Components are numbered in order of their smallest vertex.
  islands_.resize(count);
  for (size_t v = 0; v < size_; ++v) islands_[component[v]].push_back(v);
}

LinkQuality LinkGraph::SetQuality(absl::Span<const size_t> set) const {
  LinkQuality total;
  for (size_t i = 0; i < set.size(); ++i) {
    for (size_t j = i + 1; j < set.size(); ++j) total += Pair(set[i], set[j]);
  }
  return total;
}

std::vector<size_t> BestGpuSet(const LinkGraph& graph, int32_t k) {
  const size_t n = graph.size();
  if (k < 1 || static_cast<size_t>(k) > n || n > LinkGraph::kMaxVertices) {
    return {};
  }
  const uint64_t bits = SetSearch(graph, SearchOrder(graph), k).Run();
  std::vector<size_t> set;
  set.reserve(k);
  for (size_t v = 0; v < n; ++v) {
    if ((bits >> (n - 1 - v)) & 1) set.push_back(v);
  }
  return set;
}

size_t WorstLinkedGpu(const LinkGraph& graph) {
  size_t worst = 0;
  LinkQuality worst_total;
  for (size_t a = 0; a < graph.size(); ++a) {
    LinkQuality total;
    for (size_t b = 0; b < graph.size(); ++b) {
      if (a != b) total += graph.Pair(a, b);
    }
    if (a == 0 || total < worst_total) {
      worst = a;
      worst_total = total;
    }
  }
  return worst;
}

int LinkQualityScore(const LinkQuality& quality, int64_t k) {
  const int64_t pairs = k * (k - 1) / 2;
  if (pairs <= 0) return 0;
  if (quality.nvlink_lanes > 0) {
    const int64_t full = kFullNvlinkLanes * pairs;
    return static_cast<int>(51 +
                            49 * std::min(quality.nvlink_lanes, full) / full);
  }
  return static_cast<int>(10 + (25 * std::min(quality.switch_pairs, pairs) +
                                15 * std::min(quality.numa_pairs, pairs)) /
                                   pairs);
}

}  // namespace deviceshare
