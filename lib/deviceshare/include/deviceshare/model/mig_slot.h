// File: model/mig_slot.h
//
// MigSlot: where one MIG GPU instance sits on its GPU: the profile, the
// first memory slice and how many memory slices it covers (NVML's
// nvmlGpuInstancePlacement_t), plus, for instances chosen from a
// knownMigGeometries group (Volcano/HAMi configMap mode), the group and the
// position in it. A value type shared by the ledger (model/device_ledger.h),
// the allocation (model/pod_allocation.h) and the inventory (model/gpu.h).
#ifndef DEVICESHARE_MODEL_MIG_SLOT_H_
#define DEVICESHARE_MODEL_MIG_SLOT_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace deviceshare {

struct MigSlot {
  std::string profile;  // canonical GPU-instance profile, "3g.40gb"
  int32_t start = -1;   // first memory slice; -1 = not placed
  int32_t size = 0;     // memory slices covered
  // configMap mode: the knownMigGeometries group ("group2"; HAMi's unnamed
  // groups are "0", "1", ... by config order) and the instance's position
  // in it. Empty / -1 in placement mode.
  std::string group;
  int32_t position = -1;
  // An instance a record names on a MIG GPU without saying which (HAMi's
  // record without its hami.io/vgpu-mig-allocations): it holds the whole
  // GPU until its pod leaves, so nothing is placed beside an instance of
  // unknown size (HAMi fails closed: mig_allocation_test.go
  // TestGetNodesUsageFailsClosedWithoutMigAllocation).
  bool holds_gpu = false;
  // configMap mode, a grant just chosen: what its container asked (MiB,
  // cores %), -1 when unknown. Volcano writes these figures, not the
  // instance's, in its record (utils.go encodePodDevices); the ledger still
  // charges the instance (DeviceGrant::memory_mib / cores), and a record read
  // back is charged at least the instance it names.
  int64_t asked_memory_mib = -1;
  int32_t asked_cores = -1;

  bool placed() const { return start >= 0 && size > 0; }
  // Bit s set for every memory slice s the instance covers; 0 when not
  // placed. Slices beyond 31 are not representable (no GPU has them).
  uint32_t mask() const {
    if (!placed() || start + size > 32) return 0;
    const uint32_t run = size >= 32 ? ~0u : ((1u << size) - 1u);
    return run << start;
  }

  bool operator==(const MigSlot& other) const = default;
};

// What the node agent must do for a MIG grant before the container starts.
enum class MigAction {
  kNone,         // not a MIG grant
  kReuse,        // a free instance with this slot already exists
  kCreate,       // create the instance in free memory slices
  kRepartition,  // the GPU is idle: destroy its unused instances first
};

// "", "reuse", "create", "repartition".
const char* MigActionName(MigAction action);

// True for a MIG GPU-instance profile name: `<N>g.<M>gb` with an optional
// variant suffix, e.g. `1g.10gb`, `7g.79gb`, `1g.10gb+me`, `1g.24gb+me.all`,
// `2g.48gb-me`. Compute-instance names (`1c.3g.20gb`) are not accepted.
bool IsMigProfileName(absl::string_view name);

}  // namespace deviceshare

#endif  // DEVICESHARE_MODEL_MIG_SLOT_H_
