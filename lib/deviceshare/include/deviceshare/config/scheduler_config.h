// File: config/scheduler_config.h
//
// SchedulerConfig: deviceshare's own scheduler settings, and Config, the
// whole configuration file (scheduler settings + the device config map
// section). A value type; parsed by config/config_parser.h.
#ifndef DEVICESHARE_CONFIG_SCHEDULER_CONFIG_H_
#define DEVICESHARE_CONFIG_SCHEDULER_CONFIG_H_

#include <string>
#include <vector>

#include "deviceshare/config/device_config.h"
#include "deviceshare/model/pod_request.h"
#include "deviceshare/model/sharing_mode.h"
#include "deviceshare/policy/policy_kind.h"

namespace deviceshare {

struct SchedulerConfig {
  PolicyKind node_policy = PolicyKind::kBinpack;  // nodePolicy
  PolicyKind gpu_policy = PolicyKind::kBinpack;   // gpuPolicy
  // Dialect of the annotations written for pods whose own dialect cannot be
  // told (dialect). Pods that use one dialect get theirs back.
  Dialect default_dialect = Dialect::kHami;
  // Sharing backends that may be used (modes), by name.
  std::vector<SharingMode> enabled_modes = {SharingMode::kHamiCore};

  bool operator==(const SchedulerConfig& other) const = default;
};

struct Config {
  SchedulerConfig scheduler;
  DeviceConfig device;
  // Things in the file that deviceshare read but does not act on (another
  // vendor's section of a shared HAMi config map, say). Surfaced so that
  // nothing is ignored silently.
  std::vector<std::string> notices;

  bool operator==(const Config& other) const = default;
};

}  // namespace deviceshare

#endif  // DEVICESHARE_CONFIG_SCHEDULER_CONFIG_H_
