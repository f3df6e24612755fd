// File: model/node_state.h
//
// NodeState: one node as the scheduler sees it: its inventory and one
// DeviceLedger per GPU (same order as inventory().gpus), plus the CPU and
// memory that placed pods take. Built by ClusterState; read by backends and
// policies.
//
// Thread safety: none; guarded by the owning ClusterState's user.
#ifndef DEVICESHARE_MODEL_NODE_STATE_H_
#define DEVICESHARE_MODEL_NODE_STATE_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "deviceshare/model/device_ledger.h"
#include "deviceshare/model/gpu_brief.h"
#include "deviceshare/model/node_inventory.h"
#include "deviceshare/model/pod_allocation.h"

namespace deviceshare {

// What a node can hold, summed over its GPUs: nodes of one shape score the
// same for the same usage, which lets the scheduler index them.
struct NodeShape {
  int64_t memory_mib = 0;
  int64_t cores = 0;
  int64_t slots = 0;
  int64_t max_gpu_memory_mib = 0;
  int64_t min_gpu_memory_mib = 0;

  auto operator<=>(const NodeShape& other) const = default;
};

// The most one GPU of a node can still take: the largest free memory and
// the largest free SM share among GPUs that have a free tenant slot and are
// not held exclusively (each maximum may come from a different GPU).
struct GpuHeadroom {
  // Core levels of memory_by_cores: 0, 10, ..., 100 percent.
  static constexpr int kCoreLevels = 11;

  int64_t memory_mib = 0;
  int32_t cores = 0;
  // Of those GPUs, how many can take a share of 100 cores: those that hold
  // no pod at all, where it is exclusive, and those whose core capacity is
  // not 100, where it is not (device_ledger.h); a container of k such
  // shares needs k.
  int32_t idle_gpus = 0;
  // memory_by_cores[k]: the largest free memory of one of those GPUs that
  // has at least max(10k, 1) percent of its cores free. A share needs its
  // memory and its cores on the same GPU, which the two maxima above cannot
  // tell (a full node often has memory on one GPU and cores on another).
  int64_t memory_by_cores[kCoreLevels] = {};

  // The largest free memory a GPU with at least `cores` (>= 1) percent free
  // may have: exact for 1 and multiples of 10, an upper bound otherwise.
  int64_t MemoryWithCores(int32_t cores) const {
    return memory_by_cores[std::clamp(cores / 10, 0, kCoreLevels - 1)];
  }
  // Counts one more GPU with `free_memory_mib` and `free_cores` free.
  void AddGpu(int64_t free_memory_mib, int32_t free_cores);
  // Each figure the larger of the two: what a bucket of nodes may offer.
  void Widen(const GpuHeadroom& other);
  // Whether some figure above 0 equals `widest`'s (a Widen of this and
  // others, which starts at 0): only then can taking this headroom out
  // lower `widest`.
  bool HoldsAMaximumOf(const GpuHeadroom& widest) const;

  bool operator==(const GpuHeadroom& other) const = default;
};

class NodeState {
 public:
  // REQUIRES: ValidateInventory(inventory).ok()
  explicit NodeState(NodeInventory inventory);

  const NodeInventory& inventory() const { return inventory_; }
  const std::string& name() const { return inventory_.name; }
  // From the briefs, which sit beside the totals (one ledger per GPU).
  size_t gpu_count() const { return briefs_.size(); }

  const DeviceLedger& ledger(size_t position) const {
    return ledgers_[position];
  }
  // Each ledger's brief (model/gpu_brief.h), in the same order, always
  // current.
  absl::Span<const GpuBrief> briefs() const { return briefs_; }
  // The mode every GPU of the node runs; the empty mode when they differ
  // or there are none. A check that reads briefs compares the mode once.
  const SharingMode& uniform_mode() const { return uniform_mode_; }
  // Ledger changes go through the node, so that its totals stay exact.
  // Same contract as DeviceLedger::AddPod / RemovePod.
  absl::Status AddPodToGpu(size_t position, absl::string_view pod_uid,
                           std::vector<ContainerShare> shares,
                           absl::string_view group_key = "");
  bool RemovePodFromGpu(size_t position, absl::string_view pod_uid);
  // Position of the GPU with `uuid` in inventory().gpus, if any.
  std::optional<size_t> FindGpu(absl::string_view uuid) const;
  // Position of the GPU with Gpu::index == `index`, if any.
  std::optional<size_t> FindGpuIndex(int32_t index) const;

