// File: config/scheduler_config.h
//
// SchedulerConfig: deviceshare's own scheduler settings, and Config, the
// whole configuration file (scheduler settings + the device config map
// section). A value type; parsed by config/config_parser.h.
#ifndef DEVICESHARE_CONFIG_SCHEDULER_CONFIG_H_
#define DEVICESHARE_CONFIG_SCHEDULER_CONFIG_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "deviceshare/config/device_config.h"
#include "deviceshare/model/pod_request.h"
#include "deviceshare/model/sharing_mode.h"
#include "deviceshare/model/workload_shape.h"
#include "nlohmann/json.hpp"

namespace deviceshare {

struct SchedulerConfig {
  // nodePolicy / gpuPolicy: policies by registry name
  // (policy/policy_registry.h), checked when the scheduler is made.
  std::string node_policy = "binpack";
  std::string gpu_policy = "binpack";
  // Dialect of the annotations written for pods whose own dialect cannot be
  // told (dialect). Pods that use one dialect get theirs back.
  Dialect default_dialect = Dialect::kHami;
  // modes: the sharing backends that may be used, by name, in this order.
  // Empty (the default: the file sets no scheduler.modes) means every
  // backend the registry holds, in name order, so a GPU registered in any
  // known mode is served without more configuration; a list narrows to its
  // modes (the parser refuses an empty one).
  std::vector<SharingMode> enabled_modes;
  // typicalWorkload: the workload fragmentation is measured against
  // (policies fgd and fragaware): pod shapes and their shares. fgd needs it
  // (simulate's replay computes it from the trace, as FGD does); fragaware
  // learns it from the pods it sees unless it is set.
  std::vector<WorkloadShape> typical_workload;
  // nodesToScore: for fragaware, how many nodes that fit are scored per
  // decision (the fullest first); 0: every node that fits.
  int64_t nodes_to_score = 0;

  bool operator==(const SchedulerConfig& other) const = default;
};

struct Config {
  SchedulerConfig scheduler;
  DeviceConfig device;
  // The values of the keys backends own (config/config_extension.h), as
  // written: {"scheduler": {"migSearch": ...}, "nvidia":
  // {"knownMigGeometries": ...}}. Each backend reads and checks its own.
  nlohmann::json extensions = nlohmann::json::object();
  // Things in the file that deviceshare read but does not act on (another
  // vendor's section of a shared HAMi config map, say). Surfaced so that
  // nothing is ignored silently.
  std::vector<std::string> notices;

  bool operator==(const Config& other) const = default;
};

}  // namespace deviceshare

#endif  // DEVICESHARE_CONFIG_SCHEDULER_CONFIG_H_
