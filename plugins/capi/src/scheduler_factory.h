// File: scheduler_factory.h
//
// deviceshare_scheduler_create's Scheduler: the config (YAML or JSON, the
// whole file, its `nvidia:` section alone, or a ConfigMap holding them --
// config/config_parser.h) read with every built-in backend's keys, every
// built-in backend (lib/builtin) and policy registered.
#ifndef DEVICESHARE_CAPI_SCHEDULER_FACTORY_H_
#define DEVICESHARE_CAPI_SCHEDULER_FACTORY_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/scheduler/scheduler.h"

namespace deviceshare::capi {

// Empty `config`: the defaults. Errors name the config key.
absl::StatusOr<std::unique_ptr<Scheduler>> NewScheduler(
    absl::string_view config);

}  // namespace deviceshare::capi

#endif  // DEVICESHARE_CAPI_SCHEDULER_FACTORY_H_
