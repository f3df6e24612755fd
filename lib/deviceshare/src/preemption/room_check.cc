#include "preemption/room_check.h"

#include "absl/container/inlined_vector.h"

namespace deviceshare::preemption::internal {

RoomCheck::RoomCheck(const PodRequest& pod, const NodeState& node,
                     uint64_t usable_mask)
    : index_of_(node.gpu_count(), -1) {
  for (size_t g = 0; g < node.gpu_count(); ++g) {
    if ((usable_mask >> g & 1) == 0) continue;
    const DeviceLedger& ledger = node.ledger(g);
    index_of_[g] = static_cast<int>(gpus_.size());
    gpus_.push_back(g);
    free_.push_back(Room{ledger.free_memory_mib(), ledger.free_cores(),
                         ledger.free_slots()});
    slot_only_.push_back(ledger.mig_instances() > 0 ||
                         !ledger.gpu().mig_instances.empty());
  }
  for (const ContainerRequest& container : pod.containers) {
    if (!container.wants_gpu()) continue;
    Demand demand{container.gpu_count, container.cores, {}};
    for (size_t g : gpus_) {
      demand.memory_mib.push_back(
          container.MemoryOn(node.ledger(g).memory_capacity_mib()));
    }
    demands_.push_back(std::move(demand));
  }
}

bool RoomCheck::MayFit(absl::Span<const Victim* const> victims) const {
  absl::InlinedVector<Room, 16> room(free_.begin(), free_.end());
  for (const Victim* victim : victims) {
    for (const GpuRelease& release : victim->releases) {
      Room& r = room[index_of_[release.position]];
      r.memory_mib += release.memory_mib;
      r.cores += release.cores;
      r.slots += release.slots;
    }
  }
  for (const Demand& demand : demands_) {
    int32_t gpus = 0;
    for (size_t i = 0; i < room.size() && gpus < demand.gpu_count; ++i) {
      const Room& r = room[i];
      if (r.slots < 1) continue;
      if (!slot_only_[i] &&
          (r.memory_mib < demand.memory_mib[i] || r.cores < demand.cores)) {
        continue;
      }
      ++gpus;
    }
    if (gpus < demand.gpu_count) return false;
  }
  return true;
}

}  // namespace deviceshare::preemption::internal
