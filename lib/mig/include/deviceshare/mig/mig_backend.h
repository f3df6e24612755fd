// File: mig/mig_backend.h
//
// The mig backend: each container gets, on each of its GPUs, a hardware
// MIG GPU instance of the GPU's catalog (mig/mig_catalog.h). Many pods'
// instances share one GPU; a container that asks for N devices gets N
// instances on distinct GPUs. How the instance is chosen is
// scheduler.migSearch:
//   placement  the smallest profile that holds the container's memory and
//              cores (or the profile it names, `nvidia.com/mig-3g.40gb`),
//              at the legal start that keeps the most placements possible
//              (mig/slot_search.h); HAMi's migProfileAllowlist narrows the
//              profiles.
//   configmap  Volcano/HAMi knownMigGeometries: a GPU with instances in use
//              keeps their group; an idle one takes the first group, in
//              config order, with a free instance large enough. All free
//              instances of the group count, not only types already in use.
// A GPU that registered its MIG profiles (Gpu::mig_profiles, HAMi's
// `migProfiles`) is scheduled from them alone, as HAMi's scheduler does:
// only those profiles, only at their registered placements, charged the
// registered memoryMB and core; a memory percentage is of the GPU's
// registered memory. A GPU without them uses the catalog's model.
// Instances the GPU already has (Gpu::mig_instances) are reused when free
// and adequate, unless a smaller profile can be created beside them; a new
// one is created only in memory slices no instance covers. A GPU whose
// instances are in use is never repartitioned; an idle one may be, and the
// grant says so (MigAction::kRepartition).
//
// A container that asks for the whole card gets the largest profile;
// memory percentages are of the largest profile's memory. A grant's
// memory_mib and cores are its instance's (cores = compute slices as a
// percent of the GPU's), so the ledger and the scores see what the
// instance takes.
//
// Thread safety: safe for concurrent use (an internal cache of which
// catalog model each GPU model is, under a mutex); see SharingBackend.
#ifndef DEVICESHARE_MIG_MIG_BACKEND_H_
#define DEVICESHARE_MIG_MIG_BACKEND_H_

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "deviceshare/backend/backend_registry.h"
#include "deviceshare/backend/sharing_backend.h"
#include "deviceshare/config/scheduler_config.h"
#include "deviceshare/mig/mig_catalog.h"
#include "deviceshare/mig/mig_config.h"

namespace deviceshare::mig {

inline constexpr char kBackendName[] = "mig";
// The mode this backend serves (Gpu::mode, DeviceGrant::mode).
inline constexpr SharingMode kMode(kBackendName);

// The mig backend's reasons (model/reason_code.h).
// No MIG profile table for the GPU's model.
inline constexpr ReasonInfo kMigUnknownModelInfo{"MigUnknownModel", 12, true};
// No allowed MIG profile is large enough.
inline constexpr ReasonInfo kMigNoProfileInfo{"MigNoProfile", 13, true};
// No free legal start (or geometry position) is left.
inline constexpr ReasonInfo kMigNoSlotInfo{"MigNoSlot", 14, false};
inline constexpr ReasonCode kMigUnknownModel(kMigUnknownModelInfo);
inline constexpr ReasonCode kMigNoProfile(kMigNoProfileInfo);
inline constexpr ReasonCode kMigNoSlot(kMigNoSlotInfo);

// `catalog` must outlive the backend. The mig settings come from
// `config` (mig/mig_config.h); InvalidArgument for a bad one.
absl::StatusOr<std::unique_ptr<SharingBackend>> NewMigBackend(
    const Config& config, const MigCatalog& catalog);

// Registers NewMigBackend with the built-in catalog under kBackendName,
// with the config keys it owns (MigConfigExtension).
absl::Status RegisterMigBackend(BackendRegistry& registry);

}  // namespace deviceshare::mig

#endif  // DEVICESHARE_MIG_MIG_BACKEND_H_
