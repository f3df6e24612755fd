// File: src/device_config_parser.h (internal)
//
// Reads the `nvidia:` section of a device config map (Volcano's
// `volcano-vgpu-device-config` or HAMi's `hami-scheduler-device`) into a
// DeviceConfig. Used by config_parser.cc for every accepted file shape.
#ifndef DEVICESHARE_SRC_DEVICE_CONFIG_PARSER_H_
#define DEVICESHARE_SRC_DEVICE_CONFIG_PARSER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "deviceshare/config/scheduler_config.h"
#include "nlohmann/json.hpp"

namespace deviceshare::internal {

// Every key of the section, for telling a misplaced key at the top level
// from another vendor's section.
bool IsNvidiaSectionKey(absl::string_view key);

// Overwrites the fields of `config.device` named in `section` (a mapping;
// null keys keep their defaults). `path` prefixes every error (`nvidia`).
// A key a backend owns (`owned`) is kept as written in
// config.extensions["nvidia"]. Keys that deviceshare reads but that have no
// effect on scheduling add a line to config.notices.
absl::Status ParseNvidiaSection(
    const nlohmann::json& section, absl::string_view path,
    const std::function<bool(absl::string_view)>& owned, Config& config);

}  // namespace deviceshare::internal

#endif  // DEVICESHARE_SRC_DEVICE_CONFIG_PARSER_H_
