#include "codec/hami_mig_profiles.h"

#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "codec/json_members.h"
#include "codec/wire_fields.h"
#include "deviceshare/model/mig_slot.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::wire {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

// A MigSlot mask covers 32 memory slices; no GPU has more.
constexpr int64_t kMaxMemorySlices = 32;

absl::StatusOr<MigPlacement> ReadPlacement(const Json& value,
                                           const std::string& field,
                                           absl::string_view where) {
  if (!value.is_object()) {
    return JsonFieldError(where, field, value, "is not a JSON object");
  }
  MigPlacement placement;
  const std::string start_field = absl::StrCat(field, ".start");
  const std::string size_field = absl::StrCat(field, ".size");
  DS_ASSIGN_OR_RETURN(int64_t start, JsonIntNamed(value, "start", start_field,
                                                  kMaxMemorySlices - 1, where));
  DS_ASSIGN_OR_RETURN(int64_t size, JsonIntNamed(value, "size", size_field,
                                                 kMaxMemorySlices, where));
  if (size < 1) {
    return JsonFieldError(where, size_field, value.value("size", Json(0)),
                          "is not positive (a placement covers at least one "
                          "memory slice)");
  }
  if (start + size > kMaxMemorySlices) {
    return JsonFieldError(
        where, field, value,
        absl::StrCat("ends past memory slice ", kMaxMemorySlices));
  }
  placement.start = static_cast<int32_t>(start);
  placement.size = static_cast<int32_t>(size);
  return placement;
}

absl::StatusOr<std::vector<MigPlacement>> ReadPlacements(
    const Json& profile, const std::string& field, absl::string_view where) {
  std::vector<MigPlacement> placements;
  auto it = profile.find("placements");
  if (it == profile.end() || it->is_null()) return placements;
  const std::string list_field = absl::StrCat(field, ".placements");
  if (!it->is_array()) {
    return JsonFieldError(where, list_field, *it, "is not a JSON list");
  }
  for (size_t i = 0; i < it->size(); ++i) {
    const std::string item = absl::StrCat(list_field, "[", i, "]");
    DS_ASSIGN_OR_RETURN(MigPlacement placement,
                        ReadPlacement((*it)[i], item, where));
    // NVML gives every placement of a profile the profile's memory slices.
    if (!placements.empty() && placement.size != placements[0].size) {
      return JsonFieldError(where, absl::StrCat(item, ".size"),
                            (*it)[i]["size"],
                            absl::StrCat("differs from ", list_field,
                                         "[0].size ", placements[0].size));
    }
    placements.push_back(placement);
  }
  return placements;
}

absl::StatusOr<RegisteredMigProfile> ReadProfile(const Json& value,
                                                 const std::string& field,
                                                 absl::string_view where) {
  if (!value.is_object()) {
    return JsonFieldError(where, field, value, "is not a JSON object");
  }
  RegisteredMigProfile profile;
  const std::string name_field = absl::StrCat(field, ".name");
  if (auto it = value.find("name"); it != value.end() && !it->is_string()) {
    return JsonFieldError(where, name_field, *it, "is not a string");
  }
  profile.name = value.value("name", std::string());
  if (!IsMigProfileName(profile.name)) {
    return FieldError(where, name_field, profile.name,
                      "is not a MIG profile name (want <N>g.<M>gb)");
  }
  DS_ASSIGN_OR_RETURN(
      profile.memory_mib,
      JsonIntNamed(value, "memoryMB", absl::StrCat(field, ".memoryMB"),
                   kInt32Max, where));
  DS_ASSIGN_OR_RETURN(int64_t core,
                      JsonIntNamed(value, "core", absl::StrCat(field, ".core"),
                                   kInt32Max, where));
  DS_ASSIGN_OR_RETURN(
      int64_t slices,
      JsonIntNamed(value, "sliceCount", absl::StrCat(field, ".sliceCount"),
                   kInt32Max, where));
  profile.cores = static_cast<int32_t>(core);
  profile.slice_count = static_cast<int32_t>(slices);
  DS_ASSIGN_OR_RETURN(profile.placements, ReadPlacements(value, field, where));
  return profile;
}

}  // namespace

absl::StatusOr<std::vector<RegisteredMigProfile>> ReadHamiMigProfiles(
    const Json& entry, absl::string_view where) {
  std::vector<RegisteredMigProfile> profiles;
  auto it = entry.find("migProfiles");
  if (it == entry.end() || it->is_null()) return profiles;
  if (!it->is_array()) {
    return JsonFieldError(where, "migProfiles", *it, "is not a JSON list");
  }
  std::set<std::string> names;
  for (size_t i = 0; i < it->size(); ++i) {
    const std::string field = absl::StrCat("migProfiles[", i, "]");
    DS_ASSIGN_OR_RETURN(RegisteredMigProfile profile,
                        ReadProfile((*it)[i], field, where));
    // HAMi's scheduler would only ever look at the first of two.
    if (!names.insert(profile.name).second) {
      return FieldError(where, absl::StrCat(field, ".name"), profile.name,
                        "is registered twice");
    }
    profiles.push_back(std::move(profile));
  }
  return profiles;
}

OrderedJson HamiMigProfilesJson(
    const std::vector<RegisteredMigProfile>& profiles) {
  OrderedJson list = OrderedJson::array();
  for (const RegisteredMigProfile& profile : profiles) {
    OrderedJson entry = OrderedJson::object();
    entry["name"] = profile.name;
    entry["memoryMB"] = profile.memory_mib;
    entry["core"] = profile.cores;
    entry["sliceCount"] = profile.slice_count;
    // Go writes a nil slice as null.
    OrderedJson placements = nullptr;
    for (const MigPlacement& placement : profile.placements) {
      placements.push_back(
          {{"start", placement.start}, {"size", placement.size}});
    }
    entry["placements"] = std::move(placements);
    list.push_back(std::move(entry));
  }
  return list;
}

}  // namespace deviceshare::wire
