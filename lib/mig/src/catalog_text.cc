#include "catalog_text.h"

#include <cstdint>
#include <limits>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "deviceshare/json_text.h"
#include "deviceshare/status_macros.h"
#include "json_fields.h"

namespace deviceshare::mig::internal {
namespace {

using nlohmann::json;

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kMibMax = int64_t{1} << 40;  // 1 EiB: no GPU comes close
constexpr uint32_t kNvidiaVendor = 0x10DE;

// 0x2330, or mig-parted's 0x233010DE (device << 16 | vendor).
absl::StatusOr<uint32_t> DeviceIdFrom(uint64_t raw, const json& value,
                                      absl::string_view path) {
  if (raw > 0xFFFF && raw <= 0xFFFFFFFFu && (raw & 0xFFFF) == kNvidiaVendor) {
    raw >>= 16;
  }
  if (raw == 0 || raw > 0xFFFF) {
    return PathError(path, absl::StrCat(DescribeValue(value),
                                        " is not a PCI device id (want "
                                        "\"0x2330\" or \"0x233010DE\")"));
  }
  return static_cast<uint32_t>(raw);
}

absl::StatusOr<uint32_t> ReadDeviceId(const json& value,
                                      absl::string_view path) {
  if (value.is_number_integer()) {
    DS_ASSIGN_OR_RETURN(int64_t n, ReadInteger(value, path, 1, 0xFFFFFFFFll));
    return DeviceIdFrom(static_cast<uint64_t>(n), value, path);
  }
  if (!value.is_string()) {
    return PathError(path,
                     absl::StrCat(DescribeValue(value),
                                  " is not a PCI device id (want \"0x2330\")"));
  }
  absl::string_view text =
      absl::StripAsciiWhitespace(value.get_ref<const std::string&>());
  uint64_t raw = 0;
  if (!absl::ConsumePrefix(&text, "0x") && !absl::ConsumePrefix(&text, "0X")) {
    return PathError(path,
                     absl::StrCat(DescribeValue(value),
                                  " is not hexadecimal (want \"0x2330\")"));
  }
  if (text.empty() || text.size() > 8 || !absl::SimpleHexAtoi(text, &raw)) {
    return PathError(path,
                     absl::StrCat(DescribeValue(value),
                                  " is not hexadecimal (want \"0x2330\")"));
  }
  return DeviceIdFrom(raw, value, path);
}

absl::StatusOr<int32_t> ReadInt32(const json& object, absl::string_view path,
                                  absl::string_view key, int64_t min,
                                  int64_t max) {
  DS_ASSIGN_OR_RETURN(const json* value, RequireKey(object, path, key));
  DS_ASSIGN_OR_RETURN(int64_t n,
                      ReadInteger(*value, KeyPath(path, key), min, max));
  return static_cast<int32_t>(n);
}

absl::StatusOr<MigProfile> ParseProfile(const json& value,
                                        absl::string_view path,
                                        int32_t model_memory_slices,
                                        int32_t model_compute_slices) {
  DS_RETURN_IF_ERROR(RequireMapping(value, path));
  DS_RETURN_IF_ERROR(
      CheckKnownKeys(value, path,
                     {"name", "id", "memorySlices", "computeSlices",
                      "memoryMiB", "smCount", "starts", "maxInstances"}));
  MigProfile profile;
  DS_ASSIGN_OR_RETURN(const json* name, RequireKey(value, path, "name"));
  DS_ASSIGN_OR_RETURN(profile.name, ReadString(*name, KeyPath(path, "name")));
  DS_ASSIGN_OR_RETURN(profile.id, ReadInt32(value, path, "id", 0, kInt32Max));
  DS_ASSIGN_OR_RETURN(
      profile.memory_slices,
      ReadInt32(value, path, "memorySlices", 1, model_memory_slices));
  DS_ASSIGN_OR_RETURN(
      profile.compute_slices,
      ReadInt32(value, path, "computeSlices", 1, model_compute_slices));
  DS_ASSIGN_OR_RETURN(const json* mib, RequireKey(value, path, "memoryMiB"));
  DS_ASSIGN_OR_RETURN(
      profile.memory_mib,
      ReadInteger(*mib, KeyPath(path, "memoryMiB"), 1, kMibMax));
  if (const json* sm = FindKey(value, "smCount"); sm != nullptr) {
    DS_ASSIGN_OR_RETURN(
        int64_t n, ReadInteger(*sm, KeyPath(path, "smCount"), 0, kInt32Max));
    profile.sm_count = static_cast<int32_t>(n);
  }
  DS_ASSIGN_OR_RETURN(profile.max_instances,
                      ReadInt32(value, path, "maxInstances", 1, kInt32Max));

  const std::string starts_path = KeyPath(path, "starts");
  DS_ASSIGN_OR_RETURN(const json* starts, RequireKey(value, path, "starts"));
  DS_RETURN_IF_ERROR(RequireList(*starts, starts_path));
  if (starts->empty()) return PathError(starts_path, "is empty");
  const int64_t last = model_memory_slices - profile.memory_slices;
  for (size_t i = 0; i < starts->size(); ++i) {
    const std::string p = IndexPath(starts_path, i);
    DS_ASSIGN_OR_RETURN(int64_t s, ReadInteger((*starts)[i], p, 0, last));
    const uint32_t bit = 1u << s;
    if ((profile.legal_starts & bit) != 0) {
      return PathError(p, absl::StrCat(s, " appears twice"));
    }
    profile.legal_starts |= bit;
  }
  return profile;
}

absl::StatusOr<MigModel> ParseModel(const json& value, absl::string_view path) {
  DS_RETURN_IF_ERROR(RequireMapping(value, path));
  DS_RETURN_IF_ERROR(
      CheckKnownKeys(value, path,
                     {"name", "pciDeviceIds", "modelNames", "memorySlices",
                      "computeSlices", "profiles"}));
  MigModel model;
  DS_ASSIGN_OR_RETURN(const json* name, RequireKey(value, path, "name"));
  DS_ASSIGN_OR_RETURN(model.name, ReadString(*name, KeyPath(path, "name")));
  if (const json* ids = FindKey(value, "pciDeviceIds"); ids != nullptr) {
    const std::string p = KeyPath(path, "pciDeviceIds");
    DS_RETURN_IF_ERROR(RequireList(*ids, p));
    for (size_t i = 0; i < ids->size(); ++i) {
      DS_ASSIGN_OR_RETURN(uint32_t id,
                          ReadDeviceId((*ids)[i], IndexPath(p, i)));
      model.pci_device_ids.push_back(id);
    }
  }
  if (const json* names = FindKey(value, "modelNames"); names != nullptr) {
    const std::string p = KeyPath(path, "modelNames");
    DS_RETURN_IF_ERROR(RequireList(*names, p));
    for (size_t i = 0; i < names->size(); ++i) {
      DS_ASSIGN_OR_RETURN(std::string n,
                          ReadString((*names)[i], IndexPath(p, i)));
      model.model_names.push_back(std::move(n));
    }
  }
  DS_ASSIGN_OR_RETURN(model.memory_slices,
                      ReadInt32(value, path, "memorySlices", 1, 32));
  DS_ASSIGN_OR_RETURN(model.compute_slices,
                      ReadInt32(value, path, "computeSlices", 1, 32));
  const std::string profiles_path = KeyPath(path, "profiles");
  DS_ASSIGN_OR_RETURN(const json* profiles,
                      RequireKey(value, path, "profiles"));
  DS_RETURN_IF_ERROR(RequireList(*profiles, profiles_path));
  for (size_t i = 0; i < profiles->size(); ++i) {
    DS_ASSIGN_OR_RETURN(
        MigProfile profile,
        ParseProfile((*profiles)[i], IndexPath(profiles_path, i),
                     model.memory_slices, model.compute_slices));
    model.profiles.push_back(std::move(profile));
  }
  return model;
}

std::string Quote(absl::string_view s) {
  return JsonText(json(std::string(s)));
}

std::string StartList(uint32_t bits) {
  std::vector<int> starts;
  for (int s = 0; s < 32; ++s) {
    if (((bits >> s) & 1u) != 0) starts.push_back(s);
  }
  return absl::StrCat("[", absl::StrJoin(starts, ", "), "]");
}

}  // namespace

absl::StatusOr<std::vector<MigModel>> ParseCatalogTree(const json& root) {
  DS_RETURN_IF_ERROR(RequireMapping(root, "catalog"));
  DS_RETURN_IF_ERROR(CheckKnownKeys(root, "", {"models"}));
  DS_ASSIGN_OR_RETURN(const json* models, RequireKey(root, "", "models"));
  DS_RETURN_IF_ERROR(RequireList(*models, "models"));
  std::vector<MigModel> out;
  for (size_t i = 0; i < models->size(); ++i) {
    DS_ASSIGN_OR_RETURN(MigModel model,
                        ParseModel((*models)[i], IndexPath("models", i)));
    out.push_back(std::move(model));
  }
  return out;
}

std::string CatalogToYaml(const std::vector<MigModel>& models) {
  std::string out = "models:\n";
  if (models.empty()) return "models: []\n";
  for (const MigModel& model : models) {
    std::vector<std::string> ids;
    for (uint32_t id : model.pci_device_ids) {
      ids.push_back(Quote(absl::StrFormat("0x%04X", id)));
    }
    std::vector<std::string> names;
    for (const std::string& n : model.model_names) names.push_back(Quote(n));
    absl::StrAppend(&out, "- name: ", Quote(model.name), "\n",
                    "  pciDeviceIds: [", absl::StrJoin(ids, ", "), "]\n",
                    "  modelNames: [", absl::StrJoin(names, ", "), "]\n",
                    "  memorySlices: ", model.memory_slices, "\n",
                    "  computeSlices: ", model.compute_slices, "\n",
                    "  profiles:\n");
    for (const MigProfile& p : model.profiles) {
      absl::StrAppend(&out, "  - {name: ", Quote(p.name), ", id: ", p.id,
                      ", memorySlices: ", p.memory_slices,
                      ", computeSlices: ", p.compute_slices,
                      ", memoryMiB: ", p.memory_mib, ", smCount: ", p.sm_count,
                      ", starts: ", StartList(p.legal_starts),
                      ", maxInstances: ", p.max_instances, "}\n");
    }
  }
  return out;
}

}  // namespace deviceshare::mig::internal
