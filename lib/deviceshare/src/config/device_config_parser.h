// File: src/device_config_parser.h (internal)
//
// Reads the `nvidia:` section of a device config map (Volcano's
// `volcano-vgpu-device-config` or HAMi's `hami-scheduler-device`) into a
// DeviceConfig. Used by config_parser.cc for every accepted file shape.
#ifndef DEVICESHARE_SRC_DEVICE_CONFIG_PARSER_H_
#define DEVICESHARE_SRC_DEVICE_CONFIG_PARSER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "deviceshare/config/device_config.h"
#include "nlohmann/json.hpp"

namespace deviceshare::internal {

// Every key of the section, for telling a misplaced key at the top level
// from another vendor's section.
bool IsNvidiaSectionKey(absl::string_view key);

// Overwrites the fields of `config` named in `section` (a mapping; null
// keys keep their defaults). `path` prefixes every error (`nvidia`). Keys
// that deviceshare reads but that have no effect on scheduling add a line to
// `notices`.
absl::Status ParseNvidiaSection(const nlohmann::json& section,
                                absl::string_view path, DeviceConfig& config,
                                std::vector<std::string>& notices);

}  // namespace deviceshare::internal

#endif  // DEVICESHARE_SRC_DEVICE_CONFIG_PARSER_H_
