#include "deviceshare/codec/hami_codec.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "codec/gpu_links.h"
#include "codec/hami_mig_profiles.h"
#include "codec/json_members.h"
#include "codec/register_entry.h"
#include "codec/wire_fields.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/codec/dialect_modes.h"
#include "deviceshare/json_text.h"
#include "deviceshare/model/mig_slot.h"
#include "deviceshare/status_macros.h"
#include "nlohmann/json.hpp"

namespace deviceshare {
namespace {

using OrderedJson = nlohmann::ordered_json;
using Json = nlohmann::json;

using wire::JsonFieldError;
using wire::JsonInt;
using wire::JsonIntValue;
using wire::JsonString;
using wire::MissingField;
using wire::RegisterColumn;
using wire::RequiredInt;

// Legacy entries: UUID,split,memMiB,devcore,type,numa,health[,index,mode];
// the 7-field form predates the index column. HAMi wrote the GPUs in
// minor-number order, so there the position is the best index there is.
constexpr RegisterColumn kLegacyColumns[] = {
    RegisterColumn::kUuid,    RegisterColumn::kSplit, RegisterColumn::kMemory,
    RegisterColumn::kDevcore, RegisterColumn::kType,  RegisterColumn::kNuma,
    RegisterColumn::kHealth,  RegisterColumn::kIndex, RegisterColumn::kMode};
constexpr size_t kLegacyFieldCounts[] = {7, 9};
constexpr wire::RegisterLayout kLegacyLayout = {
    "UUID,split,memMiB,devcore,type,numa,health[,index,mode]", kLegacyColumns,
    kLegacyFieldCounts};

std::string EntryWhere(size_t index) {
  return absl::StrCat(keys::kHamiNodeRegister, " entry ", index);
}

// JSON form (HAMi >= 2.8).

absl::StatusOr<Gpu> DecodeJsonEntry(const Json& entry, size_t index) {
  const std::string where = EntryWhere(index);
  if (!entry.is_object()) {
    return JsonFieldError(where, "device", entry, "is not a JSON object");
  }
  Gpu gpu;
  DS_ASSIGN_OR_RETURN(gpu.uuid, JsonString(entry, "id", where));
  if (gpu.uuid.empty()) return wire::FieldError(where, "id", "", "is empty");
  DS_ASSIGN_OR_RETURN(int64_t gpu_index,
                      JsonInt(entry, "index", wire::kInt32Max, where));
  DS_ASSIGN_OR_RETURN(int64_t count,
                      JsonInt(entry, "count", wire::kInt32Max, where));
  DS_ASSIGN_OR_RETURN(gpu.memory_mib,
                      JsonInt(entry, "devmem", wire::kInt64Max, where));
  DS_ASSIGN_OR_RETURN(int64_t devcore,
                      JsonInt(entry, "devcore", wire::kInt32Max, where));
  DS_ASSIGN_OR_RETURN(gpu.model, JsonString(entry, "type", where));
  DS_ASSIGN_OR_RETURN(int64_t numa,
                      JsonInt(entry, "numa", wire::kInt32Max, where,
                              /*unknown_numa_is_zero=*/true));
  DS_ASSIGN_OR_RETURN(std::string mode, JsonString(entry, "mode", where));
  if (!mode.empty()) {
    DS_ASSIGN_OR_RETURN(gpu.mode, wire::ParseModeField(mode, where));
  }
  // As in HAMi, a device that does not say it is healthy is not.
  gpu.healthy = false;
  if (auto it = entry.find("health"); it != entry.end()) {
    if (!it->is_boolean()) {
      return JsonFieldError(where, "health", *it, "is not a boolean");
    }
    gpu.healthy = it->get<bool>();
  }
  DS_RETURN_IF_ERROR(wire::ReadHamiMigProfiles(entry, where, gpu));
  // Other members (devicevendor, custominfo, ...) are skipped; `links`
  // is read once every device is (codec/gpu_links.h).
  gpu.index = static_cast<int32_t>(gpu_index);
  gpu.split_count = static_cast<int32_t>(count);
  gpu.core_capacity = static_cast<int32_t>(devcore);
  gpu.numa_node = static_cast<int32_t>(numa);
  wire::SetCapabilitiesFromMode(gpu);
  return gpu;
}

// MIG allocations (HAMi >= 2.10, `hami.io/vgpu-mig-allocations`).

// A required index member `name` below `count`, the number of `what`s.
absl::StatusOr<size_t> RequiredIndex(const Json& entry, const char* name,
                                     size_t count, absl::string_view where,
                                     absl::string_view what) {
  DS_ASSIGN_OR_RETURN(
      int64_t index, RequiredInt(entry, name, name, 0, wire::kInt32Max, where));
  if (static_cast<size_t>(index) >= count) {
    return JsonFieldError(
        where, name, entry.at(name),
        absl::StrFormat("names no %s (it has %d)", what, count));
  }
  return static_cast<size_t>(index);
}

// One checked entry: the grant it names and that grant as it becomes.
// `reserved`: the entry names a device past the container's record entries
// (HAMi writes such reservations before the record catches up and restores
// them, mig_allocation_test.go TestGetNodesUsageRestoresUnconsumedMig
// Reservations): a grant of its own on gpuUUID.
struct MigUpdate {
  size_t container = 0;
  size_t device = 0;
  bool reserved = false;
  DeviceGrant grant;
};

absl::Status ReadMigPlacement(const Json& entry, absl::string_view where,
                              MigSlot& slot) {
  auto it = entry.find("placement");
  if (it == entry.end()) return absl::OkStatus();
  if (!it->is_object()) {
    return JsonFieldError(where, "placement", *it, "is not a JSON object");
  }
  DS_ASSIGN_OR_RETURN(
      int64_t start,
      RequiredInt(*it, "start", "placement.start", 0, wire::kInt32Max, where));
  DS_ASSIGN_OR_RETURN(int64_t size, RequiredInt(*it, "size", "placement.size",
                                                1, wire::kInt32Max, where));
  slot.start = static_cast<int32_t>(start);
  slot.size = static_cast<int32_t>(size);
  return absl::OkStatus();
}

// deviceshare's configMap-mode extension: "group" and "position".
absl::Status ReadMigGroup(const Json& entry, absl::string_view where,
                          MigSlot& slot) {
  const bool has_position = entry.contains("position");
  if (!entry.contains("group")) {
    if (has_position) return MissingField(where, "group", " (position is set)");
    if (!entry.contains("placement")) return MissingField(where, "placement");
    return absl::OkStatus();
  }
  DS_ASSIGN_OR_RETURN(slot.group, JsonString(entry, "group", where));
  if (slot.group.empty())
    return wire::FieldError(where, "group", "", "is empty");
  DS_ASSIGN_OR_RETURN(
      int64_t position,
      RequiredInt(entry, "position", "position", 0, wire::kInt32Max, where));
  slot.position = static_cast<int32_t>(position);
  return absl::OkStatus();
}

// migUUID, gpuInstanceID and computeInstanceID: all three or none.
absl::Status ReadMigRuntime(const Json& entry, absl::string_view where,
                            DeviceGrant& grant) {
  static constexpr const char* kRuntime[] = {"migUUID", "gpuInstanceID",
                                             "computeInstanceID"};
  int present = 0;
  for (const char* name : kRuntime) present += entry.contains(name);
  if (present == 0) return absl::OkStatus();
  if (present != 3) {
    for (const char* name : kRuntime) {
      if (!entry.contains(name)) {
        return MissingField(where, name,
                            " (migUUID, gpuInstanceID and computeInstanceID "
                            "come together)");
      }
    }
  }
  DS_ASSIGN_OR_RETURN(grant.mig_uuid, JsonString(entry, "migUUID", where));
  if (grant.mig_uuid.empty()) {
    return wire::FieldError(where, "migUUID", "", "is empty");
  }
  DS_ASSIGN_OR_RETURN(int64_t gi,
                      RequiredInt(entry, "gpuInstanceID", "gpuInstanceID", 0,
                                  wire::kInt32Max, where));
  DS_ASSIGN_OR_RETURN(
      int64_t ci, RequiredInt(entry, "computeInstanceID", "computeInstanceID",
                              0, wire::kInt32Max, where));
  grant.gpu_instance_id = static_cast<int32_t>(gi);
  grant.compute_instance_id = static_cast<int32_t>(ci);
  return absl::OkStatus();
}

absl::StatusOr<MigUpdate> ReadMigEntry(
    const Json& entry, size_t index,
    const std::vector<std::vector<DeviceGrant>>& containers) {
  const std::string where =
      absl::StrCat(keys::kHamiMigAllocations, " entry ", index);
  if (!entry.is_object()) {
    return JsonFieldError(where, "allocation", entry, "is not a JSON object");
  }
  MigUpdate update;
  DS_ASSIGN_OR_RETURN(
      update.container,
      RequiredIndex(entry, "containerIndex", containers.size(), where,
                    absl::StrCat("container of ", keys::kHamiAllocated)));
  const std::vector<DeviceGrant>& devices = containers[update.container];
  DS_ASSIGN_OR_RETURN(int64_t device,
                      RequiredInt(entry, "deviceIndex", "deviceIndex", 0,
                                  wire::kInt32Max, where));
  update.device = static_cast<size_t>(device);
  update.reserved = update.device >= devices.size();
  DeviceGrant& grant = update.grant;
  if (!entry.contains("gpuUUID")) return MissingField(where, "gpuUUID");
  DS_ASSIGN_OR_RETURN(std::string uuid, JsonString(entry, "gpuUUID", where));
  if (update.reserved) {
    if (uuid.empty()) return wire::FieldError(where, "gpuUUID", "", "is empty");
    grant.uuid = uuid;
  } else {
    grant = devices[update.device];
  }
  if (uuid != grant.uuid) {
    return wire::FieldError(
        where, "gpuUUID", uuid,
        absl::StrFormat("is not the uuid of container %d device %d (\"%s\")",
                        update.container, update.device, grant.uuid));
  }
  if (!entry.contains("profile")) return MissingField(where, "profile");
  DS_ASSIGN_OR_RETURN(grant.mig.profile, JsonString(entry, "profile", where));
  if (!IsMigProfileName(grant.mig.profile)) {
    return wire::FieldError(where, "profile", grant.mig.profile,
                            "is not a MIG profile name (want <N>g.<M>gb)");
  }
  DS_RETURN_IF_ERROR(ReadMigPlacement(entry, where, grant.mig));
  DS_RETURN_IF_ERROR(ReadMigGroup(entry, where, grant.mig));
  DS_RETURN_IF_ERROR(ReadMigRuntime(entry, where, grant));
  grant.mode = dialect::kMigMode;
  return update;
}

}  // namespace

std::string EncodeHamiNodeRegisterJson(const std::vector<Gpu>& gpus) {
  // ordered_json keeps HAMi's DeviceInfo field order; every `if` is Go's
  // omitempty, so the output matches what HAMi's own json.Marshal writes.
  OrderedJson list = OrderedJson::array();
  for (const Gpu& gpu : gpus) {
    OrderedJson entry = OrderedJson::object();
    if (!gpu.uuid.empty()) entry["id"] = gpu.uuid;
    if (gpu.index != 0) entry["index"] = gpu.index;
    if (gpu.split_count != 0) entry["count"] = gpu.split_count;
    if (gpu.memory_mib != 0) entry["devmem"] = gpu.memory_mib;
    if (gpu.core_capacity != 0) entry["devcore"] = gpu.core_capacity;
    if (!gpu.model.empty()) entry["type"] = gpu.model;
    if (gpu.numa_node != 0) entry["numa"] = gpu.numa_node;
    entry["mode"] = std::string(SharingModeName(gpu.mode));
    if (!gpu.mig_profiles.empty()) {
      entry["migProfiles"] = wire::HamiMigProfilesJson(gpu.mig_profiles);
    }
    if (gpu.healthy) entry["health"] = true;
    // Ours, after HAMi's members; HAMi's decoder ignores it.
    if (!gpu.links.empty()) entry["links"] = wire::GpuLinksJson(gpu.links);
    list.push_back(std::move(entry));
  }
  return JsonText(list);
}

absl::StatusOr<std::vector<Gpu>> DecodeHamiNodeRegisterJson(
    absl::string_view text) {
  Json doc = Json::parse(text.begin(), text.end(), nullptr,
                         /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return absl::InvalidArgumentError(
        absl::StrCat(keys::kHamiNodeRegister, ": not valid JSON"));
  }
  if (!doc.is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(keys::kHamiNodeRegister,
                                                   ": JSON ", doc.type_name(),
                                                   ", want a list of devices"));
  }
  std::vector<Gpu> gpus;
  gpus.reserve(doc.size());
  for (size_t i = 0; i < doc.size(); ++i) {
    DS_ASSIGN_OR_RETURN(Gpu gpu, DecodeJsonEntry(doc[i], i));
    gpus.push_back(std::move(gpu));
  }
  // Links name peers by index, so they are read once every device is.
  std::set<int32_t> indices;
  for (const Gpu& gpu : gpus) indices.insert(gpu.index);
  for (size_t i = 0; i < gpus.size(); ++i) {
    wire::ReadGpuLinks(doc[i], EntryWhere(i), indices, gpus[i]);
  }
  return gpus;
}

