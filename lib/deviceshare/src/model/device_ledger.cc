#include "deviceshare/model/device_ledger.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace deviceshare {

PodCharge ChargeOf(absl::Span<const ContainerShare> shares) {
  PodCharge charge;
  // One share, not MIG: the filter's common case on every GPU it looks at.
  // The same result as the loop below.
  if (shares.size() == 1 && !shares.front().is_mig()) {
    const ContainerShare& share = shares.front();
    charge.memory_mib = share.is_init ? std::max<int64_t>(0, share.memory_mib)
                                      : share.memory_mib;
    charge.cores =
        share.is_init ? std::max<int32_t>(0, share.cores) : share.cores;
    charge.slots = 1;
    charge.exclusive = share.exclusive();
    return charge;
  }
  int64_t app_memory = 0;
  int32_t app_cores = 0;
  int64_t init_memory = 0;
  int32_t init_cores = 0;
  int32_t app_containers = 0;
  bool any_init = false;
  int64_t mig_memory = 0;
  int32_t mig_cores = 0;
  int32_t& mig_instances = charge.mig_instances;
  for (const ContainerShare& share : shares) {
    if (share.is_mig()) {
      charge.holds_gpu = charge.holds_gpu || share.mig.holds_gpu;
      const uint32_t mask = share.mig.mask();
      charge.mig_overlap = charge.mig_overlap || (charge.mig_mask & mask) != 0;
      charge.mig_mask |= mask;
      mig_memory += share.memory_mib;
      mig_cores += share.cores;
      ++mig_instances;
      continue;
    }
    if (share.is_init) {
      any_init = true;
      init_memory = std::max(init_memory, share.memory_mib);
      init_cores = std::max(init_cores, share.cores);
    } else {
      ++app_containers;
      app_memory += share.memory_mib;
      app_cores += share.cores;
    }
    charge.exclusive = charge.exclusive || share.exclusive();
  }
  const int32_t share_slots = std::max(app_containers, any_init ? 1 : 0);
  charge.mixes_mig = mig_instances > 0 && share_slots > 0;
  charge.memory_mib = std::max(init_memory, app_memory) + mig_memory;
  charge.cores = std::max(init_cores, app_cores) + mig_cores;
  charge.slots = share_slots + mig_instances;
  return charge;
}

namespace {

// An exclusive app container must be its pod's only app container here.
bool ExclusiveBesideSibling(absl::Span<const ContainerShare> shares) {
  int apps = 0;
  bool exclusive_app = false;
  for (const ContainerShare& share : shares) {
    if (share.is_init) continue;
    ++apps;
    exclusive_app = exclusive_app || share.exclusive();
  }
  return exclusive_app && apps > 1;
}

}  // namespace

PodCharge DeviceLedger::ChargeHere(
    absl::Span<const ContainerShare> shares) const {
  PodCharge charge = ChargeOf(shares);
  charge.exclusive = charge.exclusive && exclusive_by_cores();
  return charge;
}

bool DeviceLedger::ExclusiveBesideSiblingHere(
    absl::Span<const ContainerShare> shares) const {
  return exclusive_by_cores() && ExclusiveBesideSibling(shares);
}

DeviceLedger::DeviceLedger(const Gpu& gpu)
    : gpu_(gpu), slot_capacity_(gpu.split_count) {}

ReasonCode DeviceLedger::CheckPodCode(
    absl::Span<const ContainerShare> shares) const {
  const PodCharge want = ChargeHere(shares);
  // A share that holds the GPU is a record of what runs: it is taken as it
  // is, and then nothing else is.
  if (want.holds_gpu) return ReasonCode::kFits;
  if (gpu_holders_ > 0) return ReasonCode::kPartitionTaken;
  if (want.mixes_mig || (want.mig_mask != 0 && used_slots_ > mig_instances_) ||
      (want.mig_mask == 0 && mig_instances_ > 0)) {
    return ReasonCode::kModeMismatch;
  }
  if (used_slots_ + want.slots > slot_capacity_) {
    return ReasonCode::kSplitExhausted;
  }
  if (want.mig_mask != 0) {
    // A MIG instance's capacity is its memory slices: the MiB and SM share
    // it carries are the profile's, already fixed by the hardware.
    if (want.mig_overlap || (want.mig_mask & mig_mask_) != 0) {
      return ReasonCode::kPartitionTaken;
    }
    return ReasonCode::kFits;
  }
  if (exclusive_pods_ > 0 || (want.exclusive && !pods_.empty()) ||
      ExclusiveBesideSiblingHere(shares)) {
    return ReasonCode::kExclusiveConflict;
  }
  if (free_memory_mib() < want.memory_mib) {
    return ReasonCode::kInsufficientMemory;
  }
  if (free_cores() < want.cores) return ReasonCode::kInsufficientCores;
  if (want.cores == 0 && free_cores() <= 0) {
    return ReasonCode::kComputeExhausted;
  }
  return ReasonCode::kFits;
}

