#include "deviceshare/codec/hami_codec.h"

#include <cmath>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/status_macros.h"
#include "nlohmann/json.hpp"
#include "wire_fields.h"

namespace deviceshare {
namespace {

using OrderedJson = nlohmann::ordered_json;
using Json = nlohmann::json;

// Legacy entries: UUID,split,memMiB,devcore,type,numa,health[,index,mode].
constexpr size_t kLegacyShortFields = 7;
constexpr size_t kLegacyLongFields = 9;

// HAMi's node side writes an unknown NUMA node (sysfs "-1") as 0; an older
// or foreign writer may not have, so -1 is read the same way. Any other
// negative value is corruption.
constexpr absl::string_view kUnknownNuma = "-1";

std::string EntryWhere(size_t index) {
  return absl::StrCat(keys::kHamiNodeRegister, " entry ", index);
}

// Derived, as in the Volcano codec: a GPU registered in a mode can run it.
void SetCapabilitiesFromMode(Gpu& gpu) {
  gpu.mig_capable = gpu.mode == SharingMode::kMig;
  gpu.mps_capable = gpu.mode == SharingMode::kMps;
}

// JSON form (HAMi >= 2.8).

std::string Dump(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// JSON values quote themselves, so the value is shown as JSON text.
absl::Status JsonFieldError(absl::string_view where, absl::string_view field,
                            const Json& value, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s field %s: %s %s", where, field, Dump(value), why));
}

// Reads an optional integer member; absent means zero (Go's omitempty).
absl::StatusOr<int64_t> JsonInt(const Json& entry, const char* name,
                                int64_t max, absl::string_view where,
                                bool unknown_numa_is_zero = false) {
  auto it = entry.find(name);
  if (it == entry.end()) return 0;
  if (it->is_number_float() && std::abs(it->get<double>()) >= 0x1p63) {
    // nlohmann reads integers beyond uint64 as doubles.
    return JsonFieldError(where, name, *it,
                          absl::StrCat("is out of range (max ", max, ")"));
  }
  if (!it->is_number_integer()) {
    return JsonFieldError(where, name, *it, "is not an integer");
  }
  if (it->is_number_unsigned()) {
    uint64_t value = it->get<uint64_t>();
    if (value > static_cast<uint64_t>(max)) {
      return JsonFieldError(where, name, *it,
                            absl::StrCat("is out of range (max ", max, ")"));
    }
    return static_cast<int64_t>(value);
  }
  int64_t value = it->get<int64_t>();
  if (value == -1 && unknown_numa_is_zero) return 0;
  if (value < 0) return JsonFieldError(where, name, *it, "is negative");
  if (value > max) {
    return JsonFieldError(where, name, *it,
                          absl::StrCat("is out of range (max ", max, ")"));
  }
  return value;
}

// Reads an optional string member; absent means "".
absl::StatusOr<std::string> JsonString(const Json& entry, const char* name,
                                       absl::string_view where) {
  auto it = entry.find(name);
  if (it == entry.end()) return std::string();
  if (!it->is_string()) {
    return JsonFieldError(where, name, *it, "is not a string");
  }
  return it->get<std::string>();
}

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
    DS_ASSIGN_OR_RETURN(
        gpu.mode, ParseSharingMode(mode, absl::StrCat(where, " field mode")));
  }
  // As in HAMi, a device that does not say it is healthy is not.
  gpu.healthy = false;
  if (auto it = entry.find("health"); it != entry.end()) {
    if (!it->is_boolean()) {
      return JsonFieldError(where, "health", *it, "is not a boolean");
    }
    gpu.healthy = it->get<bool>();
  }
  // Other members (migProfiles, devicevendor, custominfo, ...) are skipped.
  // TODO(mig): read migProfiles into the GPU's MIG facts.
  gpu.index = static_cast<int32_t>(gpu_index);
  gpu.split_count = static_cast<int32_t>(count);
  gpu.core_capacity = static_cast<int32_t>(devcore);
  gpu.numa_node = static_cast<int32_t>(numa);
  SetCapabilitiesFromMode(gpu);
  return gpu;
}

// Legacy string form (HAMi <= 2.7).

absl::StatusOr<int32_t> LegacyNuma(absl::string_view value,
                                   absl::string_view where) {
  if (value == kUnknownNuma) return 0;
  DS_ASSIGN_OR_RETURN(int64_t numa,
                      wire::ParseCount(value, wire::kInt32Max, where, "numa"));
  return static_cast<int32_t>(numa);
}

absl::StatusOr<Gpu> DecodeLegacyEntry(absl::string_view entry, size_t index) {
  const std::string where = EntryWhere(index);
  std::vector<absl::string_view> fields = absl::StrSplit(entry, ',');
  if (fields.size() != kLegacyShortFields &&
      fields.size() != kLegacyLongFields) {
    return wire::FieldError(
        where, "UUID,split,memMiB,devcore,type,numa,health[,index,mode]", entry,
        absl::StrFormat("has %d fields, want %d or %d", fields.size(),
                        kLegacyShortFields, kLegacyLongFields));
  }
  Gpu gpu;
  gpu.uuid = std::string(fields[0]);
  if (gpu.uuid.empty()) return wire::FieldError(where, "uuid", "", "is empty");
  DS_ASSIGN_OR_RETURN(
      int64_t split,
      wire::ParseCount(fields[1], wire::kInt32Max, where, "split"));
  DS_ASSIGN_OR_RETURN(
      gpu.memory_mib,
      wire::ParseCount(fields[2], wire::kInt64Max, where, "memMiB"));
  DS_ASSIGN_OR_RETURN(
      int64_t devcore,
      wire::ParseCount(fields[3], wire::kInt32Max, where, "devcore"));
  gpu.model = std::string(fields[4]);
  DS_ASSIGN_OR_RETURN(gpu.numa_node, LegacyNuma(fields[5], where));
  DS_ASSIGN_OR_RETURN(gpu.healthy, wire::ParseBool(fields[6], where, "health"));
  gpu.split_count = static_cast<int32_t>(split);
  gpu.core_capacity = static_cast<int32_t>(devcore);
  // The 7-field form predates the index column; HAMi wrote the GPUs in
  // minor-number order, so the position is the best index there is.
  gpu.index = static_cast<int32_t>(index);
  if (fields.size() == kLegacyLongFields) {
    DS_ASSIGN_OR_RETURN(
        int64_t gpu_index,
        wire::ParseCount(fields[7], wire::kInt32Max, where, "index"));
    gpu.index = static_cast<int32_t>(gpu_index);
    DS_ASSIGN_OR_RETURN(
        gpu.mode,
        ParseSharingMode(fields[8], absl::StrCat(where, " field mode")));
  }
  SetCapabilitiesFromMode(gpu);
  return gpu;
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
    if (gpu.healthy) entry["health"] = true;
    list.push_back(std::move(entry));
  }
  return list.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
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
      wire::SplitTerminated(text, ':', keys::kHamiNodeRegister));
  std::vector<Gpu> gpus;
  gpus.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    DS_ASSIGN_OR_RETURN(Gpu gpu, DecodeLegacyEntry(entries[i], i));
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
    wire::AppendGrants(container.devices, &out);
    out.push_back(';');
  }
  return out;
}

absl::StatusOr<std::vector<std::vector<DeviceGrant>>> DecodeHamiAllocation(
    absl::string_view text) {
  DS_ASSIGN_OR_RETURN(std::vector<absl::string_view> entries,
                      wire::SplitTerminated(text, ';', keys::kHamiAllocated));
  std::vector<std::vector<DeviceGrant>> containers;
  containers.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    DS_ASSIGN_OR_RETURN(
        std::vector<DeviceGrant> grants,
        wire::ParseGrants(
            entries[i], absl::StrCat(keys::kHamiAllocated, " container ", i)));
    containers.push_back(std::move(grants));
  }
  return containers;
}

}  // namespace deviceshare
