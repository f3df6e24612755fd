#include "deviceshare/simulate/cluster_loader.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deviceshare/k8s/node_parser.h"
#include "deviceshare/k8s/yaml_json.h"
#include "deviceshare/simulate/input_file.h"
#include "deviceshare/simulate/short_cluster.h"
#include "deviceshare/simulate/yaml_document_lines.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::simulate {
namespace {

using Json = nlohmann::json;

std::string KindOf(const Json& object) {
  auto it = object.find("kind");
  if (it == object.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

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
    for (size_t d = 0; d < documents->size(); ++d) {
      const Json& document = (*documents)[d];
      const size_t number = d + 1;
      if (!document.is_object()) {
        return errors.At(number,
                         absl::InvalidArgumentError(absl::StrFormat(
                             "a %s, want a Node object, a List or `nodes:`",
                             document.type_name())));
      }
      std::string kind = KindOf(document);
      if (kind == "List" || kind == "NodeList") {
        auto items = document.find("items");
        if (items == document.end() || !items->is_array()) {
          return errors.At(number, absl::InvalidArgumentError(absl::StrCat(
                                       "kind ", kind,
                                       ": items is missing or not a "
                                       "list")));
        }
        for (size_t i = 0; i < items->size(); ++i) {
          DS_RETURN_IF_ERROR(AddNodeObject((*items)[i],
                                           absl::StrCat("items[", i, "]: "),
                                           number, errors, cluster));
        }
        continue;
      }
      DS_RETURN_IF_ERROR(AddNodeObject(document, "", number, errors, cluster));
    }
  }
  absl::Status unique = CheckClusterUnique(cluster.nodes);
  if (!unique.ok()) return InFile(file, unique);
  return cluster;
}

}  // namespace deviceshare::simulate
