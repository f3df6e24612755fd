// File: builtin_backends.h
//
// RegisterBuiltinBackends: registers every sharing backend this build has
// (hami-core, mig, mps) into a registry,
// as Kubernetes' NewInTreeRegistry does. Executables and tests call it
// once at start-up.
#ifndef DEVICESHARE_BUILTIN_BACKENDS_H_
#define DEVICESHARE_BUILTIN_BACKENDS_H_

#include <vector>

#include "absl/status/status.h"
#include "deviceshare/backend/backend_registry.h"

namespace deviceshare {

absl::Status RegisterBuiltinBackends(BackendRegistry& registry);

// The config keys the built-in backends own, for ParseConfigYaml
// (config/config_parser.h).
std::vector<ConfigExtension> BuiltinConfigExtensions();

}  // namespace deviceshare

#endif  // DEVICESHARE_BUILTIN_BACKENDS_H_
