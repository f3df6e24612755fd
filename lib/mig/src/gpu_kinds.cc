#include "gpu_kinds.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace deviceshare::mig::internal {
namespace {

// Volcano and HAMi match `models` as substrings of the registered type.
bool ModelListed(const std::vector<std::string>& models,
                 const std::string& gpu_model) {
  const std::string lowered = absl::AsciiStrToLower(gpu_model);
  for (const std::string& model : models) {
    if (absl::StrContains(lowered, absl::AsciiStrToLower(model))) return true;
  }
  return false;
}

}  // namespace

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

std::unique_ptr<GpuKind> GpuKinds::Build(const Gpu& gpu) const {
  auto kind = std::make_unique<GpuKind>();
  const MigModel* model = catalog_.Match(gpu);
  if (model == nullptr) return kind;
  const size_t index = static_cast<size_t>(model - catalog_.models().data());
  if (searches_[index] == nullptr) return kind;
  kind->model = model;
  kind->search = searches_[index].get();
  for (const MigProfile& profile : model->profiles) {
    if (!profile.variant) {
      kind->largest_memory_mib =
          std::max(kind->largest_memory_mib, profile.memory_mib);
    }
  }
  for (const MigProfileAllowlist& entry : config_.profile_allowlist) {
    if (!ModelListed(entry.models, gpu.model)) continue;
    std::vector<int> allowed;
    for (const std::string& name : entry.profiles) {
      int profile = model->ProfileIndex(name);
      if (profile >= 0) allowed.push_back(profile);
    }
    kind->allowed = std::move(allowed);
    break;
  }
  if (!configmap_) return kind;
  kind->groups_status = absl::NotFoundError(absl::StrFormat(
      "no knownMigGeometries entry lists model \"%s\"", gpu.model));
  for (const KnownMigGeometries& entry : config_.known_geometries) {
    if (!ModelListed(entry.models, gpu.model)) continue;
    kind->groups_status = absl::OkStatus();
    for (size_t g = 0; g < entry.geometries.size(); ++g) {
      const MigGeometry& geometry = entry.geometries[g];
      absl::StatusOr<std::vector<GeometrySlot>> slots =
          LayGeometry(*model, geometry);
      if (!slots.ok()) {
        kind->groups_status = slots.status();
        kind->groups.clear();
        break;
      }
      kind->groups.push_back(
          LaidGroup{geometry.group.empty() ? absl::StrCat(g) : geometry.group,
                    *std::move(slots)});
    }
    break;
  }
  return kind;
}

}  // namespace deviceshare::mig::internal
