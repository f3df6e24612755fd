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

// Checks what the ledger relies on: a non-empty node name, GPU uuids unique
// and non-empty, memory > 0, core capacity > 0, split count > 0, no negative
// amounts. The error names the node, the GPU and the field.
absl::Status ValidateInventory(const NodeInventory& inventory);

}  // namespace deviceshare

#endif  // DEVICESHARE_MODEL_NODE_INVENTORY_H_
