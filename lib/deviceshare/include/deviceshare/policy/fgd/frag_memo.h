// File: policy/fgd/frag_memo.h
//
// PackedNode: a node as the fragmentation measure sees it (model, CPU
// left, milli-GPU left per GPU), as a small fixed-size value that costs no
// allocation to build, copy or hash; FragMemo: FragMilli per thread, keyed
// by the workload's id and the packed node with its GPUs sorted, so
// nodes (and a node's GPUs) in equal states cost one evaluation. Keys are
// whole values and models are interned to exact ids, so a hit is exact.
// Nodes of more than kMostPackedGpus GPUs are measured without the memo.
//
// Thread safety: PackedNode is a value; the memo is per thread.
#ifndef DEVICESHARE_POLICY_FGD_FRAG_MEMO_H_
#define DEVICESHARE_POLICY_FGD_FRAG_MEMO_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>

#include "absl/types/span.h"
#include "deviceshare/model/device_ledger.h"
#include "deviceshare/model/node_state.h"
#include "deviceshare/model/pod_allocation.h"
#include "deviceshare/model/pod_request.h"
#include "deviceshare/model/workload_shape.h"

namespace deviceshare::fgd {

inline constexpr size_t kMostPackedGpus = 16;

struct PackedNode {
  uint32_t model_id = 0;  // interned per thread
  uint32_t gpu_count = 0;
  int64_t cpu_milli_left = 0;
  std::array<int16_t, kMostPackedGpus> milli_left{};  // 0..1000

  friend bool operator==(const PackedNode&, const PackedNode&) = default;
  // As six 64-bit words: absl mixes integers far faster than it hashes
  // an array's bytes, and the memo hashes a node per GPU scored.
  template <typename H>
  friend H AbslHashValue(H h, const PackedNode& node) {
    std::array<uint64_t, sizeof(PackedNode) / sizeof(uint64_t)> words;
    std::memcpy(words.data(), &node, sizeof(words));
    return H::combine(std::move(h), words[0], words[1], words[2], words[3],
                      words[4], words[5]);
  }
};
static_assert(sizeof(PackedNode) == 6 * sizeof(uint64_t),
              "PackedNode hashes as six words with no padding");

// `node` packed; nullopt when it has more than kMostPackedGpus GPUs.
std::optional<PackedNode> Pack(const NodeState& node);

// `before` (Pack(node)) once `cpu_milli` more CPU and the grants of
// `placement` are charged to `node`.
PackedNode PackedAfter(const PackedNode& before, const NodeState& node,
                       int64_t cpu_milli, const PodAllocation& placement);

// `before` once `cpu_milli` more CPU and `extra` on the GPU at `position`
// of `node` are charged.
PackedNode PackedAfterShare(const PackedNode& before, const NodeState& node,
                            int64_t cpu_milli, size_t position,
                            const PodCharge& extra);

// FragMilli of `node` against `workload`, through this thread's memo.
// `workload_id` tells workloads apart: no two different workloads may
// share one (ids from NewWorkloadId()).
double MemoFragMilli(uint64_t workload_id,
                     absl::Span<const WorkloadShape> workload,
                     const PackedNode& node);

// FragGainBound of `node` against `workload`, through this thread's memo.
double MemoFragGainBound(uint64_t workload_id,
                         absl::Span<const WorkloadShape> workload,
                         const PackedNode& node, int64_t most_drop);

// A number no other call returns, for MemoFragMilli.
uint64_t NewWorkloadId();

// A node's FragMilli before and after a placement, through the memo when
// the node packs, else measured directly.
struct FragPair {
  double before = 0;
  double after = 0;
};
// ... of `pod`'s CPU and a share `extra` on the GPU at `position`.
FragPair MeasureShare(uint64_t workload_id,
                      absl::Span<const WorkloadShape> workload,
                      const NodeState& node, const PodRequest& pod,
                      size_t position, const PodCharge& extra);
// ... of `pod`'s CPU and the grants of `placement`.
FragPair MeasurePlacement(uint64_t workload_id,
                          absl::Span<const WorkloadShape> workload,
                          const NodeState& node, const PodRequest& pod,
                          const PodAllocation& placement);

}  // namespace deviceshare::fgd

#endif  // DEVICESHARE_POLICY_FGD_FRAG_MEMO_H_
