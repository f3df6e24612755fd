#include "deviceshare/builtin_backends.h"

#include "deviceshare/hamicore/hamicore_backend.h"
#include "deviceshare/mig/mig_backend.h"
#include "deviceshare/mps/mps_backend.h"
#include "deviceshare/status_macros.h"

namespace deviceshare {

absl::Status RegisterBuiltinBackends(BackendRegistry& registry) {
  DS_RETURN_IF_ERROR(hamicore::RegisterHamiCoreBackend(registry));
  DS_RETURN_IF_ERROR(mig::RegisterMigBackend(registry));
  return mps::RegisterMpsBackend(registry);
}

std::vector<ConfigExtension> BuiltinConfigExtensions() {
  BackendRegistry registry;
  // Three constant names: this cannot fail.
  RegisterBuiltinBackends(registry).IgnoreError();
  return registry.ConfigExtensions();
}

}  // namespace deviceshare
