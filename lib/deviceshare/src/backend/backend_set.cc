#include "deviceshare/backend/backend_set.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace deviceshare {

absl::StatusOr<BackendSet> BackendSet::Create(const BackendRegistry& registry,
                                              const Config& config) {
  BackendSet set;
  set.known_ = registry.RegisteredNames();
  // No scheduler.modes: every registered backend, in name order.
  std::vector<SharingMode> modes = config.scheduler.enabled_modes;
  if (modes.empty()) {
    for (const std::string& name : set.known_) {
      modes.push_back(SharingMode(name));
    }
  }
  if (modes.empty()) {
    return absl::InvalidArgumentError(
        "scheduler.modes: no sharing mode enabled (no backend registered)");
  }
  for (size_t i = 0; i < modes.size(); ++i) {
    const SharingMode mode = modes[i];
    if (set.ForMode(mode) != nullptr) continue;
    if (!set.Knows(mode)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "scheduler.modes[%d]: no backend serves \"%s\" (registered: %s)", i,
          mode.name(), set.KnownNames()));
    }
    auto backend = registry.Create(mode.name(), config);
    if (!backend.ok()) {
      return absl::Status(
          backend.status().code(),
          absl::StrFormat("scheduler.modes: %s", backend.status().message()));
    }
    set.backends_.push_back(*std::move(backend));
  }
  return set;
}

bool BackendSet::Knows(SharingMode mode) const {
  return std::binary_search(known_.begin(), known_.end(), mode.name());
}

std::string BackendSet::KnownNames() const {
  return absl::StrJoin(known_, ", ");
}

const SharingBackend* BackendSet::ForMode(SharingMode mode) const {
  for (const auto& backend : backends_) {
    if (backend->mode() == mode) return backend.get();
  }
  return nullptr;
}

}  // namespace deviceshare