std::string EncodeHamiNodeRegisterLegacy(const std::vector<Gpu>& gpus) {
  std::string out;
  for (const Gpu& gpu : gpus) {
    absl::StrAppend(&out, gpu.uuid, ",", gpu.split_count, ",", gpu.memory_mib,
                    ",", gpu.core_capacity, ",", gpu.model, ",", gpu.numa_node,
                    ",", wire::BoolText(gpu.healthy), ",", gpu.index, ",",
                    SharingModeName(gpu.mode), ":");
  }
  return out;
}

absl::StatusOr<std::vector<Gpu>> DecodeHamiNodeRegisterLegacy(
    absl::string_view text) {
  DS_ASSIGN_OR_RETURN(
      std::vector<absl::string_view> entries,
      wire::SplitRegisterEntries(text, ':', keys::kHamiNodeRegister));
  std::vector<Gpu> gpus;
  gpus.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    DS_ASSIGN_OR_RETURN(Gpu gpu, wire::DecodeRegisterEntry(
                                     entries[i], kLegacyLayout,
                                     static_cast<int32_t>(i), EntryWhere(i)));
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

absl::StatusOr<std::vector<Gpu>> DecodeHamiNodeRegister(
    absl::string_view text) {
  // A uuid never starts with a bracket, so the first character decides. An
  // object goes to the JSON reader too, which names the wrong shape.
  absl::string_view trimmed = absl::StripLeadingAsciiWhitespace(text);
  if (!trimmed.empty() && (trimmed[0] == '[' || trimmed[0] == '{')) {
    return DecodeHamiNodeRegisterJson(text);
  }
  return DecodeHamiNodeRegisterLegacy(text);
}

std::string EncodeHamiAllocation(const PodAllocation& allocation) {
  std::string out;
  for (const ContainerAllocation& container : allocation.containers) {
    wire::AppendGrants(container.devices, wire::MigIdForm::kPlainUuid, &out);
    out.push_back(';');
  }
  return out;
}

absl::StatusOr<std::vector<std::vector<DeviceGrant>>> DecodeHamiAllocation(
    absl::string_view text) {
  std::vector<absl::string_view> entries = absl::StrSplit(text, ';');
  // HAMi's writers end every entry with ';': what follows the last one is
  // an entry only if something stands there.
  if (absl::StripAsciiWhitespace(entries.back()).empty()) entries.pop_back();
  std::vector<std::vector<DeviceGrant>> containers;
  containers.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    DS_ASSIGN_OR_RETURN(
        std::vector<DeviceGrant> grants,
        wire::ParseGrants(entries[i],
                          absl::StrCat(keys::kHamiAllocated, " container ", i),
                          wire::GrantSyntax::kHami));
    containers.push_back(std::move(grants));
  }
  return containers;
}

