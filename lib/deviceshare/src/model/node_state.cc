#include "deviceshare/model/node_state.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace deviceshare {
namespace {

// The position of the GPU `grant` names on `node`. The grant's index names
// it as a rule (the backends set it), checked against the uuid, which
// decides.
std::optional<size_t> PositionOf(const NodeState& node,
                                 const DeviceGrant& grant) {
  const std::vector<Gpu>& gpus = node.inventory().gpus;
  if (grant.gpu_index >= 0) {
    const size_t at = static_cast<size_t>(grant.gpu_index);
    if (at < gpus.size() && gpus[at].index == grant.gpu_index &&
        gpus[at].uuid == grant.uuid) {
      return at;
    }
  }
  return node.FindGpu(grant.uuid);
}

}  // namespace

NodeState::NodeState(NodeInventory inventory)
    : cpu_capacity_milli_(inventory.cpu_milli),
      memory_capacity_mib_(inventory.memory_mib),
      inventory_(std::move(inventory)) {
  static_assert(alignof(NodeState) <= 64);
  ledgers_.reserve(inventory_.gpus.size());
  for (size_t i = 0; i < inventory_.gpus.size(); ++i) {
    const Gpu& gpu = inventory_.gpus[i];
    ledgers_.emplace_back(gpu);
    position_by_uuid_.emplace(gpu.uuid, i);
    total_memory_mib_ += gpu.memory_mib;
    total_cores_ += gpu.core_capacity;
    total_slots_ += ledgers_.back().slot_capacity();
    max_gpu_memory_mib_ = std::max(max_gpu_memory_mib_, gpu.memory_mib);
    min_gpu_memory_mib_ =
        i == 0 ? gpu.memory_mib : std::min(min_gpu_memory_mib_, gpu.memory_mib);
    briefs_.push_back(GpuBrief::Of(ledgers_.back()));
  }
  const std::vector<Gpu>& gpus = inventory_.gpus;
  if (!gpus.empty() &&
      std::all_of(gpus.begin(), gpus.end(), [&gpus](const Gpu& gpu) {
        return gpu.mode == gpus.front().mode;
      })) {
    uniform_mode_ = gpus.front().mode;
  }
}

void NodeState::AddUsage(const DeviceLedger& ledger, int sign) {
  used_gpu_memory_mib_ += sign * ledger.used_memory_mib();
  used_gpu_cores_ += sign * ledger.used_cores();
  used_gpu_slots_ += sign * ledger.used_slots();
}

void GpuHeadroom::AddGpu(int64_t free_memory_mib, int32_t free_cores) {
  memory_mib = std::max(memory_mib, free_memory_mib);
  cores = std::max(cores, free_cores);
  for (int level = 0; level < kCoreLevels; ++level) {
    if (free_cores < std::max(10 * level, 1)) break;
    memory_by_cores[level] = std::max(memory_by_cores[level], free_memory_mib);
  }
}

void GpuHeadroom::Widen(const GpuHeadroom& other) {
  memory_mib = std::max(memory_mib, other.memory_mib);
  cores = std::max(cores, other.cores);
  idle_gpus = std::max(idle_gpus, other.idle_gpus);
  for (int level = 0; level < kCoreLevels; ++level) {
    memory_by_cores[level] =
        std::max(memory_by_cores[level], other.memory_by_cores[level]);
  }
}

bool GpuHeadroom::HoldsAMaximumOf(const GpuHeadroom& widest) const {
  // Every figure of a Widen starts at 0: a maximum of 0 cannot fall.
  auto holds = [](int64_t mine, int64_t most) {
    return mine == most && most > 0;
  };
  if (holds(memory_mib, widest.memory_mib) || holds(cores, widest.cores) ||
      holds(idle_gpus, widest.idle_gpus)) {
    return true;
  }
  for (int level = 0; level < kCoreLevels; ++level) {
    if (holds(memory_by_cores[level], widest.memory_by_cores[level])) {
      return true;
    }
  }
  return false;
}

GpuHeadroom NodeState::headroom() const {
  GpuHeadroom headroom;
  for (const DeviceLedger& ledger : ledgers_) {
    if (ledger.free_slots() < 1 || ledger.held_exclusively() ||
        !ledger.gpu().healthy) {
      continue;
    }
    headroom.AddGpu(ledger.free_memory_mib(), ledger.free_cores());
    if (ledger.used_slots() == 0 || !ledger.exclusive_by_cores()) {
      ++headroom.idle_gpus;
    }
  }
  return headroom;
}

