// File: model/device_ledger.h
//
// DeviceLedger: what is taken on one GPU, derived from the pods placed on
// it. Integer units only.
//
// Tenants are keyed by pod uid; each pod entry lists its containers' shares
// on this GPU (container index, init or app, MiB, cores). A pod is charged
//   memory = max(largest init share, sum of app shares)   (same for cores)
//   slots  = max(number of app containers, 1 if any init container)
// because init containers run one at a time before the app containers.
// A MIG share is a hardware instance that exists from Allocate until the
// pod ends, init container or not: MIG shares are always summed, one slot
// each, and their capacity is the GPU's memory slices, not its MiB.
//
// Invariants, checked by CheckInvariants() and never broken by AddPod:
//   sum of charged memory <= memory capacity     (GPUs without MIG shares)
//   sum of charged cores  <= core capacity       (GPUs without MIG shares)
//   sum of slots          <= slot capacity: the split count (a backend may
//     hold a GPU of its mode to fewer tenants, as mps does), unless a pod
//     holds the GPU (below)
//   a pod with an exclusive share (cores >= 100 on a GPU whose core
//     capacity is 100) is the only pod, and holds a single app container
//     on the GPU. Under deviceCoreScaling > 1 (capacity 200, 500 ...) a
//     100-core share is an ordinary share of the capacity, as HAMi's Fit
//     locks a GPU for a 100-core ask only when its Totalcore is 100
//   MIG instances never overlap, and MIG and non-MIG shares never mix on
//     one GPU
//   the totals equal a recomputation from the tenants
// A MIG share whose slot holds the GPU (MigSlot::holds_gpu: a record names
// an instance without placing it) is taken beside whatever is there, and
// while it stays no other share is: the GPU fails closed.
//
// Thread safety: none; a DeviceLedger is owned by its NodeState and guarded
// by whoever owns that.
#ifndef DEVICESHARE_MODEL_DEVICE_LEDGER_H_
#define DEVICESHARE_MODEL_DEVICE_LEDGER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "deviceshare/model/gpu.h"
#include "deviceshare/model/gpu_verdict.h"
#include "deviceshare/model/mig_slot.h"

namespace deviceshare {

// An MPS server serves at most 48 clients per GPU (measured on an H100,
// docs/reference/mig-mps-nvml.md §4.1).
inline constexpr int32_t kMaxMpsClients = 48;

// One container's share of one GPU.
struct ContainerShare {
  int32_t container_index = 0;
  bool is_init = false;
  int64_t memory_mib = 0;
  int32_t cores = 0;
  MigSlot mig;  // placed for a MIG instance

  bool is_mig() const { return mig.placed() || mig.holds_gpu; }
  bool exclusive() const { return cores >= 100 && !is_mig(); }
  bool operator==(const ContainerShare& other) const = default;
};

// The core capacity of a GPU on which a 100-core share is exclusive.
inline constexpr int32_t kExclusiveCoreCapacity = 100;

// What a pod's shares on one GPU cost, per the rule above.
struct PodCharge {
  int64_t memory_mib = 0;
  int32_t cores = 0;
  int32_t slots = 0;
  bool exclusive = false;
  int32_t mig_instances = 0;  // MIG shares (each also one slot)
  uint32_t mig_mask = 0;      // memory slices of the pod's MIG instances
  bool mig_overlap = false;   // two of them overlap
  bool mixes_mig = false;     // MIG and non-MIG shares together
  bool holds_gpu = false;     // a MIG share with MigSlot::holds_gpu

  bool operator==(const PodCharge& other) const = default;
};

PodCharge ChargeOf(absl::Span<const ContainerShare> shares);

class DeviceLedger {
 public:
  explicit DeviceLedger(const Gpu& gpu);

  // Would a pod that is not yet on this GPU fit with `shares`? Pure.
  GpuVerdict CheckPod(absl::Span<const ContainerShare> shares) const;
  // The same verdict's code alone, without building its text.
  ReasonCode CheckPodCode(absl::Span<const ContainerShare> shares) const;

