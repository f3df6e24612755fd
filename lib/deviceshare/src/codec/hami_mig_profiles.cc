#include "codec/hami_mig_profiles.h"

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <utility>

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

constexpr int64_t kGoInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kGoInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kGoUint32Max = std::numeric_limits<uint32_t>::max();

// ---- What Go's encoding/json refuses (the whole registration fails) ----

// Member `name` of `object` as Go fills an integer of [min, max]: absent or
// null leaves the zero value; anything but an integer in range is an error.
absl::Status CheckGoInt(const Json& object, const char* name,
                        const std::string& field, int64_t min, int64_t max,
                        absl::string_view where) {
  auto it = object.find(name);
  if (it == object.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_number_integer()) {
    // nlohmann reads integers beyond uint64 as doubles; Go calls them out
    // of range, but neither reads them.
    return JsonFieldError(where, field, *it, "is not an integer");
  }
  const bool in_range =
      it->is_number_unsigned()
          ? it->get<uint64_t>() <= static_cast<uint64_t>(max)
          : it->get<int64_t>() >= min && it->get<int64_t>() <= max;
  if (!in_range) {
    return JsonFieldError(where, field, *it,
                          absl::StrCat("is out of range (HAMi's Go type holds ",
                                       min, "..", max, ")"));
  }
  return absl::OkStatus();
}

// A JSON value Go decodes into a struct: an object, or null (zero value).
absl::Status CheckGoObject(const Json& value, const std::string& field,
                           absl::string_view where) {
  if (value.is_null() || value.is_object()) return absl::OkStatus();
  return JsonFieldError(where, field, value, "is not a JSON object");
}

// placements: []MigPlacement{Start, Size uint32}.
absl::Status CheckGoPlacements(const Json& profile, const std::string& field,
                               absl::string_view where) {
  auto it = profile.find("placements");
  if (it == profile.end() || it->is_null()) return absl::OkStatus();
  const std::string list_field = absl::StrCat(field, ".placements");
  if (!it->is_array()) {
    return JsonFieldError(where, list_field, *it, "is not a JSON list");
  }
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& placement = (*it)[i];
    const std::string item = absl::StrCat(list_field, "[", i, "]");
    DS_RETURN_IF_ERROR(CheckGoObject(placement, item, where));
    if (placement.is_null()) continue;
    DS_RETURN_IF_ERROR(CheckGoInt(placement, "start",
                                  absl::StrCat(item, ".start"), 0, kGoUint32Max,
                                  where));
    DS_RETURN_IF_ERROR(CheckGoInt(placement, "size",
                                  absl::StrCat(item, ".size"), 0, kGoUint32Max,
                                  where));
  }
  return absl::OkStatus();
}

// One migProfiles entry against HAMi's MigProfile struct (devices.go):
// name string, memoryMB and core int32, sliceCount uint32, placements.
absl::Status CheckGoProfile(const Json& value, const std::string& field,
                            absl::string_view where) {
  DS_RETURN_IF_ERROR(CheckGoObject(value, field, where));
  if (value.is_null()) return absl::OkStatus();
  if (auto it = value.find("name");
      it != value.end() && !it->is_null() && !it->is_string()) {
    return JsonFieldError(where, absl::StrCat(field, ".name"), *it,
                          "is not a string");
  }
  DS_RETURN_IF_ERROR(CheckGoInt(value, "memoryMB",
                                absl::StrCat(field, ".memoryMB"), kGoInt32Min,
                                kGoInt32Max, where));
  DS_RETURN_IF_ERROR(CheckGoInt(value, "core", absl::StrCat(field, ".core"),
                                kGoInt32Min, kGoInt32Max, where));
  DS_RETURN_IF_ERROR(CheckGoInt(value, "sliceCount",
                                absl::StrCat(field, ".sliceCount"), 0,
                                kGoUint32Max, where));
  return CheckGoPlacements(value, field, where);
}

// ---- What no NVML report can hold (the profile is left out) ----
// These run on entries CheckGoProfile accepted, so every member is of its
// Go type or null.

// Member `name` as Go left it: absent or null is 0.
int64_t GoInt(const Json& object, const char* name) {
  auto it = object.find(name);
  if (it == object.end() || it->is_null()) return 0;
  return it->is_number_unsigned() ? static_cast<int64_t>(it->get<uint64_t>())
                                  : it->get<int64_t>();
}

// Member `name` of `object`, for messages: null where absent.
Json MemberOrNull(const Json& object, const char* name) {
  auto it = object.find(name);
  return it == object.end() ? Json(nullptr) : *it;
}

