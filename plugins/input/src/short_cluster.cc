#include "deviceshare/input/short_cluster.h"

#include <map>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deviceshare/config/device_registration.h"
#include "deviceshare/input/gpu_uuid.h"
#include "deviceshare/input/json_object_reader.h"
#include "deviceshare/json_text.h"
#include "deviceshare/model/pcie_level.h"
#include "deviceshare/model/sharing_mode.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::input {
namespace {

using Json = nlohmann::json;

absl::Status Prefix(absl::string_view path, const absl::Status& status) {
  return absl::Status(status.code(),
                      absl::StrCat(path, ": ", status.message()));
}

// Appends the GPUs of one `gpus:` entry to `node`.
absl::Status AddGpuEntry(const Json& entry, const std::string& path,
                         const DeviceConfig& config, NodeInventory& node) {
  DS_ASSIGN_OR_RETURN(JsonObjectReader gpu,
                      JsonObjectReader::Create(entry, path));
  DS_RETURN_IF_ERROR(
      gpu.OnlyKeys({"model", "memory_mib", "count", "split", "numa", "mode",
                    "uuid", "healthy", "cores"}));
  DS_ASSIGN_OR_RETURN(std::optional<std::string> model, gpu.String("model"));
  if (!model || model->empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: is missing", gpu.PathOf("model")));
  }
  DS_ASSIGN_OR_RETURN(std::optional<int64_t> memory, gpu.Int("memory_mib", 1));
  if (!memory) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: is missing", gpu.PathOf("memory_mib")));
  }
  DS_ASSIGN_OR_RETURN(std::optional<int64_t> count, gpu.Int("count", 1, 1024));
  DS_ASSIGN_OR_RETURN(std::optional<int64_t> split,
                      gpu.Int("split", 1, INT32_MAX));
  DS_ASSIGN_OR_RETURN(std::optional<int64_t> numa,
                      gpu.Int("numa", 0, INT32_MAX));
  DS_ASSIGN_OR_RETURN(std::optional<int64_t> cores,
                      gpu.Int("cores", 1, INT32_MAX));
  DS_ASSIGN_OR_RETURN(std::optional<std::string> mode_name, gpu.String("mode"));
  DS_ASSIGN_OR_RETURN(std::optional<std::string> uuid, gpu.String("uuid"));
  DS_ASSIGN_OR_RETURN(std::optional<bool> healthy, gpu.Bool("healthy"));
  SharingMode mode = kDefaultSharingMode;
  if (mode_name) {
    DS_ASSIGN_OR_RETURN(mode, ParseSharingMode(*mode_name, gpu.PathOf("mode")));
  }
  if (uuid && count.value_or(1) != 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: a uuid names one GPU, but count is %d",
                        gpu.PathOf("uuid"), *count));
  }
  if (uuid && uuid->empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: is empty", gpu.PathOf("uuid")));
  }
  for (int64_t i = 0; i < count.value_or(1); ++i) {
    Gpu physical;
    physical.index = static_cast<int32_t>(node.gpus.size());
    physical.uuid = uuid ? *uuid : GeneratedGpuUuid(node.name, physical.index);
    physical.model = *model;
    physical.memory_mib = *memory;
    physical.numa_node = static_cast<int32_t>(numa.value_or(0));
    physical.healthy = healthy.value_or(true);
    physical.mode = mode;
    auto registered = RegisteredGpu(std::move(physical), config);
    if (!registered.ok()) return Prefix(path, registered.status());
    if (split) registered->split_count = static_cast<int32_t>(*split);
    if (cores) registered->core_capacity = static_cast<int32_t>(*cores);
    node.gpus.push_back(*std::move(registered));
  }
  return absl::OkStatus();
}

// What one `links` entry, or several, say of one pair of GPUs.
struct PairLink {
  std::optional<int32_t> nvlinks;
  std::optional<PcieLevel> pcie;
  std::optional<bool> numa;
};

