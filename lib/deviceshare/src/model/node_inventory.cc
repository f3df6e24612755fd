#include "deviceshare/model/node_inventory.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"

namespace deviceshare {
namespace {

absl::Status GpuError(const NodeInventory& node, const Gpu& gpu,
                      absl::string_view field, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrFormat("node %s gpu %s (index %d): %s %s", node.name, gpu.uuid,
                      gpu.index, field, why));
}

}  // namespace

absl::Status ValidateInventory(const NodeInventory& node) {
  if (node.name.empty()) {
    return absl::InvalidArgumentError("node: name is empty");
  }
  if (node.cpu_milli < 0 || node.memory_mib < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "node %s: cpu_milli=%d memory_mib=%d must not be negative", node.name,
        node.cpu_milli, node.memory_mib));
  }
  if (node.gpus.size() > kMaxGpusPerNode) {
    return absl::InvalidArgumentError(
        absl::StrFormat("node %s: %d GPUs, more than the %d a node may have",
                        node.name, node.gpus.size(), kMaxGpusPerNode));
  }
  absl::flat_hash_set<absl::string_view> uuids;
  for (const Gpu& gpu : node.gpus) {
    if (gpu.uuid.empty()) return GpuError(node, gpu, "uuid", "is empty");
    if (!uuids.insert(gpu.uuid).second) {
      return GpuError(node, gpu, "uuid", "appears twice");
    }
    if (gpu.memory_mib <= 0 || gpu.memory_mib > kMaxGpuMemoryMib) {
      return GpuError(node, gpu, "memory_mib",
                      absl::StrFormat("= %d, want 1 to %d", gpu.memory_mib,
                                      kMaxGpuMemoryMib));
    }
    if (gpu.core_capacity <= 0) {
      return GpuError(node, gpu, "core_capacity",
                      absl::StrFormat("= %d, want > 0", gpu.core_capacity));
    }
    if (gpu.split_count <= 0) {
      return GpuError(node, gpu, "split_count",
                      absl::StrFormat("= %d, want > 0", gpu.split_count));
    }
    if (gpu.index < 0 || gpu.numa_node < 0 || gpu.sm_count < 0) {
      return GpuError(node, gpu, "index/numa/sm_count", "must not be negative");
    }
  }
  return absl::OkStatus();
}

}  // namespace deviceshare
