#include "deviceshare/agent/discovery_json.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "deviceshare/input/json_object_reader.h"
#include "deviceshare/json_text.h"
#include "deviceshare/model/pcie_level.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::agent {
namespace {

using Json = nlohmann::json;
using input::JsonObjectReader;

absl::Status Missing(const JsonObjectReader& reader, absl::string_view key) {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: is missing", reader.PathOf(key)));
}

std::string ItemPath(const JsonObjectReader& reader, absl::string_view key,
                     size_t i) {
  return absl::StrCat(reader.PathOf(key), "[", i, "]");
}

absl::StatusOr<int32_t> Int32(const JsonObjectReader& reader,
                              absl::string_view key, int32_t fallback,
                              int64_t min = 0) {
  DS_ASSIGN_OR_RETURN(std::optional<int64_t> value,
                      reader.Int(key, min, INT32_MAX));
  return value ? static_cast<int32_t>(*value) : fallback;
}

absl::StatusOr<uint32_t> PciDeviceId(const JsonObjectReader& reader,
                                     const Json& entry) {
  auto it = entry.find("pci_device_id");
  if (it == entry.end() || it->is_null()) return 0u;
  if (it->is_string()) {
    std::string text = it->get<std::string>();
    uint32_t value = 0;
    absl::string_view digits = text;
    if (absl::StartsWithIgnoreCase(digits, "0x")) digits.remove_prefix(2);
    if (digits.empty() || digits.size() > 4 ||
        !absl::SimpleHexAtoi(digits, &value)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %s is not a 16-bit PCI device id like \"0x2330\"",
          reader.PathOf("pci_device_id"), JsonText(*it)));
    }
    return value;
  }
  DS_ASSIGN_OR_RETURN(std::optional<int64_t> value,
                      reader.Int("pci_device_id", 0, 0xFFFF));
  return static_cast<uint32_t>(value.value_or(0));
}

absl::Status ParseComputeCapability(const JsonObjectReader& reader,
                                    DiscoveredGpu& gpu) {
  DS_ASSIGN_OR_RETURN(std::optional<std::string> text,
                      reader.String("compute_capability"));
  if (!text || text->empty()) return absl::OkStatus();
  std::vector<absl::string_view> parts = absl::StrSplit(*text, '.');
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &gpu.cc_major) ||
      !absl::SimpleAtoi(parts[1], &gpu.cc_minor) || gpu.cc_major < 0 ||
      gpu.cc_minor < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: \"%s\" is not a compute capability like \"9.0\"",
                        reader.PathOf("compute_capability"), *text));
  }
  return absl::OkStatus();
}

absl::Status ParseHealth(const JsonObjectReader& reader, const Json& entry,
                         DiscoveredGpu& gpu) {
  auto it = entry.find("health");
  if (it != entry.end() && !it->is_null()) {
    if (it->is_boolean()) {
      gpu.healthy = it->get<bool>();
    } else if (it->is_string() &&
               absl::AsciiStrToLower(it->get<std::string>()) == "healthy") {
      gpu.healthy = true;
    } else if (it->is_string() &&
               absl::AsciiStrToLower(it->get<std::string>()) == "unhealthy") {
      gpu.healthy = false;
    } else {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %s is not \"healthy\", \"unhealthy\", true or false",
          reader.PathOf("health"), JsonText(*it)));
    }
  }
  DS_ASSIGN_OR_RETURN(std::optional<std::string> reason,
                      reader.String("health_reason"));
  gpu.health_reason = reason.value_or("");
  return absl::OkStatus();
}

