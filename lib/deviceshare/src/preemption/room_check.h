// File: src/preemption/room_check.h (internal)
//
// RoomCheck: a cheap necessary condition for the pending pod to fit once a
// set of victims is gone, tried before the decision path's Filter (which
// copies the node and runs the backends). Each container that asks for
// GPUs needs that many usable GPUs, each with room for its share alone:
// free memory (its MiB, or its percent of that GPU), free cores and a free
// tenant slot. A GPU with MIG instances is held to the slot only, since
// its room is memory slices that only the mig backend's catalog knows.
// Any placement a backend finds passes it, so it never rules out a set
// that fits.
//
// Thread safety: immutable after construction; MayFit is const.
#ifndef DEVICESHARE_SRC_PREEMPTION_ROOM_CHECK_H_
#define DEVICESHARE_SRC_PREEMPTION_ROOM_CHECK_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "deviceshare/model/node_state.h"
#include "deviceshare/model/pod_request.h"
#include "preemption/search_space.h"

namespace deviceshare::preemption::internal {

class RoomCheck {
 public:
  RoomCheck(const PodRequest& pod, const NodeState& node, uint64_t usable_mask);

  bool MayFit(absl::Span<const Victim* const> victims) const;

 private:
  struct Room {
    int64_t memory_mib = 0;
    int64_t cores = 0;
    int64_t slots = 0;
  };
  // One GPU container's demand: per usable GPU (same order as gpus_), the
  // memory it needs there; and how many GPUs.
  struct Demand {
    int32_t gpu_count = 0;
    int32_t cores = 0;
    std::vector<int64_t> memory_mib;
  };

  std::vector<size_t> gpus_;     // usable positions
  std::vector<Room> free_;       // free room now, per usable GPU
  std::vector<bool> slot_only_;  // MIG: only the slot is checked
  std::vector<int> index_of_;    // position -> index in gpus_, or -1
  std::vector<Demand> demands_;
};

}  // namespace deviceshare::preemption::internal

#endif  // DEVICESHARE_SRC_PREEMPTION_ROOM_CHECK_H_