std::string DeviceLedger::ExclusiveDetail(const PodCharge& want) const {
  if (exclusive_pods_ > 0) return "held exclusively by another pod";
  if (want.exclusive && !pods_.empty()) {
    return absl::StrFormat("want the GPU alone, it has %d pods", pods_.size());
  }
  return "an exclusive container cannot share the GPU with another "
         "container of its pod";
}

GpuVerdict DeviceLedger::CheckPod(
    absl::Span<const ContainerShare> shares) const {
  const ReasonCode code = CheckPodCode(shares);
  if (code == ReasonCode::kFits) return GpuVerdict{code, gpu_.index, ""};
  const PodCharge want = ChargeHere(shares);
  std::string detail;
  if (code == ReasonCode::kModeMismatch) {
    detail = "MIG instances and other shares never mix on one GPU";
  } else if (code == ReasonCode::kSplitExhausted) {
    detail = absl::StrFormat("tenants=%d split=%d want=%d", used_slots_,
                             gpu_.split_count, want.slots);
  } else if (code == ReasonCode::kPartitionTaken && gpu_holders_ > 0) {
    detail = "held by a MIG instance whose record does not place it";
  } else if (code == ReasonCode::kPartitionTaken) {
    detail = absl::StrFormat(
        "memory slices taken=0x%x want=0x%x%s", mig_mask_, want.mig_mask,
        want.mig_overlap ? " (the pod's own overlap)" : "");
  } else if (code == ReasonCode::kExclusiveConflict) {
    detail = ExclusiveDetail(want);
  } else if (code == ReasonCode::kInsufficientMemory) {
    detail = absl::StrFormat("free=%dMiB want=%dMiB", free_memory_mib(),
                             want.memory_mib);
  } else if (code == ReasonCode::kInsufficientCores) {
    detail = absl::StrFormat("free=%d%% want=%d%%", free_cores(), want.cores);
  } else {  // kComputeExhausted
    detail =
        absl::StrFormat("used=%d%% of %d%%", used_cores_, gpu_.core_capacity);
  }
  return GpuVerdict{code, gpu_.index, std::move(detail)};
}

absl::Status DeviceLedger::AddPod(absl::string_view pod_uid,
                                  std::vector<ContainerShare> shares,
                                  absl::string_view group_key) {
  if (pod_uid.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("gpu %s: pod uid is empty", gpu_.uuid));
  }
  if (shares.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "gpu %s: pod %s adds no container share", gpu_.uuid, pod_uid));
  }
  for (const ContainerShare& share : shares) {
    if (share.memory_mib < 0 || share.cores < 0 || share.container_index < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "gpu %s: pod %s container %d: negative share memory=%dMiB "
          "cores=%d",
          gpu_.uuid, pod_uid, share.container_index, share.memory_mib,
          share.cores));
    }
  }
  if (pods_.contains(pod_uid)) {
    return absl::AlreadyExistsError(absl::StrFormat(
        "gpu %s: pod %s is already placed here", gpu_.uuid, pod_uid));
  }
  GpuVerdict verdict = CheckPod(shares);
  if (!verdict.fits()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s gpu=%s pod=%s %s", ReasonCodeName(verdict.code),
                        gpu_.uuid, pod_uid, verdict.detail));
  }
  PodEntry entry;
  entry.charge = ChargeHere(shares);
  entry.group_key = std::string(group_key);
  entry.shares = std::move(shares);
  used_memory_mib_ += entry.charge.memory_mib;
  used_cores_ += entry.charge.cores;
  used_slots_ += entry.charge.slots;
  if (entry.charge.exclusive) ++exclusive_pods_;
  mig_mask_ |= entry.charge.mig_mask;
  mig_instances_ += entry.charge.mig_instances;
  if (entry.charge.holds_gpu) ++gpu_holders_;
  pods_.emplace(std::string(pod_uid), std::move(entry));
  return absl::OkStatus();
}

bool DeviceLedger::RemovePod(absl::string_view pod_uid) {
  auto it = pods_.find(pod_uid);
  if (it == pods_.end()) return false;
  const PodCharge& charge = it->second.charge;
  used_memory_mib_ -= charge.memory_mib;
  used_cores_ -= charge.cores;
  used_slots_ -= charge.slots;
  if (charge.exclusive) --exclusive_pods_;
  mig_mask_ &= ~charge.mig_mask;
  mig_instances_ -= charge.mig_instances;
  if (charge.holds_gpu) --gpu_holders_;
  pods_.erase(it);
  return true;
}