absl::StatusOr<MigPlacement> UsablePlacement(const Json& value,
                                             const std::string& field,
                                             absl::string_view where) {
  if (value.is_null()) {
    return JsonFieldError(where, field, value,
                          "is no placement (Go reads it as size 0)");
  }
  const int64_t start = GoInt(value, "start");
  const int64_t size = GoInt(value, "size");
  if (size < 1) {
    return JsonFieldError(where, absl::StrCat(field, ".size"),
                          MemberOrNull(value, "size"),
                          "is not positive (a placement covers at least one "
                          "memory slice)");
  }
  if (start + size > kMaxMemorySlices) {
    return JsonFieldError(
        where, field, value,
        absl::StrCat("ends past memory slice ", kMaxMemorySlices));
  }
  return MigPlacement{static_cast<int32_t>(start), static_cast<int32_t>(size)};
}

absl::StatusOr<std::vector<MigPlacement>> UsablePlacements(
    const Json& profile, const std::string& field, absl::string_view where) {
  std::vector<MigPlacement> placements;
  auto it = profile.find("placements");
  if (it == profile.end() || it->is_null()) return placements;
  const std::string list_field = absl::StrCat(field, ".placements");
  for (size_t i = 0; i < it->size(); ++i) {
    const std::string item = absl::StrCat(list_field, "[", i, "]");
    DS_ASSIGN_OR_RETURN(MigPlacement placement,
                        UsablePlacement((*it)[i], item, where));
    // NVML gives every placement of a profile the profile's memory slices.
    if (!placements.empty() && placement.size != placements[0].size) {
      return JsonFieldError(where, absl::StrCat(item, ".size"),
                            MemberOrNull((*it)[i], "size"),
                            absl::StrCat("differs from ", list_field,
                                         "[0].size ", placements[0].size));
    }
    placements.push_back(placement);
  }
  return placements;
}

// A number no NVML report has: negative, or (sliceCount) past int32.
absl::StatusOr<int32_t> UsableCount(const Json& value, const char* name,
                                    const std::string& field,
                                    absl::string_view where) {
  const int64_t n = GoInt(value, name);
  if (n < 0) {
    return JsonFieldError(where, absl::StrCat(field, ".", name), value.at(name),
                          "is negative");
  }
  if (n > kGoInt32Max) {
    return JsonFieldError(
        where, absl::StrCat(field, ".", name), value.at(name),
        absl::StrCat("is out of range (max ", kGoInt32Max, ")"));
  }
  return static_cast<int32_t>(n);
}

absl::StatusOr<RegisteredMigProfile> UsableProfile(const Json& value,
                                                   const std::string& field,
                                                   absl::string_view where) {
  RegisteredMigProfile profile;
  if (value.is_object()) {
    auto it = value.find("name");
    if (it != value.end() && it->is_string()) {
      profile.name = it->get<std::string>();
    }
  }
  if (!IsMigProfileName(profile.name)) {
    return FieldError(where, absl::StrCat(field, ".name"), profile.name,
                      "is not a MIG profile name (want <N>g.<M>gb)");
  }
  DS_ASSIGN_OR_RETURN(int32_t memory,
                      UsableCount(value, "memoryMB", field, where));
  DS_ASSIGN_OR_RETURN(profile.cores, UsableCount(value, "core", field, where));
  DS_ASSIGN_OR_RETURN(profile.slice_count,
                      UsableCount(value, "sliceCount", field, where));
  profile.memory_mib = memory;
  DS_ASSIGN_OR_RETURN(profile.placements,
                      UsablePlacements(value, field, where));
  return profile;
}

}  // namespace

absl::Status ReadHamiMigProfiles(const Json& entry, absl::string_view where,
                                 Gpu& gpu) {
  gpu.mig_profiles.clear();
  gpu.mig_profiles_left_out.clear();
  auto it = entry.find("migProfiles");
  if (it == entry.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_array()) {
    return JsonFieldError(where, "migProfiles", *it, "is not a JSON list");
  }
  // Go refuses the registration as a whole, so nothing is read until every
  // entry has passed.
  for (size_t i = 0; i < it->size(); ++i) {
    DS_RETURN_IF_ERROR(
        CheckGoProfile((*it)[i], absl::StrCat("migProfiles[", i, "]"), where));
  }
  std::set<std::string> names;
  for (size_t i = 0; i < it->size(); ++i) {
    const std::string field = absl::StrCat("migProfiles[", i, "]");
    absl::StatusOr<RegisteredMigProfile> profile =
        UsableProfile((*it)[i], field, where);
    // HAMi's scheduler would only ever look at the first of two.
    if (profile.ok() && !names.insert(profile->name).second) {
      profile = FieldError(where, absl::StrCat(field, ".name"), profile->name,
                           "is registered twice");
    }
    if (profile.ok()) {
      gpu.mig_profiles.push_back(*std::move(profile));
    } else {
      gpu.mig_profiles_left_out.emplace_back(profile.status().message());
    }
  }
  return absl::OkStatus();
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
    // instance_count stays off the wire: HAMi tags it `json:"-"`.
    list.push_back(std::move(entry));
  }
  return list;
}

}  // namespace deviceshare::wire
