// File: k8s/node_parser.h
//
// Reads a Kubernetes Node object (JSON tree) into a NodeInventory from its
// registration annotation, in either dialect: `hami.io/node-nvidia-register`
// (JSON or legacy string) or `volcano.sh/node-vgpu-register`. CPU and memory
// come from status.allocatable when present.
#ifndef DEVICESHARE_K8S_NODE_PARSER_H_
#define DEVICESHARE_K8S_NODE_PARSER_H_

#include "absl/status/statusor.h"
#include "deviceshare/model/node_inventory.h"
#include "nlohmann/json_fwd.hpp"

namespace deviceshare {

// A node without a registration annotation is a NotFound error naming the
// node (it has no shareable GPU); a malformed one is InvalidArgument.
absl::StatusOr<NodeInventory> ParseNodeInventory(const nlohmann::json& node);

}  // namespace deviceshare

#endif  // DEVICESHARE_K8S_NODE_PARSER_H_
