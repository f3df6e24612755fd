// File: model/node_inventory.h
//
// NodeInventory: what one node offers: its name, its CPU and memory (for
// replayed traces), and its GPUs. A value type.
#ifndef DEVICESHARE_MODEL_NODE_INVENTORY_H_
#define DEVICESHARE_MODEL_NODE_INVENTORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "deviceshare/model/gpu.h"

namespace deviceshare {

struct NodeInventory {
  std::string name;
  int64_t cpu_milli = 0;   // 0 = not tracked (CPU is kube-scheduler's job)
  int64_t memory_mib = 0;  // 0 = not tracked
  std::vector<Gpu> gpus;   // in Gpu::index order
  // The GPU count resources ("nvidia.com/gpu" or its configured name,
  // "volcano.sh/vgpu-number") the node's status.allocatable advertises
  // with a positive count, sorted: the device plugins kubelet will call
  // there. Empty when it advertises none (no plugin registered yet, or a
  // node from a file or trace): then nothing is checked against it.
  std::vector<std::string> gpu_resources;

  bool operator==(const NodeInventory& other) const = default;
};

// The most GPUs a node may have, and the most memory one GPU may have:
// far above any machine, and low enough that a node's and a cluster's
// totals cannot overflow (or a decision take seconds over one node).
inline constexpr size_t kMaxGpusPerNode = 1024;
inline constexpr int64_t kMaxGpuMemoryMib = int64_t{1} << 36;  // 64 EiB

// Checks what the ledger relies on: a non-empty node name, at most
// kMaxGpusPerNode GPUs, GPU uuids unique and non-empty, memory from 1 to
// kMaxGpuMemoryMib, core capacity > 0, split count > 0, no negative
// amounts. The error names the node, the GPU and the field.
absl::Status ValidateInventory(const NodeInventory& inventory);

}  // namespace deviceshare

#endif  // DEVICESHARE_MODEL_NODE_INVENTORY_H_
