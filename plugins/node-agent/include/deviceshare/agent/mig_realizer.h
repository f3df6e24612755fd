// File: agent/mig_realizer.h
//
// MigRealizer: makes the MIG instances that the allocation records of the
// live pods on this node name exist on the hardware, through a MigControl
// (NVML's, agent/nvml_source.h, or a fake).
//
// Input, per GPU: every MIG instance the live pods hold there -- the full
// set, not only the new pod's -- each keyed by (pod uid, container index,
// device index) with the MigSlot of its allocation record. Realize():
//   (a) adopts an existing instance with the same profile and start (so
//       realizing twice creates nothing);
//   (b) creates each missing one at exactly its start;
//   (c) when no existing instance is held (the GPU is idle as far as pods
//       go), first destroys every instance no pod holds -- the scheduler's
//       "repartition" of an idle GPU;
//   (d) on a GPU where some existing instance is held, destroys nothing and
//       only creates in free slices: a wanted slot that overlaps an
//       instance no pod holds is FailedPrecondition naming the GPU, the
//       slot and the blocking instance.
// An existing instance without a compute instance (half made, or made by
// hand) serves no container: it counts as not held.
// CleanupOrphans() is the periodic sweep under the same rule: on a GPU
// where no existing instance is held it destroys them all; otherwise
// nothing.
//
// Thread safety: calls are serialized inside; safe from any thread. The
// realizer must be the only one changing MIG instances on the node.
#ifndef DEVICESHARE_AGENT_MIG_REALIZER_H_
#define DEVICESHARE_AGENT_MIG_REALIZER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "deviceshare/agent/discovered_gpu.h"
#include "deviceshare/agent/mig_control.h"
#include "deviceshare/model/mig_slot.h"

namespace deviceshare::agent {

// Which device of which container of which pod holds an instance.
struct MigHolder {
  std::string pod_uid;
  int32_t container_index = 0;
  int32_t device_index = 0;

  bool operator==(const MigHolder& other) const = default;
};

struct HeldMigSlot {
  MigHolder holder;
  MigSlot slot;  // profile, start, size from the allocation record

  bool operator==(const HeldMigSlot& other) const = default;
};

struct RealizedMigSlot {
  MigHolder holder;
  MigInstanceInfo instance;  // gi id, ci id, MIG uuid

  bool operator==(const RealizedMigSlot& other) const = default;
};

class MigRealizer {
 public:
  // `control` is not owned and must outlive the realizer.
  explicit MigRealizer(MigControl* control) : control_(control) {}

  // One RealizedMigSlot per entry of `held`, in that order. Errors:
  // InvalidArgument for an unplaced slot or two different held slots that
  // overlap; FailedPrecondition as in (d); MigControl's errors otherwise.
  // Instances created before an error stay (they are what the records ask
  // for; the next call adopts them).
  absl::StatusOr<std::vector<RealizedMigSlot>> Realize(
      const std::string& gpu_uuid, const std::vector<HeldMigSlot>& held);

  // The instances destroyed (empty when the GPU has a held instance).
  absl::StatusOr<std::vector<MigInstanceInfo>> CleanupOrphans(
      const std::string& gpu_uuid, const std::vector<HeldMigSlot>& held);

 private:
  MigControl* const control_;
  absl::Mutex mu_;
};

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_MIG_REALIZER_H_
