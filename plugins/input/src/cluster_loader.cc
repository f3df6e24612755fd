#include "deviceshare/input/cluster_loader.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deviceshare/codec/yaml_json.h"
#include "deviceshare/dra/slice_decode.h"
#include "deviceshare/input/input_file.h"
#include "deviceshare/input/kube_objects.h"
#include "deviceshare/input/short_cluster.h"
#include "deviceshare/input/yaml_document_lines.h"
#include "deviceshare/k8s/node_parser.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::input {
namespace {

using Json = nlohmann::json;

// Reads a ResourceSlice or a DeviceClass; an error names the field.
absl::Status AddDraObject(const Json& object, const std::string& kind,
                          absl::string_view where, size_t document,
                          YamlDocumentErrors& errors, LoadedCluster& cluster) {
  auto located = [&](const absl::Status& status) {
    return errors.At(
        document, absl::Status(status.code(), absl::StrCat(where, kind, ": ",
                                                           status.message())));
  };
  if (kind == "DeviceClass") {
    absl::StatusOr<dra::DeviceClass> decoded = dra::DecodeDeviceClass(object);
    if (!decoded.ok()) return located(decoded.status());
    cluster.classes.push_back(*std::move(decoded));
    return absl::OkStatus();
  }
  absl::StatusOr<dra::DecodedSlice> decoded = dra::DecodeResourceSlice(object);
  if (!decoded.ok()) return located(decoded.status());
  if (decoded->slice.node_name.empty()) {
    return located(absl::InvalidArgumentError(
        "spec.nodeName is missing: only node-local slices are simulated"));
  }
  cluster.slices.push_back(std::move(decoded->slice));
  return absl::OkStatus();
}

// Reads one Node object; skipped (with a note) when it registers no GPU.
absl::Status AddNodeObject(const Json& object, absl::string_view where,
                           size_t document, const DeviceConfig& config,
                           YamlDocumentErrors& errors, LoadedCluster& cluster) {
  std::string kind = KindOf(object);
  if (kind == "ResourceSlice" || kind == "DeviceClass") {
    return AddDraObject(object, kind, where, document, errors, cluster);
  }
  if (!kind.empty() && kind != "Node") {
    return errors.At(document,
                     absl::InvalidArgumentError(absl::StrFormat(
                         "%skind: %s, want Node, ResourceSlice or DeviceClass "
                         "(or a List of them)",
                         where, kind)));
  }
  auto inventory = ParseNodeInventory(object, config);
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
                              const DeviceConfig& config,
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
    std::string list_kind = KindOf(document);
    std::string item_kind = "Node";
    for (const char* kind : {"ResourceSlice", "DeviceClass"}) {
      if (list_kind == absl::StrCat(kind, "List")) item_kind = kind;
    }
    auto objects = DocumentObjects(document, item_kind);
    if (!objects.ok()) return errors.At(number, objects.status());
    for (const DocumentObject& object : *objects) {
      DS_RETURN_IF_ERROR(AddNodeObject(*object.object, object.where, number,
                                       config, errors, cluster));
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
    auto nodes = ParseShortClusterNodes(documents->front(), config);
    if (!nodes.ok()) return errors.At(1, nodes.status());
    for (ShortNode& node : *nodes) {
      if (node.dra) cluster.dra_nodes.push_back(node.inventory.name);
      cluster.nodes.push_back(std::move(node.inventory));
    }
  } else {
    DS_RETURN_IF_ERROR(AddNodeDocuments(*documents, config, errors, cluster));
  }
  absl::Status unique = CheckClusterUnique(cluster.nodes);
  if (!unique.ok()) return InFile(file, unique);
  return cluster;
}

}  // namespace deviceshare::input
