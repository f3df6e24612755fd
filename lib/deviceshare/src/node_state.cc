#include "deviceshare/model/node_state.h"

#include <map>

#include "absl/strings/str_format.h"

namespace deviceshare {

NodeState::NodeState(NodeInventory inventory)
    : inventory_(std::move(inventory)) {
  ledgers_.reserve(inventory_.gpus.size());
  for (size_t i = 0; i < inventory_.gpus.size(); ++i) {
    const Gpu& gpu = inventory_.gpus[i];
    ledgers_.emplace_back(gpu);
    position_by_uuid_.emplace(gpu.uuid, i);
    total_memory_mib_ += gpu.memory_mib;
    total_cores_ += gpu.core_capacity;
  }
}

std::optional<size_t> NodeState::FindGpu(absl::string_view uuid) const {
  auto it = position_by_uuid_.find(uuid);
  if (it == position_by_uuid_.end()) return std::nullopt;
  return it->second;
}

std::optional<size_t> NodeState::FindGpuIndex(int32_t index) const {
  for (size_t i = 0; i < inventory_.gpus.size(); ++i) {
    if (inventory_.gpus[i].index == index) return i;
  }
  return std::nullopt;
}

void NodeState::AddHostUsage(int64_t cpu_milli, int64_t memory_mib) {
  used_cpu_milli_ += cpu_milli;
  used_memory_mib_ += memory_mib;
}

void NodeState::SubtractHostUsage(int64_t cpu_milli, int64_t memory_mib) {
  used_cpu_milli_ -= cpu_milli;
  used_memory_mib_ -= memory_mib;
}

int64_t NodeState::total_used_memory_mib() const {
  int64_t used = 0;
  for (const DeviceLedger& ledger : ledgers_) used += ledger.used_memory_mib();
  return used;
}

int64_t NodeState::total_used_cores() const {
  int64_t used = 0;
  for (const DeviceLedger& ledger : ledgers_) used += ledger.used_cores();
  return used;
}

absl::StatusOr<std::vector<std::pair<size_t, std::vector<ContainerShare>>>>
NodeState::SharesByGpu(const PodAllocation& allocation) const {
  std::map<size_t, std::vector<ContainerShare>> by_position;
  for (const ContainerAllocation& container : allocation.containers) {
    for (const DeviceGrant& grant : container.devices) {
      std::optional<size_t> position = FindGpu(grant.uuid);
      if (!position) {
        return absl::NotFoundError(absl::StrFormat(
            "pod %s container %d: node %s has no gpu %s", allocation.pod_key,
            container.container_index, name(), grant.uuid));
      }
      by_position[*position].push_back(
          ContainerShare{container.container_index, container.is_init,
                         grant.memory_mib, grant.cores});
    }
  }
  return std::vector<std::pair<size_t, std::vector<ContainerShare>>>(
      by_position.begin(), by_position.end());
}

absl::Status NodeState::CheckInvariants() const {
  for (const DeviceLedger& ledger : ledgers_) {
    absl::Status status = ledger.CheckInvariants();
    if (!status.ok()) {
      return absl::InternalError(
          absl::StrFormat("node %s: %s", name(), status.message()));
    }
  }
  if (used_cpu_milli_ < 0 || used_memory_mib_ < 0) {
    return absl::InternalError(
        absl::StrFormat("node %s: negative host usage cpu=%dm memory=%dMiB",
                        name(), used_cpu_milli_, used_memory_mib_));
  }
  return absl::OkStatus();
}

}  // namespace deviceshare
