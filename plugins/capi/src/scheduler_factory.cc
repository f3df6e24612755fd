#include "scheduler_factory.h"

#include "c_status.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/config/config_parser.h"
#include "deviceshare/policy/policy_registry.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::capi {

absl::StatusOr<std::unique_ptr<Scheduler>> NewScheduler(
    absl::string_view config) {
  BackendRegistry backends;
  DS_RETURN_IF_ERROR(RegisterBuiltinBackends(backends));
  absl::StatusOr<Config> parsed =
      ParseConfigYaml(config, backends.ConfigExtensions());
  if (!parsed.ok()) return Prefixed("config", parsed.status());
  return Scheduler::Create(*parsed, backends, BuiltinPolicies());
}

}  // namespace deviceshare::capi
