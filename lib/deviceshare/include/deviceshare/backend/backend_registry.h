// File: backend/backend_registry.h
//
// BackendRegistry: makes sharing backends by name. Explicit: nothing
// registers itself from a static initializer (a static archive would
// silently drop it); RegisterBuiltinBackends() in
// deviceshare/builtin_backends.h registers the backends this build has.
//
// Thread safety: Register() must finish before Create() is called from
// several threads; Create() and RegisteredNames() are const.
#ifndef DEVICESHARE_BACKEND_BACKEND_REGISTRY_H_
#define DEVICESHARE_BACKEND_BACKEND_REGISTRY_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/backend/sharing_backend.h"
#include "deviceshare/config/config_extension.h"
#include "deviceshare/config/scheduler_config.h"

namespace deviceshare {

class BackendRegistry {
 public:
  using Factory = std::function<absl::StatusOr<std::unique_ptr<SharingBackend>>(
      const Config&)>;

  // `name` is the mode the backend serves (model/sharing_mode.h);
  // `extension`, the config keys it owns. AlreadyExists if `name` is taken;
  // InvalidArgument if it is no mode name.
  absl::Status Register(absl::string_view name, Factory factory,
                        ConfigExtension extension = {});

  // NotFound("no backend 'x'; registered: a, b") for an unknown name, or the
  // factory's own error for a config it rejects.
  absl::StatusOr<std::unique_ptr<SharingBackend>> Create(
      absl::string_view name, const Config& config) const;

  std::vector<std::string> RegisteredNames() const;  // sorted

  // Every registered backend's config keys, for ParseConfigYaml.
  std::vector<ConfigExtension> ConfigExtensions() const;

 private:
  struct Entry {
    Factory factory;
    ConfigExtension extension;
  };
  std::map<std::string, Entry, std::less<>> factories_;
};

}  // namespace deviceshare

#endif  // DEVICESHARE_BACKEND_BACKEND_REGISTRY_H_
