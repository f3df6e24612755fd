#include "deviceshare/k8s/node_parser.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/codec/hami_codec.h"
#include "deviceshare/codec/volcano_codec.h"
#include "deviceshare/json_text.h"
#include "deviceshare/model/model_match.h"
#include "deviceshare/model/units.h"
#include "deviceshare/status_macros.h"
#include "nlohmann/json.hpp"

namespace deviceshare {
namespace {

using Json = nlohmann::json;

// The member `name` of `object` when it is present and of the wanted shape;
// nullptr when absent or null. Wrong shapes are errors, never exceptions.
absl::StatusOr<const Json*> Member(const Json& object, const char* name,
                                   Json::value_t want, absl::string_view path) {
  auto it = object.find(name);
  if (it == object.end() || it->is_null()) return nullptr;
  if (it->type() != want) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s.%s: %s is a %s, want a %s", path, name, JsonText(*it),
        it->type_name(), Json(want).type_name()));
  }
  return &*it;
}

absl::Status WithNode(absl::string_view node, const absl::Status& status) {
  return absl::Status(status.code(),
                      absl::StrCat("node ", node, ": ", status.message()));
}

// status.allocatable.<name>: a quantity string, or a bare number when the
// object came from YAML with an unquoted scalar.
absl::StatusOr<int64_t> Allocatable(
    const Json* allocatable, const char* name,
    absl::StatusOr<int64_t> (*parse)(absl::string_view, absl::string_view)) {
  if (allocatable == nullptr) return 0;
  auto it = allocatable->find(name);
  if (it == allocatable->end() || it->is_null()) return 0;
  const std::string field = absl::StrCat("status.allocatable.", name);
  if (it->is_string()) return parse(it->get_ref<const std::string&>(), field);
  if (it->is_number()) return parse(JsonText(*it), field);
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: %s is a %s, want a quantity", field, JsonText(*it),
                      it->type_name()));
}

// Volcano's decodeNodeDevices: a GPU registered in a mode it cannot serve
// for that model (a `mig` device no knownMigGeometries entry lists) is
// served in the default mode instead.
void ApplyVolcanoModeFallback(const DeviceConfig& config,
                              std::vector<Gpu>& gpus) {
  for (Gpu& gpu : gpus) {
    for (const RegisteredModeModels& rule : config.volcano_mode_models) {
      if (gpu.mode == rule.mode && !ModelNamesAny(gpu.model, rule.models)) {
        gpu.mode = kDefaultSharingMode;
      }
    }
  }
}

// A device registered with no slot or no memory can take no pod; HAMi
// scores it 0 and serves the node's other devices (gpu_policy_test.go
// TestComputeScore "Zero capacity device"), so it is left out here rather
// than the whole node refused.
std::vector<Gpu> WithoutEmptyDevices(std::vector<Gpu> gpus) {
  std::erase_if(gpus, [](const Gpu& gpu) {
    return gpu.split_count == 0 || gpu.memory_mib == 0;
  });
  return gpus;
}

// HAMi's annotation wins when a node carries both: it is the richer format
// (NUMA, core capacity, index).
absl::StatusOr<std::vector<Gpu>> DecodeRegistration(
    const Json& annotations, absl::string_view node,
    const DeviceConfig& config) {
  constexpr absl::string_view kPath = "metadata.annotations";
  DS_ASSIGN_OR_RETURN(const Json* hami,
                      Member(annotations, keys::kHamiNodeRegister,
                             Json::value_t::string, kPath));
  if (hami != nullptr) {
    DS_ASSIGN_OR_RETURN(
        std::vector<Gpu> gpus,
        DecodeHamiNodeRegister(hami->get_ref<const std::string&>()));
    return WithoutEmptyDevices(std::move(gpus));
  }
  DS_ASSIGN_OR_RETURN(const Json* volcano,
                      Member(annotations, keys::kVolcanoNodeRegister,
                             Json::value_t::string, kPath));
  if (volcano != nullptr) {
    DS_ASSIGN_OR_RETURN(
        std::vector<Gpu> gpus,
        DecodeVolcanoNodeRegister(volcano->get_ref<const std::string&>(),
                                  config.memory_factor));
    ApplyVolcanoModeFallback(config, gpus);
    return WithoutEmptyDevices(std::move(gpus));
  }
  return absl::NotFoundError(
      absl::StrFormat("node %s has neither %s nor %s: no shareable GPU", node,
                      keys::kHamiNodeRegister, keys::kVolcanoNodeRegister));
}