// Most NVLink lanes between two GPUs (as the registration's links).
constexpr int64_t kMostNvlinkLanes = 1024;

// Reads one `links` entry into `pairs` (keyed by (lower, higher) index):
// every pair of its `gpus` takes the members it gives.
absl::Status AddLinkEntry(
    const Json& entry, const std::string& path, size_t gpu_count,
    std::map<std::pair<int32_t, int32_t>, PairLink>& pairs) {
  DS_ASSIGN_OR_RETURN(JsonObjectReader link,
                      JsonObjectReader::Create(entry, path));
  DS_RETURN_IF_ERROR(link.OnlyKeys({"gpus", "nvlinks", "pcie", "numa"}));
  DS_ASSIGN_OR_RETURN(const Json* gpus, link.Array("gpus"));
  if (gpus == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: is missing", link.PathOf("gpus")));
  }
  std::vector<int32_t> indices;
  for (size_t i = 0; i < gpus->size(); ++i) {
    const Json& value = (*gpus)[i];
    const std::string at = absl::StrCat(link.PathOf("gpus"), "[", i, "]");
    if (!value.is_number_integer()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: %s is not a GPU index", at, JsonText(value)));
    }
    const int64_t index = value.get<int64_t>();
    if (index < 0 || static_cast<uint64_t>(index) >= gpu_count) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %d is out of range (the node has %d GPUs: 0-%d)", at, index,
          gpu_count, static_cast<int64_t>(gpu_count) - 1));
    }
    for (int32_t seen : indices) {
      if (seen == index) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: %d is listed twice", at, index));
      }
    }
    indices.push_back(static_cast<int32_t>(index));
  }
  if (indices.size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: names %d GPU(s), a link needs two or more",
                        link.PathOf("gpus"), indices.size()));
  }
  DS_ASSIGN_OR_RETURN(std::optional<int64_t> nvlinks,
                      link.Int("nvlinks", 0, kMostNvlinkLanes));
  DS_ASSIGN_OR_RETURN(std::optional<std::string> pcie_name,
                      link.String("pcie"));
  DS_ASSIGN_OR_RETURN(std::optional<bool> numa, link.Bool("numa"));
  std::optional<PcieLevel> pcie;
  if (pcie_name) {
    pcie = ParsePcieLevel(*pcie_name);
    if (!pcie) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: \"%s\" is not a PCIe level (want %s)",
                          link.PathOf("pcie"), *pcie_name, PcieLevelNames()));
    }
  }
  for (size_t a = 0; a < indices.size(); ++a) {
    for (size_t b = a + 1; b < indices.size(); ++b) {
      PairLink& pair = pairs[std::minmax(indices[a], indices[b])];
      if (nvlinks) pair.nvlinks = static_cast<int32_t>(*nvlinks);
      if (pcie) pair.pcie = pcie;
      if (numa) pair.numa = numa;
    }
  }
  return absl::OkStatus();
}

// Gives every GPU of `node` a link to every other once `links` named any
// pair: what the entries say, else no NVLink, the NUMA relation of the
// GPUs' numa, and PCIe level numa or system by it.
void SetLinks(const std::map<std::pair<int32_t, int32_t>, PairLink>& pairs,
              NodeInventory& node) {
  if (pairs.empty()) return;
  for (Gpu& gpu : node.gpus) {
    gpu.links.clear();
    for (const Gpu& peer : node.gpus) {
      if (peer.index == gpu.index) continue;
      PairLink said;
      auto it = pairs.find(std::minmax(gpu.index, peer.index));
      if (it != pairs.end()) said = it->second;
      GpuLink link;
      link.peer_index = peer.index;
      link.nvlinks = said.nvlinks.value_or(0);
      link.same_numa = said.numa.value_or(gpu.numa_node == peer.numa_node);
      link.pcie = said.pcie.value_or(link.same_numa ? PcieLevel::kNuma
                                                    : PcieLevel::kSystem);
      gpu.links.push_back(link);
    }
  }
}

