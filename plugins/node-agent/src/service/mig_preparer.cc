#include "service/mig_preparer.h"

#include <map>
#include <memory>

#include "absl/strings/str_cat.h"
#include "deviceshare/agent/mig_realizer.h"
#include "deviceshare/mig/mig_backend.h"
#include "spdlog/spdlog.h"

namespace deviceshare::agent {
namespace {

// Every MIG instance the live pods' records hold on `gpu_uuid`.
std::vector<HeldMigSlot> HeldOn(const std::string& gpu_uuid,
                                const std::vector<PodRecord>& live) {
  std::vector<HeldMigSlot> held;
  for (const PodRecord& record : live) {
    for (const ContainerAllocation& container : record.allocation.containers) {
      for (size_t d = 0; d < container.devices.size(); ++d) {
        const DeviceGrant& grant = container.devices[d];
        if (grant.mode != mig::kMode || grant.uuid != gpu_uuid ||
            !grant.mig.placed()) {
          continue;
        }
        held.push_back(
            HeldMigSlot{MigHolder{record.uid, container.container_index,
                                  static_cast<int32_t>(d)},
                        grant.mig});
      }
    }
  }
  return held;
}

}  // namespace

MigPreparer MakeMigPreparer(MigControl* control) {
  auto realizer = std::make_shared<MigRealizer>(control);
  return [realizer](const PodRecord& record, int32_t container_index,
                    std::vector<DeviceGrant>& grants,
                    const std::vector<PodRecord>& live) -> absl::Status {
    std::map<std::string, absl::StatusOr<std::vector<RealizedMigSlot>>>
        realized_by_gpu;
    for (size_t d = 0; d < grants.size(); ++d) {
      DeviceGrant& grant = grants[d];
      if (grant.mode != mig::kMode) continue;
      if (!grant.mig.placed()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "pod ", record.key, " container ", container_index, " GPU ",
            grant.uuid, ": MIG grant ", grant.mig.profile,
            " has no placement in its record (start and size); this agent "
            "creates instances only at an exact placement"));
      }
      // One realization per GPU covers every instance held on it.
      auto [found, fresh] = realized_by_gpu.try_emplace(grant.uuid);
      if (fresh) {
        found->second = realizer->Realize(grant.uuid, HeldOn(grant.uuid, live));
      }
      const absl::StatusOr<std::vector<RealizedMigSlot>>& realized =
          found->second;
      if (!realized.ok()) {
        return absl::Status(
            realized.status().code(),
            absl::StrCat("pod ", record.key, ": MIG instance ",
                         grant.mig.profile, "@", grant.mig.start, " on ",
                         grant.uuid, ": ", realized.status().message()));
      }
      const MigHolder self{record.uid, container_index,
                           static_cast<int32_t>(d)};
      for (const RealizedMigSlot& slot : *realized) {
        if (!(slot.holder == self)) continue;
        grant.mig_uuid = slot.instance.mig_uuid;
        grant.gpu_instance_id = slot.instance.gpu_instance_id;
        grant.compute_instance_id = slot.instance.compute_instance_id;
      }
      if (grant.mig_uuid.empty()) {
        return absl::InternalError(absl::StrCat(
            "pod ", record.key, ": MIG instance ", grant.mig.profile, "@",
            grant.mig.start, " on ", grant.uuid, " has no MIG uuid"));
      }
    }
    return absl::OkStatus();
  };
}

void SweepOrphanMigInstances(MigControl* control,
                             const std::vector<std::string>& gpu_uuids,
                             const std::vector<PodRecord>& live) {
  MigRealizer realizer(control);
  for (const std::string& gpu : gpu_uuids) {
    absl::StatusOr<std::vector<MigInstanceInfo>> removed =
        realizer.CleanupOrphans(gpu, HeldOn(gpu, live));
    if (!removed.ok()) {
      spdlog::warn("GPU {}: orphan MIG instances not swept: {}", gpu,
                   removed.status().ToString());
      continue;
    }
    for (const MigInstanceInfo& instance : *removed) {
      spdlog::info("GPU {}: removed orphan MIG instance {}@{} (gi {})", gpu,
                   instance.slot.profile, instance.slot.start,
                   instance.gpu_instance_id);
    }
  }
}

}  // namespace deviceshare::agent