std::string EncodeHamiMigAllocations(const PodAllocation& allocation) {
  // ordered_json keeps HAMi's MigAllocation field order.
  OrderedJson list = OrderedJson::array();
  for (size_t c = 0; c < allocation.containers.size(); ++c) {
    const std::vector<DeviceGrant>& devices = allocation.containers[c].devices;
    for (size_t d = 0; d < devices.size(); ++d) {
      const DeviceGrant& grant = devices[d];
      const MigSlot& slot = grant.mig;
      const bool grouped = !slot.group.empty() && slot.position >= 0;
      if (grant.mode != dialect::kMigMode || slot.profile.empty() ||
          !(slot.placed() || grouped)) {
        continue;
      }
      OrderedJson entry = OrderedJson::object();
      entry["containerIndex"] = c;
      entry["deviceIndex"] = d;
      entry["gpuUUID"] = grant.uuid;
      entry["profile"] = slot.profile;
      if (slot.placed()) {
        entry["placement"] = {{"start", slot.start}, {"size", slot.size}};
      }
      if (!grant.mig_uuid.empty() && grant.gpu_instance_id >= 0 &&
          grant.compute_instance_id >= 0) {
        entry["migUUID"] = grant.mig_uuid;
        entry["gpuInstanceID"] = grant.gpu_instance_id;
        entry["computeInstanceID"] = grant.compute_instance_id;
      }
      if (grouped) {
        entry["group"] = slot.group;
        entry["position"] = slot.position;
      }
      list.push_back(std::move(entry));
    }
  }
  if (list.empty()) return "";
  return JsonText(list);
}