bool DeviceLedger::HasPod(absl::string_view pod_uid) const {
  return pods_.contains(pod_uid);
}

bool DeviceLedger::UsedByGroup(absl::string_view group_key) const {
  if (group_key.empty()) return false;
  for (const auto& [uid, entry] : pods_) {
    if (entry.group_key == group_key &&
        (entry.charge.memory_mib > 0 || entry.charge.cores > 0)) {
      return true;
    }
  }
  return false;
}

absl::Span<const ContainerShare> DeviceLedger::SharesOf(
    absl::string_view pod_uid) const {
  auto it = pods_.find(pod_uid);
  if (it == pods_.end()) return {};
  return it->second.shares;
}

std::vector<std::string> DeviceLedger::PodUids() const {
  std::vector<std::string> uids;
  uids.reserve(pods_.size());
  for (const auto& [uid, entry] : pods_) uids.push_back(uid);
  std::sort(uids.begin(), uids.end());
  return uids;
}

absl::Status DeviceLedger::CheckInvariants() const {
  int64_t memory = 0;
  int64_t cores = 0;
  int64_t slots = 0;
  int32_t exclusive = 0;
  uint32_t mig_mask = 0;
  int32_t mig_instances = 0;
  int32_t holders = 0;
  bool mig_overlap = false;
  for (const auto& [uid, entry] : pods_) {
    if (entry.charge != ChargeHere(entry.shares)) {
      return absl::InternalError(
          absl::StrFormat("gpu %s: pod %s charge is stale", gpu_.uuid, uid));
    }
    if (ExclusiveBesideSiblingHere(entry.shares)) {
      return absl::InternalError(absl::StrFormat(
          "gpu %s: pod %s has an exclusive container beside another", gpu_.uuid,
          uid));
    }
    memory += entry.charge.memory_mib;
    cores += entry.charge.cores;
    slots += entry.charge.slots;
    if (entry.charge.exclusive) ++exclusive;
    mig_overlap = mig_overlap || entry.charge.mig_overlap ||
                  (mig_mask & entry.charge.mig_mask) != 0;
    mig_mask |= entry.charge.mig_mask;
    mig_instances += entry.charge.mig_instances;
    if (entry.charge.holds_gpu) ++holders;
  }
  auto broken = [&](absl::string_view what) {
    return absl::InternalError(absl::StrFormat(
        "gpu %s: invariant broken: %s (memory %d/%d, cores %d/%d, slots "
        "%d/%d, pods %d, exclusive %d, mig slices 0x%x)",
        gpu_.uuid, what, used_memory_mib_, gpu_.memory_mib, used_cores_,
        gpu_.core_capacity, used_slots_, slot_capacity_, pods_.size(),
        exclusive_pods_, mig_mask_));
  };
  if (memory != used_memory_mib_ || cores != used_cores_ ||
      slots != used_slots_ || exclusive != exclusive_pods_ ||
      mig_mask != mig_mask_ || mig_instances != mig_instances_ ||
      holders != gpu_holders_) {
    return broken("totals differ from a recomputation");
  }
  if (mig_overlap) return broken("MIG instances overlap");
  if (mig_instances_ > 0 && used_slots_ != mig_instances_) {
    return broken("MIG instances share the GPU with other shares");
  }
  if (mig_instances_ == 0 && used_memory_mib_ > gpu_.memory_mib) {
    return broken("memory over capacity");
  }
  if (mig_instances_ == 0 && used_cores_ > gpu_.core_capacity) {
    return broken("cores over capacity");
  }
  // A holder is taken as its record says, beside whatever is there.
  if (used_slots_ > slot_capacity_ && gpu_holders_ == 0) {
    return broken("tenants over capacity");
  }
  if (used_memory_mib_ < 0 || used_cores_ < 0 || used_slots_ < 0) {
    return broken("negative usage");
  }
  if (exclusive_pods_ > 0 && pods_.size() > 1) {
    return broken("an exclusive pod shares the GPU");
  }
  return absl::OkStatus();
}

bool DeviceLedger::operator==(const DeviceLedger& other) const {
  return gpu_ == other.gpu_ && pods_ == other.pods_ &&
         used_memory_mib_ == other.used_memory_mib_ &&
         used_cores_ == other.used_cores_ && used_slots_ == other.used_slots_ &&
         exclusive_pods_ == other.exclusive_pods_ &&
         mig_mask_ == other.mig_mask_ &&
         mig_instances_ == other.mig_instances_ &&
         gpu_holders_ == other.gpu_holders_;
}

}  // namespace deviceshare
