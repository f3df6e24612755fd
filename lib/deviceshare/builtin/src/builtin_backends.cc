#include "deviceshare/builtin_backends.h"

#include "deviceshare/hamicore/hamicore_backend.h"

namespace deviceshare {

absl::Status RegisterBuiltinBackends(BackendRegistry& registry) {
  return hamicore::RegisterHamiCoreBackend(registry);
}

}  // namespace deviceshare