absl::Status NodeState::AddPodToGpu(size_t position, absl::string_view pod_uid,
                                    std::vector<ContainerShare> shares,
                                    absl::string_view group_key) {
  DeviceLedger& ledger = ledgers_[position];
  AddUsage(ledger, -1);
  absl::Status status = ledger.AddPod(pod_uid, std::move(shares), group_key);
  AddUsage(ledger, +1);
  briefs_[position] = GpuBrief::Of(ledger);
  return status;
}

bool NodeState::RemovePodFromGpu(size_t position, absl::string_view pod_uid) {
  DeviceLedger& ledger = ledgers_[position];
  AddUsage(ledger, -1);
  bool removed = ledger.RemovePod(pod_uid);
  AddUsage(ledger, +1);
  briefs_[position] = GpuBrief::Of(ledger);
  return removed;
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

absl::StatusOr<std::vector<std::pair<size_t, std::vector<ContainerShare>>>>
NodeState::SharesByGpu(const PodAllocation& allocation) const {
  // Built in place, one entry per GPU found in a short scan, then put in
  // position order: a pod takes a few GPUs, and every score asks.
  std::vector<std::pair<size_t, std::vector<ContainerShare>>> by_position;
  size_t grants = 0;
  for (const ContainerAllocation& container : allocation.containers) {
    grants += container.devices.size();
  }
  by_position.reserve(grants);
  for (const ContainerAllocation& container : allocation.containers) {
    for (const DeviceGrant& grant : container.devices) {
      std::optional<size_t> position = PositionOf(*this, grant);
      if (!position) {
        return absl::NotFoundError(absl::StrFormat(
            "pod %s container %d: node %s has no gpu %s", allocation.pod_key,
            container.container_index, name(), grant.uuid));
      }
      auto entry = std::find_if(
          by_position.begin(), by_position.end(),
          [&](const auto& known) { return known.first == *position; });
      if (entry == by_position.end()) {
        by_position.emplace_back(*position, std::vector<ContainerShare>());
        entry = by_position.end() - 1;
      }
      entry->second.push_back(
          ContainerShare{container.container_index, container.is_init,
                         grant.memory_mib, grant.cores, grant.mig});
    }
  }
  std::sort(by_position.begin(), by_position.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return by_position;
}

absl::Status NodeState::CheckInvariants() const {
  for (const DeviceLedger& ledger : ledgers_) {
    absl::Status status = ledger.CheckInvariants();
    if (!status.ok()) {
      return absl::InternalError(
          absl::StrFormat("node %s: %s", name(), status.message()));
    }
  }
  int64_t memory = 0, cores = 0, slots = 0;
  for (const DeviceLedger& ledger : ledgers_) {
    memory += ledger.used_memory_mib();
    cores += ledger.used_cores();
    slots += ledger.used_slots();
  }
  if (memory != used_gpu_memory_mib_ || cores != used_gpu_cores_ ||
      slots != used_gpu_slots_) {
    return absl::InternalError(absl::StrFormat(
        "node %s: GPU totals %d MiB/%d cores/%d slots differ from the ledgers' "
        "%d/%d/%d",
        name(), used_gpu_memory_mib_, used_gpu_cores_, used_gpu_slots_, memory,
        cores, slots));
  }
  for (size_t i = 0; i < ledgers_.size(); ++i) {
    if (briefs_[i] != GpuBrief::Of(ledgers_[i])) {
      return absl::InternalError(
          absl::StrFormat("node %s: the brief of gpu %s is stale", name(),
                          ledgers_[i].gpu().uuid));
    }
  }
  if (used_cpu_milli_ < 0 || used_memory_mib_ < 0) {
    return absl::InternalError(
        absl::StrFormat("node %s: negative host usage cpu=%dm memory=%dMiB",
                        name(), used_cpu_milli_, used_memory_mib_));
  }
  return absl::OkStatus();
}

HostRoom HostRoom::Of(const NodeState& node) {
  const NodeInventory& inventory = node.inventory();
  return HostRoom{
      inventory.cpu_milli > 0 ? inventory.cpu_milli - node.used_cpu_milli()
                              : kUntracked,
      inventory.memory_mib > 0 ? inventory.memory_mib - node.used_memory_mib()
                               : kUntracked};
}

}  // namespace deviceshare
