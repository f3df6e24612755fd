#include "deviceshare/backend/backend_set.h"

#include "absl/strings/str_format.h"

namespace deviceshare {

absl::StatusOr<BackendSet> BackendSet::Create(const BackendRegistry& registry,
                                              const Config& config) {
  if (config.scheduler.enabled_modes.empty()) {
    return absl::InvalidArgumentError(
        "scheduler.modes: no sharing mode enabled");
  }
  BackendSet set;
  for (SharingMode mode : config.scheduler.enabled_modes) {
    if (set.ForMode(mode) != nullptr) continue;
    auto backend = registry.Create(SharingModeName(mode), config);
    if (!backend.ok()) {
      return absl::Status(
          backend.status().code(),
          absl::StrFormat("scheduler.modes: %s", backend.status().message()));
    }
    set.backends_.push_back(*std::move(backend));
  }
  return set;
}

const SharingBackend* BackendSet::ForMode(SharingMode mode) const {
  for (const auto& backend : backends_) {
    if (backend->mode() == mode) return backend.get();
  }
  return nullptr;
}

}  // namespace deviceshare
