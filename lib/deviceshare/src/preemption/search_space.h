// File: src/preemption/search_space.h (internal)
//
// SearchSpace: the victim search's view of one query, built once: the
// query checked (bad input is an error naming the field), the candidates
// that may be victims and can matter to the pending pod, each with what
// it holds on the GPUs the pod could take, and the disruption groups'
// remaining budgets by index. See preemption/victim_search.h for the
// rules it applies.
//
// Thread safety: a value built per query.
#ifndef DEVICESHARE_SRC_PREEMPTION_SEARCH_SPACE_H_
#define DEVICESHARE_SRC_PREEMPTION_SEARCH_SPACE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "deviceshare/model/node_state.h"
#include "deviceshare/preemption/victim_search.h"
#include "deviceshare/scheduler/cluster_state.h"

namespace deviceshare::preemption::internal {

// Node positions fit a 64-bit mask.
inline constexpr size_t kMaxGpus = 64;

// What a victim frees on one GPU the pod could take (its ledger charge).
struct GpuRelease {
  size_t position = 0;
  int64_t memory_mib = 0;
  int32_t cores = 0;
  int32_t slots = 0;
};

// A candidate that may be a victim and matters to the pending pod.
struct Victim {
  const PodRecord* record = nullptr;
  int32_t priority = 0;
  int group = -1;           // index into SearchSpace::group_left; -1: none
  uint64_t gpu_mask = 0;    // usable GPUs where it holds shares
  int64_t freed_milli = 0;  // PodShareMilli on the node
  std::vector<GpuRelease> releases;

  const std::string& uid() const { return record->request.uid; }
};

struct SearchSpace {
  // By priority, then share freed, then uid: the search meets low-priority,
  // small sets first, which both cuts branches early and makes the best
  // set seen a good one when the budget runs out.
  std::vector<Victim> victims;
  std::vector<int32_t> group_left;
  // The GPUs the pod could take (positions).
  uint64_t usable_mask = 0;
  // The node lacks the CPU or memory the pod asks: victims that free host
  // resources matter even without a GPU share.
  bool host_short = false;
  // Candidates dropped: not lower priority, not evictable, no disruption
  // left, or holding nothing the pod could use. For the verdict's reason.
  int dropped = 0;
};

// InvalidArgument for bad input (the message names the field and value);
// `node` must be the state's node named by the query.
absl::StatusOr<SearchSpace> BuildSearchSpace(const ClusterState& state,
                                             const NodeState& node,
                                             const VictimQuery& query);

}  // namespace deviceshare::preemption::internal

#endif  // DEVICESHARE_SRC_PREEMPTION_SEARCH_SPACE_H_
