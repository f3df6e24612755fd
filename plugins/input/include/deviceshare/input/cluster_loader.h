// File: input/cluster_loader.h
//
// Reads a cluster (simulate's `--cluster`): YAML (or JSON) in one of two
// forms.
//  - Kubernetes Node objects carrying a registration annotation in either
//    dialect (k8s/node_parser.h), as separate documents and/or inside
//    `kind: List` / `kind: NodeList` objects (`items:`), as `kubectl get
//    nodes -o yaml` prints them. A Node without a registration annotation
//    has no shareable GPU: it is skipped, with a note.
//    DRA objects may sit beside them: ResourceSlice (node-local, as node
//    agents publish them) and DeviceClass objects, also in Lists.
//  - The short form (input/short_cluster.h), one document; a node with
//    `dra: true` is listed in `dra_nodes`, its GPUs to be published as
//    the node agent's ResourceSlices (simulate builds them).
// Node names and GPU uuids must be unique across the cluster. Errors name
// the file, the document and the field.
//
// Thread safety: pure functions.
#ifndef DEVICESHARE_INPUT_CLUSTER_LOADER_H_
#define DEVICESHARE_INPUT_CLUSTER_LOADER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/config/device_config.h"
#include "deviceshare/dra/device_class.h"
#include "deviceshare/dra/resource_slice.h"
#include "deviceshare/model/node_inventory.h"

namespace deviceshare::input {

struct LoadedCluster {
  std::vector<NodeInventory> nodes;  // in file order
  std::vector<std::string> notes;
  // Short form: the nodes (of `nodes`) whose GPUs are DRA devices.
  std::vector<std::string> dra_nodes;
  // Object form: DRA objects, in file order.
  std::vector<dra::ResourceSlice> slices;
  std::vector<dra::DeviceClass> classes;
};

// `file` names the source in errors and notes.
absl::StatusOr<LoadedCluster> LoadClusterYaml(absl::string_view text,
                                              absl::string_view file,
                                              const DeviceConfig& config);

// InvalidArgument naming the node (and GPU) when two nodes share a name or
// two GPUs a uuid.
absl::Status CheckClusterUnique(const std::vector<NodeInventory>& nodes);

}  // namespace deviceshare::input

#endif  // DEVICESHARE_INPUT_CLUSTER_LOADER_H_
