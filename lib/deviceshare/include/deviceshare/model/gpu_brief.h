// File: model/gpu_brief.h
//
// GpuBrief: what the checks of one share of one GPU read of that GPU's
// ledger (device_ledger.h), packed into 24 bytes. A node keeps its GPUs'
// briefs side by side (NodeState::briefs), because a decision rules most
// nodes in or out, and counts why a failed pod fits nowhere, from these
// few figures alone: reading them from two or three cache lines instead of
// each GPU's inventory entry and ledger is what makes that pass over every
// node cheap.
//
// A brief is a copy: NodeState refreshes a GPU's brief whenever its ledger
// changes. A figure that does not fit in 32 bits sets kBriefIncomplete,
// and readers then ask the ledger.
//
// Thread safety: a value type.
#ifndef DEVICESHARE_MODEL_GPU_BRIEF_H_
#define DEVICESHARE_MODEL_GPU_BRIEF_H_

#include <cstdint>

#include "deviceshare/model/device_ledger.h"

namespace deviceshare {

struct GpuBrief {
  // Flags: the GPU's state that decides a share's verdict before its
  // memory and cores are compared.
  static constexpr uint32_t kUnhealthy = 1u << 0;
  static constexpr uint32_t kCordoned = 1u << 1;
  static constexpr uint32_t kHeldByMigRecord = 1u << 2;  // a holds_gpu share
  static constexpr uint32_t kHasMigInstances = 1u << 3;
  static constexpr uint32_t kHeldExclusively = 1u << 4;
  static constexpr uint32_t kHasPods = 1u << 5;
  static constexpr uint32_t kBriefIncomplete = 1u << 6;
  // The core capacity is kExclusiveCoreCapacity: a 100-core share takes
  // the GPU alone (device_ledger.h).
  static constexpr uint32_t kExclusiveByCores = 1u << 7;

  int32_t free_memory_mib = 0;
  int32_t memory_capacity_mib = 0;
  int32_t free_cores = 0;
  int32_t used_slots = 0;
  int32_t slot_capacity = 0;
  uint32_t flags = 0;

  static GpuBrief Of(const DeviceLedger& ledger);
  bool complete() const { return (flags & kBriefIncomplete) == 0; }

  bool operator==(const GpuBrief& other) const = default;
};

static_assert(sizeof(GpuBrief) == 24);

}  // namespace deviceshare

#endif  // DEVICESHARE_MODEL_GPU_BRIEF_H_
