// File: k8s/node_parser.h
//
// Reads a Kubernetes Node object (JSON tree) into a NodeInventory from its
// registration annotation, in either dialect: `hami.io/node-nvidia-register`
// (JSON or legacy string) or `volcano.sh/node-vgpu-register`. CPU and memory
// come from status.allocatable when present.
#ifndef DEVICESHARE_K8S_NODE_PARSER_H_
#define DEVICESHARE_K8S_NODE_PARSER_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "deviceshare/config/device_config.h"
#include "deviceshare/model/node_inventory.h"
#include "nlohmann/json_fwd.hpp"

namespace deviceshare {

// A node without a registration annotation is a NotFound error naming the
// node (it has no shareable GPU); a malformed one is InvalidArgument.
// `volcano_memory_factor` (DeviceConfig::memory_factor) is the memory unit
// of a Volcano registration (codec/volcano_codec.h); GPU memory comes out
// in MiB either way.
absl::StatusOr<NodeInventory> ParseNodeInventory(const nlohmann::json& node,
                                                 int32_t volcano_memory_factor);

// The same with the whole device config: its memory_factor as above, and a
// Volcano registration's GPUs in a mode of `volcano_mode_models` whose type
// lists none of the mode's models are read in the default mode (Volcano's
// decodeNodeDevices fallback).
absl::StatusOr<NodeInventory> ParseNodeInventory(const nlohmann::json& node,
                                                 const DeviceConfig& config);

}  // namespace deviceshare

#endif  // DEVICESHARE_K8S_NODE_PARSER_H_