  // CPU and memory taken by placed pods (tracked only when the inventory
  // has them).
  int64_t used_cpu_milli() const { return used_cpu_milli_; }
  int64_t used_memory_mib() const { return used_memory_mib_; }
  // inventory().cpu_milli and memory_mib, kept beside the usage (the host
  // check of every filtered node reads both).
  int64_t cpu_capacity_milli() const { return cpu_capacity_milli_; }
  int64_t memory_capacity_mib() const { return memory_capacity_mib_; }
  void AddHostUsage(int64_t cpu_milli, int64_t memory_mib);
  void SubtractHostUsage(int64_t cpu_milli, int64_t memory_mib);

  // Totals over all GPUs, kept in O(1) for node-level policies and for the
  // scheduler's bounds.
  int64_t total_memory_mib() const { return total_memory_mib_; }
  int64_t total_used_memory_mib() const { return used_gpu_memory_mib_; }
  int64_t total_cores() const { return total_cores_; }
  int64_t total_used_cores() const { return used_gpu_cores_; }
  int64_t total_slots() const { return total_slots_; }
  int64_t total_used_slots() const { return used_gpu_slots_; }
  // Largest memory capacity of one GPU (for bounds on percent requests).
  int64_t max_gpu_memory_mib() const { return max_gpu_memory_mib_; }
  int64_t min_gpu_memory_mib() const { return min_gpu_memory_mib_; }
  GpuHeadroom headroom() const;  // O(GPUs)
  NodeShape shape() const {
    return NodeShape{total_memory_mib_, total_cores_, total_slots_,
                     max_gpu_memory_mib_, min_gpu_memory_mib_};
  }

  // The allocation's grants grouped per GPU position as ledger shares, in
  // position order. NotFound if a grant names a GPU this node lacks.
  absl::StatusOr<std::vector<std::pair<size_t, std::vector<ContainerShare>>>>
  SharesByGpu(const PodAllocation& allocation) const;

  // Every ledger's invariants, and host usage never negative.
  absl::Status CheckInvariants() const;

 private:
  // The totals come first: the scheduler reads them for every node of
  // every decision, and together they fill one cache line.
  int64_t used_gpu_memory_mib_ = 0;
  int64_t used_gpu_cores_ = 0;
  int64_t used_gpu_slots_ = 0;
  int64_t total_memory_mib_ = 0;
  int64_t total_cores_ = 0;
  int64_t total_slots_ = 0;
  int64_t max_gpu_memory_mib_ = 0;
  int64_t min_gpu_memory_mib_ = 0;
  int64_t used_cpu_milli_ = 0;
  int64_t used_memory_mib_ = 0;
  int64_t cpu_capacity_milli_ = 0;
  int64_t memory_capacity_mib_ = 0;
  absl::InlinedVector<GpuBrief, 8> briefs_;
  SharingMode uniform_mode_;
  NodeInventory inventory_;
  std::vector<DeviceLedger> ledgers_;
  absl::flat_hash_map<std::string, size_t> position_by_uuid_;

  void AddUsage(const DeviceLedger& ledger, int sign);
};

// The CPU and memory a node has left for pods; a figure the inventory
// does not track is never short (the largest int64).
struct HostRoom {
  static constexpr int64_t kUntracked = std::numeric_limits<int64_t>::max();

  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;

  static HostRoom Of(const NodeState& node);
  // Whether a pod asking `cpu_milli` and `memory_mib` may fit this room.
  bool Holds(int64_t cpu_milli, int64_t memory_mib) const {
    return cpu_milli <= this->cpu_milli && memory_mib <= this->memory_mib;
  }
  // The room left once a pod asking `cpu_milli` and `memory_mib` lands; an
  // untracked figure stays untracked.
  HostRoom After(int64_t cpu_milli, int64_t memory_mib) const {
    return HostRoom{this->cpu_milli == kUntracked ? kUntracked
                                                  : this->cpu_milli - cpu_milli,
                    this->memory_mib == kUntracked
                        ? kUntracked
                        : this->memory_mib - memory_mib};
  }
};

}  // namespace deviceshare

#endif  // DEVICESHARE_MODEL_NODE_STATE_H_
