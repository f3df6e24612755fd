#include "deviceshare/input/cluster_loader.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deviceshare/codec/yaml_json.h"
#include "deviceshare/input/input_file.h"
#include "deviceshare/input/kube_objects.h"
#include "deviceshare/input/short_cluster.h"
#include "deviceshare/input/yaml_document_lines.h"
#include "deviceshare/k8s/node_parser.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::input {
namespace {

using Json = nlohmann::json;

// Reads one Node object; skipped (with a note) when it registers no GPU.
absl::Status AddNodeObject(const Json& object, absl::string_view where,
                           size_t document, YamlDocumentErrors& errors,
                           LoadedCluster& cluster) {
  std::string kind = KindOf(object);
  if (!kind.empty() && kind != "Node") {
    return errors.At(document, absl::InvalidArgumentError(absl::StrFormat(
                                   "%skind: %s, want Node (or a List of Nodes)",
                                   where, kind)));
  }
  auto inventory = ParseNodeInventory(object);
  if (absl::IsNotFound(inventory.status())) {
    absl::Status located = errors.At(
        document,
        absl::NotFoundError(absl::StrCat(where, inventory.status().message())));
    cluster.notes.push_back(absl::StrCat(located.message(), "; skipped"));
    return absl::OkStatus();
  }
  if (!inventory.ok()) {
    return errors.At(
        document,
        absl::Status(inventory.status().code(),
                     absl::StrCat(where, inventory.status().message())));
  }
  cluster.nodes.push_back(*std::move(inventory));
  return absl::OkStatus();
}

// Reads documents of Node objects and Lists of them.
absl::Status AddNodeDocuments(const std::vector<Json>& documents,
                              YamlDocumentErrors& errors,
                              LoadedCluster& cluster) {
  for (size_t d = 0; d < documents.size(); ++d) {
    const Json& document = documents[d];
    const size_t number = d + 1;
    if (!document.is_object()) {
      return errors.At(number, absl::InvalidArgumentError(absl::StrFormat(
                                   "a %s, want a Node object, a List or "
                                   "`nodes:`",
                                   document.type_name())));
    }
    auto objects = DocumentObjects(document, "Node");
    if (!objects.ok()) return errors.At(number, objects.status());
    for (const DocumentObject& object : *objects) {
      DS_RETURN_IF_ERROR(
          AddNodeObject(*object.object, object.where, number, errors, cluster));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckClusterUnique(const std::vector<NodeInventory>& nodes) {
  absl::flat_hash_map<std::string, size_t> node_by_name;
  absl::flat_hash_map<std::string, size_t> node_by_uuid;
  for (size_t n = 0; n < nodes.size(); ++n) {
    const NodeInventory& node = nodes[n];
    if (!node_by_name.emplace(node.name, n).second) {
      return absl::InvalidArgumentError(
          absl::StrFormat("node %s is defined twice", node.name));
    }
    for (const Gpu& gpu : node.gpus) {
      auto [it, inserted] = node_by_uuid.emplace(gpu.uuid, n);
      if (!inserted && it->second != n) {
        return absl::InvalidArgumentError(
            absl::StrFormat("node %s: gpu uuid %s is also on node %s",
                            node.name, gpu.uuid, nodes[it->second].name));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<LoadedCluster> LoadClusterYaml(absl::string_view text,
                                              absl::string_view file,
                                              const DeviceConfig& config) {
  auto documents = ParseYamlDocuments(text);
  if (!documents.ok()) return InFile(file, documents.status());
  LoadedCluster cluster;
  YamlDocumentErrors errors(file, text);
  if (documents->empty()) {
    return InFile(file, absl::InvalidArgumentError(
                            "no document: want Node objects or `nodes:`"));
  }
  if (IsShortCluster(documents->front())) {
    if (documents->size() > 1) {
      return errors.At(2, absl::InvalidArgumentError(
                              "the short form (`nodes:`) must be the only "
                              "document"));
    }
    auto nodes = ParseShortCluster(documents->front(), config);
    if (!nodes.ok()) return errors.At(1, nodes.status());
    cluster.nodes = *std::move(nodes);
  } else {
    DS_RETURN_IF_ERROR(AddNodeDocuments(*documents, errors, cluster));
  }
  absl::Status unique = CheckClusterUnique(cluster.nodes);
  if (!unique.ok()) return InFile(file, unique);
  return cluster;
}

}  // namespace deviceshare::input