absl::StatusOr<ShortNode> ParseNode(const Json& entry, const std::string& path,
                                    const DeviceConfig& config) {
  DS_ASSIGN_OR_RETURN(JsonObjectReader reader,
                      JsonObjectReader::Create(entry, path));
  DS_RETURN_IF_ERROR(reader.OnlyKeys(
      {"name", "cpu_milli", "memory_mib", "gpus", "dra", "links"}));
  ShortNode parsed;
  DS_ASSIGN_OR_RETURN(std::optional<bool> dra, reader.Bool("dra"));
  parsed.dra = dra.value_or(false);
  NodeInventory& node = parsed.inventory;
  DS_ASSIGN_OR_RETURN(std::optional<std::string> name, reader.String("name"));
  if (!name || name->empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: is missing", reader.PathOf("name")));
  }
  node.name = *name;
  DS_ASSIGN_OR_RETURN(std::optional<int64_t> cpu, reader.Int("cpu_milli"));
  DS_ASSIGN_OR_RETURN(std::optional<int64_t> memory, reader.Int("memory_mib"));
  node.cpu_milli = cpu.value_or(0);
  node.memory_mib = memory.value_or(0);
  DS_ASSIGN_OR_RETURN(const Json* gpus, reader.Array("gpus"));
  if (gpus != nullptr) {
    for (size_t i = 0; i < gpus->size(); ++i) {
      DS_RETURN_IF_ERROR(AddGpuEntry(
          (*gpus)[i], absl::StrCat(reader.PathOf("gpus"), "[", i, "]"), config,
          node));
    }
  }
  DS_ASSIGN_OR_RETURN(const Json* links, reader.Array("links"));
  if (links != nullptr) {
    std::map<std::pair<int32_t, int32_t>, PairLink> pairs;
    for (size_t i = 0; i < links->size(); ++i) {
      DS_RETURN_IF_ERROR(AddLinkEntry(
          (*links)[i], absl::StrCat(reader.PathOf("links"), "[", i, "]"),
          node.gpus.size(), pairs));
    }
    SetLinks(pairs, node);
  }
  absl::Status valid = ValidateInventory(node);
  if (!valid.ok()) return Prefix(path, valid);
  return parsed;
}

}  // namespace

bool IsShortCluster(const Json& document) {
  return document.is_object() && document.contains("nodes") &&
         !document.contains("kind");
}

absl::StatusOr<std::vector<ShortNode>> ParseShortClusterNodes(
    const Json& document, const DeviceConfig& config) {
  DS_ASSIGN_OR_RETURN(JsonObjectReader top,
                      JsonObjectReader::Create(document, ""));
  DS_RETURN_IF_ERROR(top.OnlyKeys({"nodes"}));
  DS_ASSIGN_OR_RETURN(const Json* nodes, top.Array("nodes"));
  std::vector<ShortNode> parsed;
  if (nodes == nullptr) return parsed;
  parsed.reserve(nodes->size());
  for (size_t i = 0; i < nodes->size(); ++i) {
    DS_ASSIGN_OR_RETURN(
        ShortNode node,
        ParseNode((*nodes)[i], absl::StrCat("nodes[", i, "]"), config));
    parsed.push_back(std::move(node));
  }
  return parsed;
}

absl::StatusOr<std::vector<NodeInventory>> ParseShortCluster(
    const Json& document, const DeviceConfig& config) {
  DS_ASSIGN_OR_RETURN(std::vector<ShortNode> nodes,
                      ParseShortClusterNodes(document, config));
  std::vector<NodeInventory> inventories;
  inventories.reserve(nodes.size());
  for (ShortNode& node : nodes) {
    inventories.push_back(std::move(node.inventory));
  }
  return inventories;
}

}  // namespace deviceshare::input
