// File: node_input.h
//
// deviceshare_upsert_nodes: nodes in any form a host has them -- Node
// objects with a registration annotation (either dialect), Lists of them,
// or the short inventory form -- read by plugins/input's LoadClusterYaml
// (so errors name the document, its line and the field) and upserted.
// ResourceSlice and DeviceClass objects beside Node objects are upserted
// too (as simulate's --cluster reads them). A short-form node with
// `dra: true` is upserted without GPUs: they are served as DRA devices,
// whose ResourceSlices the host feeds with deviceshare_upsert_object.
#ifndef DEVICESHARE_CAPI_NODE_INPUT_H_
#define DEVICESHARE_CAPI_NODE_INPUT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/scheduler/scheduler.h"

namespace deviceshare::capi {

// Upserts the nodes of `text` and answers {"nodes": [names], "displaced":
// ["namespace/pod", ...], "notes": [...]} (notes: Node objects skipped for
// want of a registration, `dra: true` nodes). Nothing is upserted when the
// text does not parse; NotFound when it holds nothing but Nodes without a
// registration. An inventory the scheduler rejects stops the upsert there,
// naming the node; the nodes before it stay upserted.
absl::StatusOr<std::string> UpsertNodes(Scheduler& scheduler,
                                        absl::string_view text);

}  // namespace deviceshare::capi

#endif  // DEVICESHARE_CAPI_NODE_INPUT_H_