absl::StatusOr<MigProfileInfo> ParseProfile(const Json& entry,
                                            const std::string& path) {
  DS_ASSIGN_OR_RETURN(JsonObjectReader reader,
                      JsonObjectReader::Create(entry, path));
  DS_RETURN_IF_ERROR(
      reader.OnlyKeys({"name", "id", "slices", "instances", "sm", "memory_mib",
                       "memory_slices", "starts"}));
  MigProfileInfo profile;
  DS_ASSIGN_OR_RETURN(std::optional<std::string> name, reader.String("name"));
  if (!name || name->empty()) return Missing(reader, "name");
  profile.name = *name;
  DS_ASSIGN_OR_RETURN(std::optional<int64_t> id,
                      reader.Int("id", 0, INT32_MAX));
  if (!id) return Missing(reader, "id");
  profile.profile_id = static_cast<int32_t>(*id);
  DS_ASSIGN_OR_RETURN(profile.slice_count, Int32(reader, "slices", 0));
  DS_ASSIGN_OR_RETURN(profile.instance_count, Int32(reader, "instances", 0));
  DS_ASSIGN_OR_RETURN(profile.sm_count, Int32(reader, "sm", 0));
  DS_ASSIGN_OR_RETURN(std::optional<int64_t> memory, reader.Int("memory_mib"));
  profile.memory_mib = memory.value_or(0);
  DS_ASSIGN_OR_RETURN(profile.memory_slices, Int32(reader, "memory_slices", 0));
  DS_ASSIGN_OR_RETURN(const Json* starts, reader.Array("starts"));
  if (starts != nullptr) {
    for (size_t i = 0; i < starts->size(); ++i) {
      const Json& start = (*starts)[i];
      if (!start.is_number_integer() || start.get<int64_t>() < 0 ||
          start.get<int64_t>() > 64) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: %s is not a memory slice index",
                            ItemPath(reader, "starts", i), JsonText(start)));
      }
      profile.starts.push_back(start.get<int32_t>());
    }
  }
  // Each start becomes a placement of memory_slices slices; one of size 0
  // would overlap nothing in HAMi's check and be handed out twice.
  if (!profile.starts.empty() && profile.memory_slices < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s (the profile has starts, each a placement of that many "
        "memory slices)",
        reader.PathOf("memory_slices"),
        entry.contains("memory_slices")
            ? absl::StrCat(profile.memory_slices, " is below 1")
            : std::string("is missing")));
  }
  return profile;
}

absl::StatusOr<MigInstanceInfo> ParseInstance(const Json& entry,
                                              const std::string& path) {
  DS_ASSIGN_OR_RETURN(JsonObjectReader reader,
                      JsonObjectReader::Create(entry, path));
  DS_RETURN_IF_ERROR(
      reader.OnlyKeys({"profile", "start", "size", "gpu_instance_id",
                       "compute_instance_id", "mig_uuid"}));
  MigInstanceInfo instance;
  DS_ASSIGN_OR_RETURN(std::optional<std::string> profile,
                      reader.String("profile"));
  if (!profile || profile->empty()) return Missing(reader, "profile");
  instance.slot.profile = *profile;
  DS_ASSIGN_OR_RETURN(std::optional<int64_t> start, reader.Int("start", 0, 31));
  if (!start) return Missing(reader, "start");
  instance.slot.start = static_cast<int32_t>(*start);
  DS_ASSIGN_OR_RETURN(std::optional<int64_t> size, reader.Int("size", 1, 32));
  if (!size) return Missing(reader, "size");
  instance.slot.size = static_cast<int32_t>(*size);
  DS_ASSIGN_OR_RETURN(instance.gpu_instance_id,
                      Int32(reader, "gpu_instance_id", -1, -1));
  DS_ASSIGN_OR_RETURN(instance.compute_instance_id,
                      Int32(reader, "compute_instance_id", -1, -1));
  DS_ASSIGN_OR_RETURN(std::optional<std::string> uuid,
                      reader.String("mig_uuid"));
  instance.mig_uuid = uuid.value_or("");
  return instance;
}

absl::StatusOr<GpuLink> ParseLink(const Json& entry, const std::string& path) {
  DS_ASSIGN_OR_RETURN(JsonObjectReader reader,
                      JsonObjectReader::Create(entry, path));
  DS_RETURN_IF_ERROR(
      reader.OnlyKeys({"peer_index", "nvlinks", "same_numa", "pcie"}));
  GpuLink link;
  DS_ASSIGN_OR_RETURN(std::optional<int64_t> peer,
                      reader.Int("peer_index", 0, INT32_MAX));
  if (!peer) return Missing(reader, "peer_index");
  link.peer_index = static_cast<int32_t>(*peer);
  DS_ASSIGN_OR_RETURN(link.nvlinks, Int32(reader, "nvlinks", 0));
  DS_ASSIGN_OR_RETURN(std::optional<bool> same_numa, reader.Bool("same_numa"));
  link.same_numa = same_numa.value_or(false);
  DS_ASSIGN_OR_RETURN(std::optional<std::string> pcie, reader.String("pcie"));
  if (pcie) {
    std::optional<PcieLevel> level = ParsePcieLevel(*pcie);
    if (!level) {
      return absl::InvalidArgumentError(
          absl::StrCat(reader.PathOf("pcie"), ": \"", *pcie,
                       "\" is not a PCIe level (want ", PcieLevelNames(), ")"));
    }
    link.pcie = *level;
  }
  return link;
}

