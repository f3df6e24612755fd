// File: builtin_backends.h
//
// RegisterBuiltinBackends: registers every sharing backend this build has
// (hami-core, mig, mps) into a registry,
// as Kubernetes' NewInTreeRegistry does. Executables and tests call it
// once at start-up.
#ifndef DEVICESHARE_BUILTIN_BACKENDS_H_
#define DEVICESHARE_BUILTIN_BACKENDS_H_

#include "absl/status/status.h"
#include "deviceshare/backend/backend_registry.h"

namespace deviceshare {

absl::Status RegisterBuiltinBackends(BackendRegistry& registry);

}  // namespace deviceshare

#endif  // DEVICESHARE_BUILTIN_BACKENDS_H_
