#include "node_input.h"

#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "c_status.h"
#include "deviceshare/input/cluster_loader.h"
#include "deviceshare/json_text.h"
#include "deviceshare/status_macros.h"
#include "nlohmann/json.hpp"

namespace deviceshare::capi {
namespace {

using OrderedJson = nlohmann::ordered_json;

// A short-form node's GPUs with `dra: true` are DRA devices: the host
// publishes them as ResourceSlices, as the node agent's `serve --dra` does.
void WithdrawDraGpus(input::LoadedCluster& cluster) {
  const std::set<std::string> dra(cluster.dra_nodes.begin(),
                                  cluster.dra_nodes.end());
  for (NodeInventory& node : cluster.nodes) {
    if (!dra.contains(node.name)) continue;
    node.gpus.clear();
    cluster.notes.push_back(
        absl::StrFormat("node %s (dra: true): upserted without GPUs; feed its "
                        "ResourceSlices with deviceshare_upsert_object",
                        node.name));
  }
}

// Nothing but Nodes that register no GPU: the core's answer for one such
// Node (k8s/node_parser.h), NotFound.
absl::Status NothingToUpsert(const input::LoadedCluster& cluster) {
  std::vector<std::string> why;
  for (const std::string& note : cluster.notes) {
    why.emplace_back(absl::StripSuffix(note, "; skipped"));
  }
  return absl::NotFoundError(absl::StrJoin(why, "; "));
}

absl::Status Upsert(Scheduler& scheduler, input::LoadedCluster& cluster,
                    OrderedJson& nodes, OrderedJson& displaced) {
  for (NodeInventory& node : cluster.nodes) {
    const std::string name = node.name;
    absl::StatusOr<std::vector<std::string>> moved =
        scheduler.UpsertNode(std::move(node));
    if (!moved.ok())
      return Prefixed(absl::StrCat("node ", name), moved.status());
    nodes.push_back(name);
    for (std::string& pod : *moved) displaced.push_back(std::move(pod));
  }
  for (dra::DeviceClass& device_class : cluster.classes) {
    scheduler.UpsertDeviceClass(std::move(device_class));
  }
  for (dra::ResourceSlice& slice : cluster.slices) {
    const std::string name = slice.name;
    DS_RETURN_IF_ERROR(
        Prefixed(absl::StrCat("ResourceSlice ", name),
                 scheduler.UpsertResourceSlice(std::move(slice))));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> UpsertNodes(Scheduler& scheduler,
                                        absl::string_view text) {
  DS_ASSIGN_OR_RETURN(
      input::LoadedCluster cluster,
      input::LoadClusterYaml(text, "nodes", scheduler.config().device));
  if (cluster.nodes.empty() && cluster.classes.empty() &&
      cluster.slices.empty() && !cluster.notes.empty()) {
    return NothingToUpsert(cluster);
  }
  WithdrawDraGpus(cluster);
  OrderedJson nodes = OrderedJson::array();
  OrderedJson displaced = OrderedJson::array();
  DS_RETURN_IF_ERROR(Upsert(scheduler, cluster, nodes, displaced));
  OrderedJson answer;
  answer["nodes"] = std::move(nodes);
  answer["displaced"] = std::move(displaced);
  answer["notes"] = cluster.notes;
  return JsonText(answer);
}

}  // namespace deviceshare::capi