template <typename T, typename Parse>
absl::Status ParseList(const JsonObjectReader& reader, absl::string_view key,
                       Parse parse, std::vector<T>& out) {
  DS_ASSIGN_OR_RETURN(const Json* list, reader.Array(key));
  if (list == nullptr) return absl::OkStatus();
  for (size_t i = 0; i < list->size(); ++i) {
    DS_ASSIGN_OR_RETURN(T item, parse((*list)[i], ItemPath(reader, key, i)));
    out.push_back(std::move(item));
  }
  return absl::OkStatus();
}

}  // namespace

nlohmann::json DiscoveryJson(const std::vector<DiscoveredGpu>& gpus) {
  Json list = Json::array();
  for (const DiscoveredGpu& gpu : gpus) {
    Json profiles = Json::array();
    for (const MigProfileInfo& p : gpu.mig_profiles) {
      profiles.push_back({{"name", p.name},
                          {"id", p.profile_id},
                          {"slices", p.slice_count},
                          {"instances", p.instance_count},
                          {"sm", p.sm_count},
                          {"memory_mib", p.memory_mib},
                          {"memory_slices", p.memory_slices},
                          {"starts", p.starts}});
    }
    Json instances = Json::array();
    for (const MigInstanceInfo& i : gpu.mig_instances) {
      instances.push_back({{"profile", i.slot.profile},
                           {"start", i.slot.start},
                           {"size", i.slot.size},
                           {"gpu_instance_id", i.gpu_instance_id},
                           {"compute_instance_id", i.compute_instance_id},
                           {"mig_uuid", i.mig_uuid}});
    }
    Json links = Json::array();
    for (const GpuLink& link : gpu.links) {
      links.push_back({{"peer_index", link.peer_index},
                       {"nvlinks", link.nvlinks},
                       {"same_numa", link.same_numa},
                       {"pcie", PcieLevelName(link.pcie)}});
    }
    Json entry = Json::object();
    entry["uuid"] = gpu.uuid;
    entry["index"] = gpu.index;
    entry["model"] = gpu.model;
    entry["memory_mib"] = gpu.memory_mib;
    entry["sm_count"] = gpu.sm_count;
    entry["numa"] = gpu.numa_node;
    entry["pci_device_id"] = absl::StrFormat("0x%04X", gpu.pci_device_id);
    entry["pci_bus_id"] = gpu.pci_bus_id;
    if (!gpu.pcie_root.empty()) entry["pcie_root"] = gpu.pcie_root;
    if (!gpu.driver_version.empty()) {
      entry["driver_version"] = gpu.driver_version;
    }
    entry["compute_capability"] =
        gpu.cc_major > 0 ? absl::StrCat(gpu.cc_major, ".", gpu.cc_minor) : "";
    entry["mig_capable"] = gpu.mig_capable;
    entry["mig_enabled"] = gpu.mig_enabled;
    entry["mig_profiles"] = std::move(profiles);
    entry["mig_instances"] = std::move(instances);
    entry["links"] = std::move(links);
    entry["health"] = gpu.healthy ? "healthy" : "unhealthy";
    entry["health_reason"] = gpu.health_reason;
    list.push_back(std::move(entry));
  }
  return Json{{"gpus", std::move(list)}};
}