// hami.io/node-nvidia-score must read as HAMi's DecodePairScores reads it
// (device.go GetNodeDevices refuses the node otherwise): JSON null or a
// list of {"uuid": string, "score": {uuid: integer}}. Each GPU named gets
// its scores (Gpu::pair_scores, for the topology-aware policy); entries
// naming no GPU of the node are ignored, as HAMi ignores them.
absl::Status ReadPairScores(const Json* annotations, NodeInventory& inventory) {
  if (annotations == nullptr) return absl::OkStatus();
  DS_ASSIGN_OR_RETURN(const Json* text,
                      Member(*annotations, keys::kHamiPairScore,
                             Json::value_t::string, "metadata.annotations"));
  if (text == nullptr) return absl::OkStatus();
  const Json scores =
      Json::parse(text->get_ref<const std::string&>(), nullptr, false);
  auto refuse = [](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("metadata.annotations.", keys::kHamiPairScore, ": ", why));
  };
  if (scores.is_discarded()) return refuse("is not JSON");
  if (scores.is_null()) return absl::OkStatus();
  if (!scores.is_array()) return refuse("is not a JSON list");
  for (const Json& entry : scores) {
    if (!entry.is_object()) return refuse("an entry is not an object");
    auto uuid = entry.find("uuid");
    if (uuid != entry.end() && !uuid->is_string() && !uuid->is_null()) {
      return refuse("an entry's uuid is not a string");
    }
    auto score = entry.find("score");
    if (score == entry.end() || score->is_null()) continue;
    if (!score->is_object()) return refuse("an entry's score is not a map");
    std::vector<GpuPairScore> peers;
    for (const auto& [peer, value] : score->items()) {
      if (!value.is_number_integer()) {
        return refuse("a score is not an integer");
      }
      const int64_t wide = value.is_number_unsigned()
                               ? static_cast<int64_t>(std::min<uint64_t>(
                                     value.get<uint64_t>(), INT32_MAX))
                               : value.get<int64_t>();
      peers.push_back(
          GpuPairScore{peer, static_cast<int32_t>(std::clamp<int64_t>(
                                 wide, INT32_MIN, INT32_MAX))});
    }
    if (uuid == entry.end() || !uuid->is_string()) continue;
    for (Gpu& gpu : inventory.gpus) {
      if (gpu.uuid == uuid->get_ref<const std::string&>()) {
        gpu.pair_scores = std::move(peers);
        break;
      }
    }
  }
  return absl::OkStatus();
}

// hami.io/device-cordon: a comma list of GPU uuids, blanks and empty
// entries ignored (HAMi's cordonedDevices, device.go:698); a uuid the node
// does not have is ignored too.
absl::Status ReadCordon(const Json* annotations, NodeInventory& inventory) {
  if (annotations == nullptr) return absl::OkStatus();
  DS_ASSIGN_OR_RETURN(const Json* cordon,
                      Member(*annotations, keys::kHamiDeviceCordon,
                             Json::value_t::string, "metadata.annotations"));
  if (cordon == nullptr) return absl::OkStatus();
  for (absl::string_view part :
       absl::StrSplit(cordon->get_ref<const std::string&>(), ',')) {
    absl::string_view uuid = absl::StripAsciiWhitespace(part);
    for (Gpu& gpu : inventory.gpus) {
      if (!uuid.empty() && gpu.uuid == uuid) gpu.cordoned = true;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<NodeInventory> ParseNodeInventory(
    const Json& node, int32_t volcano_memory_factor) {
  DeviceConfig config;
  config.memory_factor = volcano_memory_factor;
  return ParseNodeInventory(node, config);
}

absl::StatusOr<NodeInventory> ParseNodeInventory(const Json& node,
                                                 const DeviceConfig& config) {
  if (!node.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("node: JSON %s, want a Node object", node.type_name()));
  }
  DS_ASSIGN_OR_RETURN(const Json* metadata,
                      Member(node, "metadata", Json::value_t::object, "node"));
  if (metadata == nullptr) {
    return absl::InvalidArgumentError("node: metadata is missing");
  }
  DS_ASSIGN_OR_RETURN(
      const Json* name,
      Member(*metadata, "name", Json::value_t::string, "metadata"));
  if (name == nullptr || name->get_ref<const std::string&>().empty()) {
    return absl::InvalidArgumentError("node: metadata.name is missing");
  }
  NodeInventory inventory;
  inventory.name = name->get<std::string>();

  DS_ASSIGN_OR_RETURN(
      const Json* annotations,
      Member(*metadata, "annotations", Json::value_t::object, "metadata"));
  static const Json kNoAnnotations = Json::object();
  auto gpus =
      DecodeRegistration(annotations != nullptr ? *annotations : kNoAnnotations,
                         inventory.name, config);
  if (!gpus.ok()) {
    if (absl::IsNotFound(gpus.status())) return gpus.status();
    return WithNode(inventory.name, gpus.status());
  }
  inventory.gpus = *std::move(gpus);
  absl::Status cordon = ReadCordon(annotations, inventory);
  if (!cordon.ok()) return WithNode(inventory.name, cordon);
  absl::Status pair_scores = ReadPairScores(annotations, inventory);
  if (!pair_scores.ok()) return WithNode(inventory.name, pair_scores);

  const Json* allocatable = nullptr;
  DS_ASSIGN_OR_RETURN(const Json* status,
                      Member(node, "status", Json::value_t::object, "node"));
  if (status != nullptr) {
    DS_ASSIGN_OR_RETURN(allocatable, Member(*status, "allocatable",
                                            Json::value_t::object, "status"));
  }
  auto cpu = Allocatable(allocatable, "cpu", &ParseQuantityMilli);
  if (!cpu.ok()) return WithNode(inventory.name, cpu.status());
  auto memory = Allocatable(allocatable, "memory", &ParseMemoryQuantityMiB);
  if (!memory.ok()) return WithNode(inventory.name, memory.status());
  inventory.cpu_milli = *cpu;
  inventory.memory_mib = *memory;
  for (const std::string& resource :
       {config.resource_count_name, std::string(keys::kVolcanoGpuNumber)}) {
    if (resource.empty()) continue;
    auto count =
        Allocatable(allocatable, resource.c_str(), &ParseQuantityMilli);
    if (!count.ok()) return WithNode(inventory.name, count.status());
    if (*count > 0) inventory.gpu_resources.push_back(resource);
  }
  std::sort(inventory.gpu_resources.begin(), inventory.gpu_resources.end());
  inventory.gpu_resources.erase(std::unique(inventory.gpu_resources.begin(),
                                            inventory.gpu_resources.end()),
                                inventory.gpu_resources.end());

  DS_RETURN_IF_ERROR(ValidateInventory(inventory));
  return inventory;
}

}  // namespace deviceshare
