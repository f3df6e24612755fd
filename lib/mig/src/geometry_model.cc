#include "geometry_model.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "profile_name.h"

namespace deviceshare::mig::internal {
namespace {

// Synthetic NVML ids: distinct within the model, apart from NVML's (< 100).
constexpr int32_t kFirstSyntheticId = 1000;
constexpr int32_t kMaxSlices = 16;  // SlotSearch's table

// What the entry says of one instance type.
struct TypeSeen {
  int32_t compute_slices = 0;
  int64_t memory_mib = 0;
  bool variant = false;
};

std::string GroupName(const MigGeometry& geometry, size_t index) {
  return geometry.group.empty() ? absl::StrCat(index) : geometry.group;
}

}  // namespace

absl::StatusOr<MigCatalog> BuildGeometryModel(const Gpu& gpu,
                                              const KnownMigGeometries& entry) {
  std::map<std::string, TypeSeen> types;
  int32_t slices = 0;
  for (size_t g = 0; g < entry.geometries.size(); ++g) {
    const MigGeometry& geometry = entry.geometries[g];
    int64_t group_slices = 0;
    for (size_t i = 0; i < geometry.instances.size(); ++i) {
      const MigGeometryInstance& instance = geometry.instances[i];
      std::optional<ProfileName> name = ParseProfileName(instance.name);
      if (!name) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "knownMigGeometries group %s instance %d: \"%s\" is not a MIG "
            "profile name (want <N>g.<M>gb), so the slices of model \"%s\" "
            "cannot be told from it",
            GroupName(geometry, g), i, instance.name, gpu.model));
      }
      TypeSeen& seen = types[CanonicalProfileName(instance.name)];
      seen.compute_slices = name->compute_slices;
      seen.variant = !name->suffix.empty();
      // The config's memory, else the name's <M> GiB; the largest a group
      // gives the type, so that every group's instance fits its profile.
      const int64_t memory = instance.memory_mib > 0 ? instance.memory_mib
                                                     : name->gigabytes * 1024;
      seen.memory_mib = std::max(seen.memory_mib, memory);
      group_slices +=
          int64_t{std::max(instance.count, 0)} * name->compute_slices;
    }
    if (group_slices > kMaxSlices) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "knownMigGeometries group %s takes %d slices of model \"%s\" "
          "(<N> per <N>g instance), more than %d",
          GroupName(geometry, g), group_slices, gpu.model, kMaxSlices));
    }
    slices = std::max(slices, static_cast<int32_t>(group_slices));
  }
  if (slices == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "knownMigGeometries lists no instance for model \"%s\"", gpu.model));
  }
  MigModel model;
  model.name = gpu.model;
  model.memory_slices = slices;
  model.compute_slices = slices;
  int32_t ordinal = 0;
  for (const auto& [name, seen] : types) {
    MigProfile profile;
    profile.name = name;
    profile.id = kFirstSyntheticId + ordinal++;
    profile.memory_slices = seen.compute_slices;
    profile.compute_slices = seen.compute_slices;
    profile.memory_mib = seen.memory_mib;
    profile.variant = seen.variant;
    for (int32_t start = 0; start + seen.compute_slices <= slices; ++start) {
      profile.legal_starts |= 1u << start;
    }
    profile.max_instances = slices / seen.compute_slices;
    // A type that no group can hold (a 9g beside 7 slices) is left out;
    // LayGeometry then names the group it is in.
    if (profile.legal_starts != 0) model.profiles.push_back(profile);
  }
  absl::StatusOr<MigCatalog> catalog =
      MigCatalog::FromModels({std::move(model)});
  if (!catalog.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("MIG model made from knownMigGeometries for \"", gpu.model,
                     "\": ", catalog.status().message()));
  }
  return catalog;
}

}  // namespace deviceshare::mig::internal
