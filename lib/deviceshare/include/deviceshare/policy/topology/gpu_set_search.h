// File: policy/topology/gpu_set_search.h
//
// Topology-aware multi-GPU placement over a node's link graph (the
// GpuLinks the node agent found: NVLink lanes, the PCIe level two GPUs
// share, whether their path stays on one NUMA node).
//
// Objective. The quality of a set S of k GPUs is, compared
// lexicographically (LinkQuality's member order):
//   1. the NVLink lanes summed over the pairs of S (bandwidth);
//   2. the number of pairs of S whose PCIe path is one switch or closer
//      (PcieLevel kSwitch or kBoard);
//   3. the number of pairs of S on one NUMA node.
// A pair's relation is read from both GPUs' links and the better one kept
// (more lanes, the closer PCIe level, same NUMA if either says so); a pair
// neither lists has no NVLink, no switch and is on one NUMA node when the
// two GPUs' numa_node are equal.
// Ties: the set whose positions, sorted, come first lexicographically (the
// candidates are given best ranked first, so the set that ranks first).
// A container of one GPU takes the GPU worst linked to the others (the
// lowest summed quality to them, first ranked on ties): HAMi's rule, which
// keeps the well-linked sets free for the pods that need them.
//
// Search. Exact branch-and-bound over subsets. The link graph is a
// boost::adjacency_matrix; the NVLink islands are its connected components
// over the NVLink pairs (boost::connected_components), and the search
// walks the islands richest first (most internal lanes) so a good set is
// found early and the bound prunes the rest. The bound on what r more
// GPUs can add is the sum of the r largest "2 x links to the chosen set +
// the r-1 best links of the GPU" halved; on ties the position order is a
// second key of the bound, so equal sets do not re-open the search. At
// most 64 candidates (bit sets); 16 GPUs take microseconds for any k
// (bench/topology_bench.cc).
#ifndef DEVICESHARE_POLICY_TOPOLOGY_GPU_SET_SEARCH_H_
#define DEVICESHARE_POLICY_TOPOLOGY_GPU_SET_SEARCH_H_

#include <compare>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "deviceshare/model/gpu.h"

namespace deviceshare {

// The objective of a set (or of one pair), compared lexicographically.
struct LinkQuality {
  int64_t nvlink_lanes = 0;
  int64_t switch_pairs = 0;  // pairs on one PCIe switch or closer
  int64_t numa_pairs = 0;    // pairs on one NUMA node

  friend auto operator<=>(const LinkQuality&, const LinkQuality&) = default;
  LinkQuality& operator+=(const LinkQuality& other) {
    nvlink_lanes += other.nvlink_lanes;
    switch_pairs += other.switch_pairs;
    numa_pairs += other.numa_pairs;
    return *this;
  }
};

// Whether any of `gpus` lists a link (the node registered its topology).
bool AnyGpuLinks(absl::Span<const Gpu* const> gpus);

// The link graph of some GPUs of one node: vertex i is gpus[i]; links to
// GPUs not among them are ignored.
class LinkGraph {
 public:
  // Search and bit sets hold at most this many vertices.
  static constexpr size_t kMaxVertices = 64;

  explicit LinkGraph(absl::Span<const Gpu* const> gpus);

  size_t size() const { return size_; }
  const LinkQuality& Pair(size_t a, size_t b) const {
    return pairs_[a * size_ + b];
  }
  // The summed quality of the pairs of `set` (vertices).
  LinkQuality SetQuality(absl::Span<const size_t> set) const;
  // NVLink islands: vertices joined by NVLink paths, each ascending, the
  // islands by their smallest vertex; a GPU without NVLink is one alone.
  const std::vector<std::vector<size_t>>& islands() const { return islands_; }

 private:
  size_t size_ = 0;
  std::vector<LinkQuality> pairs_;  // size_ x size_, symmetric
  std::vector<std::vector<size_t>> islands_;
};

// The best set of `k` vertices of `graph` (ascending): the objective above,
// ties to the lexicographically first. Empty when k < 1, k > size() or
// size() > LinkGraph::kMaxVertices.
std::vector<size_t> BestGpuSet(const LinkGraph& graph, int32_t k);

// The vertex worst linked to the others (lowest summed LinkQuality), the
// first on ties; 0 for a graph of one vertex. REQUIRES: size() >= 1.
size_t WorstLinkedGpu(const LinkGraph& graph);

// A set's quality on a node-score scale, comparable across nodes: a set
// with NVLink scores 51..100 by its mean lanes per pair (full at
// kFullNvlinkLanes), a PCIe-only set 10..50 by its shares of pairs on one
// switch (25) and one NUMA node (15). `k` >= 2 GPUs.
inline constexpr int64_t kFullNvlinkLanes = 18;  // an H100's NVLink count
int LinkQualityScore(const LinkQuality& quality, int64_t k);

}  // namespace deviceshare

#endif  // DEVICESHARE_POLICY_TOPOLOGY_GPU_SET_SEARCH_H_