absl::Status MergeHamiMigAllocations(
    absl::string_view text, std::vector<std::vector<DeviceGrant>>& containers) {
  if (absl::StripAsciiWhitespace(text).empty()) return absl::OkStatus();
  Json doc = Json::parse(text.begin(), text.end(), nullptr,
                         /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return absl::InvalidArgumentError(
        absl::StrCat(keys::kHamiMigAllocations, ": not valid JSON"));
  }
  if (!doc.is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat(keys::kHamiMigAllocations, ": JSON ", doc.type_name(),
                     ", want a list of MIG allocations"));
  }
  std::vector<MigUpdate> updates;
  updates.reserve(doc.size());
  std::map<std::pair<size_t, size_t>, size_t> seen;  // (container, device)
  for (size_t i = 0; i < doc.size(); ++i) {
    DS_ASSIGN_OR_RETURN(MigUpdate update, ReadMigEntry(doc[i], i, containers));
    auto [it, added] =
        seen.emplace(std::make_pair(update.container, update.device), i);
    if (!added) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s entry %d field deviceIndex: container %d device %d already has "
          "entry %d",
          keys::kHamiMigAllocations, i, update.container, update.device,
          it->second));
    }
    updates.push_back(std::move(update));
  }
  // Reservations past the record join their container in deviceIndex order.
  std::stable_sort(updates.begin(), updates.end(),
                   [](const MigUpdate& a, const MigUpdate& b) {
                     return std::tie(a.container, a.device) <
                            std::tie(b.container, b.device);
                   });
  for (MigUpdate& update : updates) {
    std::vector<DeviceGrant>& devices = containers[update.container];
    if (update.reserved) {
      devices.push_back(std::move(update.grant));
    } else {
      devices[update.device] = std::move(update.grant);
    }
  }
  return absl::OkStatus();
}

std::string EncodeHamiPairScores(const std::vector<Gpu>& gpus) {
  OrderedJson list = OrderedJson::array();
  for (const Gpu& gpu : gpus) {
    if (gpu.pair_scores.empty()) continue;
    OrderedJson scores = OrderedJson::object();
    for (const GpuPairScore& pair : gpu.pair_scores) {
      scores[pair.peer_uuid] = pair.score;
    }
    OrderedJson entry;
    entry["uuid"] = gpu.uuid;
    entry["score"] = std::move(scores);
    list.push_back(std::move(entry));
  }
  if (list.empty()) return "";
  return JsonText(list);
}

}  // namespace deviceshare
