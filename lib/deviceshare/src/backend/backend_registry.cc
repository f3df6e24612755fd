#include "deviceshare/backend/backend_registry.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace deviceshare {

absl::Status BackendRegistry::Register(absl::string_view name, Factory factory,
                                       ConfigExtension extension) {
  if (!IsModeName(name)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "backend registry: '%s' is not a sharing mode name (lower-case "
        "letters, digits and '-')",
        name));
  }
  if (!factory) {
    return absl::InvalidArgumentError(
        absl::StrFormat("backend registry: null factory for '%s'", name));
  }
  auto [it, inserted] = factories_.emplace(
      std::string(name), Entry{std::move(factory), std::move(extension)});
  if (!inserted) {
    return absl::AlreadyExistsError(
        absl::StrFormat("backend registry: '%s' is registered twice", name));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<SharingBackend>> BackendRegistry::Create(
    absl::string_view name, const Config& config) const {
  auto it = factories_.find(name);
  if (it == factories_.end()) {
    return absl::NotFoundError(
        absl::StrFormat("no backend '%s'; registered: %s", name,
                        absl::StrJoin(RegisteredNames(), ", ")));
  }
  return it->second.factory(config);
}

std::vector<ConfigExtension> BackendRegistry::ConfigExtensions() const {
  std::vector<ConfigExtension> extensions;
  for (const auto& [name, entry] : factories_) {
    extensions.push_back(entry.extension);
  }
  return extensions;
}

std::vector<std::string> BackendRegistry::RegisteredNames() const {
  std::vector<std::string> names;
  names.reserve(factories_.size());
  for (const auto& [name, factory] : factories_) names.push_back(name);
  return names;  // std::map keeps them sorted
}

}  // namespace deviceshare
