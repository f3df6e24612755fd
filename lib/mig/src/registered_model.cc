#include "registered_model.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "deviceshare/status_macros.h"
#include "profile_name.h"

namespace deviceshare::mig::internal {
namespace {

// A synthetic NVML id for a profile the built-in model lacks: ids only need
// to be distinct within the model, and NVML's are below 100.
constexpr int32_t kFirstSyntheticId = 1000;

// The slice counts of the whole GPU: the base model's, raised to what the
// registration shows (a placement past the base's slices, a larger <N>g).
void SetSliceCounts(const std::vector<const RegisteredMigProfile*>& usable,
                    const MigModel* base, MigModel& model) {
  model.memory_slices = base ? base->memory_slices : 0;
  model.compute_slices = base ? base->compute_slices : 0;
  for (const RegisteredMigProfile* profile : usable) {
    const int32_t n = ParseProfileName(profile->name)->compute_slices;
    model.compute_slices = std::max(model.compute_slices, n);
    for (const MigPlacement& placement : profile->placements) {
      model.memory_slices =
          std::max(model.memory_slices, placement.start + placement.size);
    }
  }
}

// Placements a MigSlot mask can hold, all of the same size (NVML gives a
// profile one size); the codec refuses others, a Gpu built in code may not.
bool Placeable(const RegisteredMigProfile& profile) {
  if (profile.placements.empty()) return false;
  for (const MigPlacement& placement : profile.placements) {
    if (placement.start < 0 || placement.size != profile.placements[0].size ||
        placement.size < 1 || placement.start + placement.size > 32) {
      return false;
    }
  }
  return true;
}

// `ordinal`: the profile's position among the usable ones.
MigProfile ProfileOf(const RegisteredMigProfile& registered, int32_t ordinal,
                     const MigModel* base, std::set<int32_t>& ids) {
  MigProfile profile;
  profile.name = CanonicalProfileName(registered.name);
  profile.compute_slices = ParseProfileName(profile.name)->compute_slices;
  profile.memory_slices = registered.placements[0].size;
  profile.memory_mib = registered.memory_mib;
  for (const MigPlacement& placement : registered.placements) {
    profile.legal_starts |= 1u << placement.start;
  }
  // HAMi caps instances by placements alone; the hardware's cap, when the
  // base model knows it, is never lower for a real registration.
  profile.max_instances = static_cast<int32_t>(registered.placements.size());
  profile.id = kFirstSyntheticId + ordinal;
  const MigProfile* known = base ? base->FindProfile(profile.name) : nullptr;
  if (known != nullptr) {
    profile.sm_count = known->sm_count;
    profile.max_instances =
        std::max(1, std::min(profile.max_instances, known->max_instances));
    if (!ids.contains(known->id)) profile.id = known->id;
  }
  ids.insert(profile.id);
  return profile;
}

}  // namespace

absl::StatusOr<RegisteredModel> BuildRegisteredModel(const Gpu& gpu,
                                                     const MigModel* base) {
  std::vector<const RegisteredMigProfile*> usable;
  for (const RegisteredMigProfile& profile : gpu.mig_profiles) {
    if (!Placeable(profile) || profile.memory_mib < 1 ||
        !ParseProfileName(profile.name)) {
      continue;
    }
    usable.push_back(&profile);
  }
  if (usable.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "gpu ", gpu.uuid, ": none of its ", gpu.mig_profiles.size(),
        " registered MIG profiles has placements and memory"));
  }
  MigModel model;
  model.name =
      base ? base->name
           : (gpu.model.empty() ? std::string("registered") : gpu.model);
  SetSliceCounts(usable, base, model);
  std::set<int32_t> ids;
  for (size_t i = 0; i < usable.size(); ++i) {
    model.profiles.push_back(
        ProfileOf(*usable[i], static_cast<int32_t>(i), base, ids));
  }
  absl::StatusOr<MigCatalog> catalog =
      MigCatalog::FromModels({std::move(model)});
  if (!catalog.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "gpu ", gpu.uuid,
        ": registered MIG profiles: ", catalog.status().message()));
  }
  RegisteredModel out{*std::move(catalog), {}};
  const MigModel& built = out.catalog.models()[0];
  for (const MigProfile& profile : built.profiles) {
    int32_t cores = profile.compute_slices * 100 / built.compute_slices;
    for (const RegisteredMigProfile* registered : usable) {
      if (SameProfileName(registered->name, profile.name) &&
          registered->cores > 0) {
        cores = registered->cores;
      }
    }
    out.cores.push_back(cores);
  }
  return out;
}

}  // namespace deviceshare::mig::internal