absl::StatusOr<DiscoveredGpu> ParseDiscoveredGpu(const Json& entry,
                                                 const std::string& path,
                                                 int32_t position) {
  DS_ASSIGN_OR_RETURN(JsonObjectReader reader,
                      JsonObjectReader::Create(entry, path));
  DS_RETURN_IF_ERROR(reader.OnlyKeys(
      {"uuid", "index", "model", "memory_mib", "sm_count", "numa",
       "pci_device_id", "pci_bus_id", "compute_capability", "mig_capable",
       "mig_enabled", "mig_profiles", "mig_instances", "links", "health",
       "health_reason", "pcie_root", "driver_version"}));
  DiscoveredGpu gpu;
  DS_ASSIGN_OR_RETURN(std::optional<std::string> uuid, reader.String("uuid"));
  if (!uuid || uuid->empty()) return Missing(reader, "uuid");
  gpu.uuid = *uuid;
  DS_ASSIGN_OR_RETURN(gpu.index, Int32(reader, "index", position));
  DS_ASSIGN_OR_RETURN(std::optional<std::string> model, reader.String("model"));
  if (!model || model->empty()) return Missing(reader, "model");
  gpu.model = *model;
  DS_RETURN_IF_ERROR(ParseHealth(reader, entry, gpu));
  // 0 is what discovery prints for a GPU whose memory NVML could not
  // read; such a GPU is unhealthy, and only then is 0 accepted.
  DS_ASSIGN_OR_RETURN(std::optional<int64_t> memory,
                      reader.Int("memory_mib", gpu.healthy ? 1 : 0));
  if (!memory) return Missing(reader, "memory_mib");
  gpu.memory_mib = *memory;
  DS_ASSIGN_OR_RETURN(gpu.sm_count, Int32(reader, "sm_count", 0));
  DS_ASSIGN_OR_RETURN(gpu.numa_node, Int32(reader, "numa", 0));
  DS_ASSIGN_OR_RETURN(gpu.pci_device_id, PciDeviceId(reader, entry));
  DS_ASSIGN_OR_RETURN(std::optional<std::string> bus,
                      reader.String("pci_bus_id"));
  gpu.pci_bus_id = bus.value_or("");
  DS_ASSIGN_OR_RETURN(std::optional<std::string> root,
                      reader.String("pcie_root"));
  gpu.pcie_root = root.value_or("");
  DS_ASSIGN_OR_RETURN(std::optional<std::string> driver,
                      reader.String("driver_version"));
  gpu.driver_version = driver.value_or("");
  DS_RETURN_IF_ERROR(ParseComputeCapability(reader, gpu));
  DS_ASSIGN_OR_RETURN(std::optional<bool> mig_capable,
                      reader.Bool("mig_capable"));
  DS_ASSIGN_OR_RETURN(std::optional<bool> mig_enabled,
                      reader.Bool("mig_enabled"));
  gpu.mig_enabled = mig_enabled.value_or(false);
  // MIG on implies MIG capable; saying so twice is not required.
  gpu.mig_capable = mig_capable.value_or(gpu.mig_enabled);
  if (gpu.mig_enabled && !gpu.mig_capable) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: MIG is enabled on a GPU marked not MIG capable",
                        reader.PathOf("mig_enabled")));
  }
  DS_RETURN_IF_ERROR(
      ParseList(reader, "mig_profiles", ParseProfile, gpu.mig_profiles));
  DS_RETURN_IF_ERROR(
      ParseList(reader, "mig_instances", ParseInstance, gpu.mig_instances));
  DS_RETURN_IF_ERROR(ParseList(reader, "links", ParseLink, gpu.links));
  return gpu;
}

absl::StatusOr<std::vector<DiscoveredGpu>> ParseDiscoveryJson(
    const Json& document) {
  DS_ASSIGN_OR_RETURN(JsonObjectReader top,
                      JsonObjectReader::Create(document, ""));
  DS_RETURN_IF_ERROR(top.OnlyKeys({"gpus"}));
  DS_ASSIGN_OR_RETURN(const Json* list, top.Array("gpus"));
  if (list == nullptr) return Missing(top, "gpus");
  std::vector<DiscoveredGpu> gpus;
  std::set<int32_t> indexes;
  std::set<std::string> uuids;
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string path = absl::StrCat("gpus[", i, "]");
    DS_ASSIGN_OR_RETURN(
        DiscoveredGpu gpu,
        ParseDiscoveredGpu((*list)[i], path, static_cast<int32_t>(i)));
    if (!indexes.insert(gpu.index).second) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s.index: %d is used by another GPU", path, gpu.index));
    }
    if (!uuids.insert(gpu.uuid).second) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s.uuid: \"%s\" is used by another GPU", path, gpu.uuid));
    }
    gpus.push_back(std::move(gpu));
  }
  std::stable_sort(gpus.begin(), gpus.end(),
                   [](const DiscoveredGpu& a, const DiscoveredGpu& b) {
                     return a.index < b.index;
                   });
  return gpus;
}

}  // namespace deviceshare::agent