  // Adds a pod with all its shares on this GPU, all or nothing.
  // AlreadyExists if the pod is here; FailedPrecondition (with the verdict
  // text) if it does not fit; InvalidArgument for empty or negative shares.
  // `group_key` is the pod's podgroup (PodRequest::group_key), "" for none.
  absl::Status AddPod(absl::string_view pod_uid,
                      std::vector<ContainerShare> shares,
                      absl::string_view group_key = "");

  // Removes the pod; false if it was not here. Idempotent.
  bool RemovePod(absl::string_view pod_uid);

  bool HasPod(absl::string_view pod_uid) const;
  // Whether a pod of podgroup `group_key` (not "") uses memory or cores
  // here (Volcano's deviceHasPodFromSameGroup).
  bool UsedByGroup(absl::string_view group_key) const;
  // The pod's shares here, or empty.
  absl::Span<const ContainerShare> SharesOf(absl::string_view pod_uid) const;
  std::vector<std::string> PodUids() const;  // sorted
  // Calls fn(const ContainerShare&) for every share of every pod, in no
  // particular order.
  template <typename Fn>
  void ForEachShare(Fn&& fn) const {
    for (const auto& [uid, entry] : pods_) {
      for (const ContainerShare& share : entry.shares) fn(share);
    }
  }

  const Gpu& gpu() const { return gpu_; }
  int64_t memory_capacity_mib() const { return gpu_.memory_mib; }
  int32_t core_capacity() const { return gpu_.core_capacity; }
  // The split count.
  int32_t slot_capacity() const { return slot_capacity_; }
  int64_t used_memory_mib() const { return used_memory_mib_; }
  int32_t used_cores() const { return used_cores_; }
  int32_t used_slots() const { return used_slots_; }
  int64_t free_memory_mib() const { return gpu_.memory_mib - used_memory_mib_; }
  int32_t free_cores() const { return gpu_.core_capacity - used_cores_; }
  int32_t free_slots() const { return slot_capacity_ - used_slots_; }
  // Memory slices taken by MIG instances.
  uint32_t mig_mask() const { return mig_mask_; }
  int32_t mig_instances() const { return mig_instances_; }
  // Pods whose MIG record holds the whole GPU (MigSlot::holds_gpu).
  int32_t gpu_holders() const { return gpu_holders_; }
  bool held_exclusively() const { return exclusive_pods_ > 0; }
  // Whether a 100-core share takes this GPU alone: its core capacity is
  // kExclusiveCoreCapacity (the rule above).
  bool exclusive_by_cores() const {
    return gpu_.core_capacity == kExclusiveCoreCapacity;
  }
  size_t pod_count() const { return pods_.size(); }
  bool idle() const { return pods_.empty(); }

  // Recomputes the totals from the tenants and checks every invariant above.
  absl::Status CheckInvariants() const;

  bool operator==(const DeviceLedger& other) const;

 private:
  struct PodEntry {
    std::vector<ContainerShare> shares;
    PodCharge charge;
    std::string group_key;
    bool operator==(const PodEntry& other) const = default;
  };

  // Why an exclusive share cannot go here, for CheckPod's verdict.
  std::string ExclusiveDetail(const PodCharge& want) const;
  // ChargeOf(shares) on this GPU: exclusive only where a 100-core share
  // takes the GPU whole (the rule above).
  PodCharge ChargeHere(absl::Span<const ContainerShare> shares) const;
  bool ExclusiveBesideSiblingHere(
      absl::Span<const ContainerShare> shares) const;

  Gpu gpu_;
  absl::flat_hash_map<std::string, PodEntry> pods_;
  int64_t used_memory_mib_ = 0;
  int32_t used_cores_ = 0;
  int32_t used_slots_ = 0;
  int32_t exclusive_pods_ = 0;
  int32_t slot_capacity_ = 0;
  uint32_t mig_mask_ = 0;
  int32_t mig_instances_ = 0;
  int32_t gpu_holders_ = 0;  // pods with a MigSlot::holds_gpu share
};

}  // namespace deviceshare

#endif  // DEVICESHARE_MODEL_DEVICE_LEDGER_H_
