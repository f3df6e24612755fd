// File: config/config_extension.h
//
// ConfigExtension: configuration keys a backend owns, so that the core's
// parser knows no backend's settings by name. The parser accepts an owned
// key in its section (and still refuses every unknown one), keeps its value
// as written in Config::extensions, and when the whole file is read lets
// the owner check it: errors name the key path and the value, notices say
// what goes unused. The backend reads its typed settings from
// Config::extensions when it is made (Envoy's typed factory config, k8s'
// per-plugin args).
//
// BackendRegistry keeps each backend's extension beside its factory
// (backend/backend_registry.h); hosts pass registry.ConfigExtensions() to
// ParseConfigYaml.
#ifndef DEVICESHARE_CONFIG_CONFIG_EXTENSION_H_
#define DEVICESHARE_CONFIG_CONFIG_EXTENSION_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "deviceshare/config/scheduler_config.h"

namespace deviceshare {

struct ConfigExtension {
  // Keys of the `nvidia:` and of the `scheduler:` section.
  std::vector<std::string> nvidia_keys;
  std::vector<std::string> scheduler_keys;
  // Checks the owned values (config.extensions) once the file is read, with
  // the whole config in view; may append to config.notices, and may fill
  // the settings the core applies for the owner without knowing it
  // (DeviceConfig::volcano_mode_models). Null: none.
  std::function<absl::Status(Config& config)> check;
};

}  // namespace deviceshare

#endif  // DEVICESHARE_CONFIG_CONFIG_EXTENSION_H_
