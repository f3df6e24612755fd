#include "deviceshare/agent/mig_realizer.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::agent {
namespace {

std::string SlotText(const MigSlot& slot) {
  return absl::StrFormat("%s@%d (slices %d-%d)", slot.profile, slot.start,
                         slot.start, slot.start + slot.size - 1);
}

std::string HolderText(const MigHolder& holder) {
  return absl::StrFormat("pod %s container %d device %d", holder.pod_uid,
                         holder.container_index, holder.device_index);
}

std::string InstanceText(const MigInstanceInfo& instance) {
  return absl::StrFormat("%s (GPU instance %d)", SlotText(instance.slot),
                         instance.gpu_instance_id);
}

bool Overlap(const MigSlot& a, const MigSlot& b) {
  return a.start < b.start + b.size && b.start < a.start + a.size;
}

// Same place: profile and start name an instance (the size follows).
bool SamePlace(const MigSlot& a, const MigSlot& b) {
  return a.profile == b.profile && a.start == b.start;
}

// A container can use it: it has a compute instance.
bool Usable(const MigInstanceInfo& instance) {
  return instance.compute_instance_id >= 0;
}

absl::Status CheckHeld(const std::string& gpu_uuid,
                       const std::vector<HeldMigSlot>& held) {
  for (size_t i = 0; i < held.size(); ++i) {
    const MigSlot& slot = held[i].slot;
    if (slot.profile.empty() || !slot.placed()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "GPU %s: the MIG slot of %s is not placed (profile \"%s\", start "
          "%d, size %d)",
          gpu_uuid, HolderText(held[i].holder), slot.profile, slot.start,
          slot.size));
    }
    for (size_t j = 0; j < i; ++j) {
      const MigSlot& other = held[j].slot;
      if (!SamePlace(slot, other) && Overlap(slot, other)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "GPU %s: the MIG slots of %s (%s) and %s (%s) overlap; the "
            "allocation records disagree",
            gpu_uuid, HolderText(held[j].holder), SlotText(other),
            HolderText(held[i].holder), SlotText(slot)));
      }
    }
  }
  return absl::OkStatus();
}

bool IsHeld(const MigInstanceInfo& instance,
            const std::vector<HeldMigSlot>& held) {
  return Usable(instance) &&
         std::any_of(held.begin(), held.end(), [&](const HeldMigSlot& h) {
           return SamePlace(instance.slot, h.slot);
         });
}

}  // namespace

absl::StatusOr<std::vector<RealizedMigSlot>> MigRealizer::Realize(
    const std::string& gpu_uuid, const std::vector<HeldMigSlot>& held) {
  absl::MutexLock lock(&mu_);
  DS_RETURN_IF_ERROR(CheckHeld(gpu_uuid, held));
  DS_ASSIGN_OR_RETURN(std::vector<MigInstanceInfo> existing,
                      control_->ListInstances(gpu_uuid));
  const bool busy =
      std::any_of(existing.begin(), existing.end(),
                  [&](const MigInstanceInfo& e) { return IsHeld(e, held); });
  if (!busy) {
    // (c) No pod uses anything here: clear the GPU for the records' layout.
    for (const MigInstanceInfo& orphan : existing) {
      DS_RETURN_IF_ERROR(
          control_->DestroyInstance(gpu_uuid, orphan.gpu_instance_id));
    }
    existing.clear();
  } else {
    // (d) Check every missing slot against what may not be touched before
    // creating any, so a refusal changes nothing.
    for (const HeldMigSlot& want : held) {
      if (std::any_of(existing.begin(), existing.end(),
                      [&](const MigInstanceInfo& e) {
                        return Usable(e) && SamePlace(e.slot, want.slot);
                      })) {
        continue;
      }
      for (const MigInstanceInfo& e : existing) {
        if (Overlap(e.slot, want.slot)) {
          return absl::FailedPreconditionError(absl::StrFormat(
              "GPU %s: cannot create MIG slot %s for %s: it overlaps MIG "
              "instance %s, which no live pod holds; the GPU hosts instances "
              "that live pods hold, so nothing on it is destroyed",
              gpu_uuid, SlotText(want.slot), HolderText(want.holder),
              InstanceText(e)));
        }
      }
    }
  }
  std::vector<RealizedMigSlot> out;
  out.reserve(held.size());
  for (const HeldMigSlot& want : held) {
    auto found = std::find_if(
        existing.begin(), existing.end(), [&](const MigInstanceInfo& e) {
          return Usable(e) && SamePlace(e.slot, want.slot);
        });
    if (found == existing.end()) {
      absl::StatusOr<MigInstanceInfo> created = control_->CreateInstance(
          gpu_uuid, want.slot.profile, want.slot.start);
      if (!created.ok()) {
        return absl::Status(
            created.status().code(),
            absl::StrFormat("GPU %s: creating MIG slot %s for %s: %s", gpu_uuid,
                            SlotText(want.slot), HolderText(want.holder),
                            created.status().message()));
      }
      existing.push_back(*created);
      found = existing.end() - 1;
    }
    out.push_back(RealizedMigSlot{want.holder, *found});
  }
  return out;
}

absl::StatusOr<std::vector<MigInstanceInfo>> MigRealizer::CleanupOrphans(
    const std::string& gpu_uuid, const std::vector<HeldMigSlot>& held) {
  absl::MutexLock lock(&mu_);
  DS_ASSIGN_OR_RETURN(std::vector<MigInstanceInfo> existing,
                      control_->ListInstances(gpu_uuid));
  std::vector<MigInstanceInfo> destroyed;
  if (std::any_of(existing.begin(), existing.end(),
                  [&](const MigInstanceInfo& e) { return IsHeld(e, held); })) {
    return destroyed;
  }
  for (const MigInstanceInfo& orphan : existing) {
    DS_RETURN_IF_ERROR(
        control_->DestroyInstance(gpu_uuid, orphan.gpu_instance_id));
    destroyed.push_back(orphan);
  }
  return destroyed;
}

}  // namespace deviceshare::agent
