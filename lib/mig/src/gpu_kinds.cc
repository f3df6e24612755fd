#include "gpu_kinds.h"

#include <algorithm>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "geometry_model.h"
#include "registered_model.h"

namespace deviceshare::mig::internal {
namespace {

// Equal inputs give equal hashes; a collision is told apart by comparing.
size_t RegisteredHash(const Gpu& gpu) {
  size_t hash = absl::HashOf(gpu.pci_device_id, gpu.model);
  for (const RegisteredMigProfile& profile : gpu.mig_profiles) {
    hash = absl::HashOf(hash, profile.name, profile.memory_mib, profile.cores,
                        profile.slice_count);
    for (const MigPlacement& placement : profile.placements) {
      hash = absl::HashOf(hash, placement.start, placement.size);
    }
  }
  return hash;
}

}  // namespace

int32_t GpuKind::CoresOf(int profile) const {
  if (profile >= 0 && static_cast<size_t>(profile) < cores.size()) {
    return cores[profile];
  }
  return model->profiles[profile].compute_slices * 100 / model->compute_slices;
}

GpuKinds::GpuKinds(const MigConfig& config, const MigCatalog& catalog)
    : config_(config),
      configmap_(config.search == MigSearch::kConfigMap),
      catalog_(catalog) {
  for (const MigModel& model : catalog.models()) {
    absl::StatusOr<SlotSearch> search = SlotSearch::Create(model);
    searches_.push_back(search.ok()
                            ? std::make_unique<SlotSearch>(*std::move(search))
                            : nullptr);
  }
}

const GpuKind& GpuKinds::Of(const Gpu& gpu) const {
  if (!gpu.mig_profiles.empty()) return OfRegistered(gpu);
  auto key = std::make_pair(gpu.pci_device_id, gpu.model);
  {
    absl::ReaderMutexLock lock(&mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) return *it->second;
  }
  std::unique_ptr<GpuKind> built = Build(gpu);
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = cache_.emplace(std::move(key), std::move(built));
  return *it->second;
}

const GpuKind& GpuKinds::OfRegistered(const Gpu& gpu) const {
  const size_t hash = RegisteredHash(gpu);
  auto same = [&](const RegisteredEntry& entry) {
    return entry.pci_device_id == gpu.pci_device_id &&
           entry.model == gpu.model && entry.profiles == gpu.mig_profiles;
  };
  {
    absl::ReaderMutexLock lock(&mu_);
    auto it = registered_.find(hash);
    if (it != registered_.end()) {
      for (const RegisteredEntry& entry : it->second) {
        if (same(entry)) return *entry.kind;
      }
    }
  }
  std::unique_ptr<GpuKind> built = Build(gpu);
  absl::MutexLock lock(&mu_);
  std::vector<RegisteredEntry>& bucket = registered_[hash];
  for (const RegisteredEntry& entry : bucket) {
    if (same(entry)) return *entry.kind;  // another thread built it first
  }
  bucket.push_back(RegisteredEntry{gpu.pci_device_id, gpu.model,
                                   gpu.mig_profiles, std::move(built)});
  return *bucket.back().kind;
}

std::unique_ptr<GpuKind> GpuKinds::Build(const Gpu& gpu) const {
  auto kind = std::make_unique<GpuKind>();
  const MigModel* model = catalog_.Match(gpu);
  const size_t index =
      model ? static_cast<size_t>(model - catalog_.models().data()) : 0;
  if (!gpu.mig_profiles.empty()) {
    absl::StatusOr<RegisteredModel> registered =
        BuildRegisteredModel(gpu, model);
    absl::StatusOr<SlotSearch> search =
        registered.ok() ? SlotSearch::Create(registered->catalog.models()[0])
                        : absl::StatusOr<SlotSearch>(registered.status());
    kind->registered = true;
    if (!search.ok()) {
      kind->model_status = search.status();
      return kind;
    }
    kind->own_catalog =
        std::make_unique<MigCatalog>(std::move(registered->catalog));
    kind->own_search = std::make_unique<SlotSearch>(*std::move(search));
    kind->cores = std::move(registered->cores);
    kind->model = &kind->own_catalog->models()[0];
    kind->search = kind->own_search.get();
  } else if (model != nullptr && searches_[index] != nullptr) {
    kind->model = model;
    kind->search = searches_[index].get();
  } else if (!FromGeometries(gpu, *kind)) {
    return kind;
  }
  Complete(gpu, *kind);
  return kind;
}

bool GpuKinds::FromGeometries(const Gpu& gpu, GpuKind& kind) const {
  if (!configmap_) return false;
  const KnownMigGeometries* entry =
      GeometriesEntryFor(config_.known_geometries, gpu.model);
  if (entry == nullptr) return false;
  absl::StatusOr<MigCatalog> catalog = BuildGeometryModel(gpu, *entry);
  absl::StatusOr<SlotSearch> search =
      catalog.ok() ? SlotSearch::Create(catalog->models()[0])
                   : absl::StatusOr<SlotSearch>(catalog.status());
  if (!search.ok()) {
    kind.model_status = search.status();
    return false;
  }
  kind.own_catalog = std::make_unique<MigCatalog>(*std::move(catalog));
  kind.own_search = std::make_unique<SlotSearch>(*std::move(search));
  kind.model = &kind.own_catalog->models()[0];
  kind.search = kind.own_search.get();
  return true;
}

void GpuKinds::Complete(const Gpu& gpu, GpuKind& kind) const {
  const MigModel* model = kind.model;
  for (const MigProfile& profile : model->profiles) {
    if (!profile.variant) {
      kind.largest_memory_mib =
          std::max(kind.largest_memory_mib, profile.memory_mib);
    }
  }
  if (const MigProfileAllowlist* entry =
          AllowlistEntryFor(config_.profile_allowlist, gpu.model)) {
    std::vector<int> allowed;
    for (const std::string& name : entry->profiles) {
      int profile = model->ProfileIndex(name);
      if (profile >= 0) allowed.push_back(profile);
    }
    kind.allowed = std::move(allowed);
  }
  if (!configmap_) return;
  const KnownMigGeometries* entry =
      GeometriesEntryFor(config_.known_geometries, gpu.model);
  if (entry == nullptr) {
    kind.groups_status = absl::NotFoundError(absl::StrFormat(
        "no knownMigGeometries entry lists model \"%s\"", gpu.model));
    return;
  }
  for (size_t g = 0; g < entry->geometries.size(); ++g) {
    const MigGeometry& geometry = entry->geometries[g];
    absl::StatusOr<std::vector<GeometrySlot>> slots =
        LayGeometry(*model, geometry);
    if (!slots.ok()) {
      kind.groups_status = slots.status();
      kind.groups.clear();
      return;
    }
    kind.groups.push_back(
        LaidGroup{geometry.group.empty() ? absl::StrCat(g) : geometry.group,
                  *std::move(slots)});
  }
}

}  // namespace deviceshare::mig::internal
