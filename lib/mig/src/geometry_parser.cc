#include "geometry_parser.h"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "deviceshare/config/config_fields.h"
#include "deviceshare/model/mig_slot.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::mig::internal {

using ::deviceshare::internal::CheckKnownKeys;
using ::deviceshare::internal::DescribeValue;
using ::deviceshare::internal::IndexPath;
using ::deviceshare::internal::KeyPath;
using ::deviceshare::internal::PathError;
using ::deviceshare::internal::ReadInteger;
using ::deviceshare::internal::ReadString;
using ::deviceshare::internal::ReadStringList;
using ::deviceshare::internal::RequireList;
using ::deviceshare::internal::RequireMapping;
namespace {

using nlohmann::json;

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

const json* Find(const json& object, absl::string_view key) {
  auto it = object.find(std::string(key));
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

absl::StatusOr<const json*> Require(const json& object, absl::string_view path,
                                    absl::string_view key) {
  const json* value = Find(object, key);
  if (value == nullptr) return PathError(KeyPath(path, key), "missing");
  return value;
}

absl::StatusOr<std::string> ReadProfileName(const json& value,
                                            absl::string_view path) {
  DS_ASSIGN_OR_RETURN(std::string name,
                      ReadString(value, path, /*allow_empty=*/false));
  if (!IsMigProfileName(name)) {
    return PathError(path, absl::StrCat(DescribeValue(value),
                                        " is not a MIG profile name (want "
                                        "<N>g.<M>gb, e.g. 1g.10gb or "
                                        "1g.10gb+me)"));
  }
  return name;
}

absl::StatusOr<MigGeometryInstance> ParseInstance(const json& value,
                                                  absl::string_view path) {
  DS_RETURN_IF_ERROR(RequireMapping(value, path));
  DS_RETURN_IF_ERROR(
      CheckKnownKeys(value, path, {"name", "memory", "count", "core"}));
  MigGeometryInstance instance;
  DS_ASSIGN_OR_RETURN(const json* name, Require(value, path, "name"));
  DS_ASSIGN_OR_RETURN(instance.name,
                      ReadProfileName(*name, KeyPath(path, "name")));
  DS_ASSIGN_OR_RETURN(const json* memory, Require(value, path, "memory"));
  DS_ASSIGN_OR_RETURN(
      instance.memory_mib,
      ReadInteger(*memory, KeyPath(path, "memory"), 1, kInt64Max));
  DS_ASSIGN_OR_RETURN(const json* count, Require(value, path, "count"));
  DS_ASSIGN_OR_RETURN(
      int64_t n, ReadInteger(*count, KeyPath(path, "count"), 1, kInt32Max));
  instance.count = static_cast<int32_t>(n);
  if (const json* core = Find(value, "core")) {
    DS_ASSIGN_OR_RETURN(int64_t c,
                        ReadInteger(*core, KeyPath(path, "core"), 0, 100));
    instance.cores = static_cast<int32_t>(c);
  }
  return instance;
}

absl::StatusOr<std::vector<MigGeometryInstance>> ParseInstances(
    const json& value, absl::string_view path, bool allow_empty = false) {
  DS_RETURN_IF_ERROR(RequireList(value, path));
  if (value.empty() && !allow_empty) return PathError(path, "is empty");
  std::vector<MigGeometryInstance> instances;
  for (size_t i = 0; i < value.size(); ++i) {
    DS_ASSIGN_OR_RETURN(MigGeometryInstance instance,
                        ParseInstance(value[i], IndexPath(path, i)));
    instances.push_back(std::move(instance));
  }
  return instances;
}

// Volcano: `{group: group1, geometries: [{name, memory, count}, ...]}`.
absl::StatusOr<MigGeometry> ParseNamedGeometry(const json& value,
                                               absl::string_view path) {
  DS_RETURN_IF_ERROR(CheckKnownKeys(value, path, {"group", "geometries"}));
  MigGeometry geometry;
  DS_ASSIGN_OR_RETURN(const json* group, Require(value, path, "group"));
  DS_ASSIGN_OR_RETURN(geometry.group, ReadString(*group, KeyPath(path, "group"),
                                                 /*allow_empty=*/false));
  // The name travels in allocation ids, `GPU-x[group2-3]`, split at the
  // last '-': it must not end in '-', look like a MIG profile (the
  // placement form is `GPU-x[1g.10gb-6]`) or hold the ids' separators.
  if (geometry.group.back() == '-' || IsMigProfileName(geometry.group) ||
      geometry.group.find_first_of("[],:;") != std::string::npos) {
    return PathError(
        KeyPath(path, "group"),
        absl::StrCat("\"", geometry.group,
                     "\" cannot name a group in an allocation id (no "
                     "trailing '-', no MIG profile name, none of []:,;)"));
  }
  DS_ASSIGN_OR_RETURN(const json* instances,
                      Require(value, path, "geometries"));
  // Volcano accepts a group without geometries; it matches no request
  // (mig_test.go TestFindMatch "Empty geometry list").
  DS_ASSIGN_OR_RETURN(geometry.instances,
                      ParseInstances(*instances, KeyPath(path, "geometries"),
                                     /*allow_empty=*/true));
  return geometry;
}

absl::StatusOr<std::vector<MigGeometry>> ParseAllowedGeometries(
    const json& value, absl::string_view path) {
  DS_RETURN_IF_ERROR(RequireList(value, path));
  if (value.empty()) return PathError(path, "is empty");
  std::vector<MigGeometry> geometries;
  bool named = value[0].is_object();
  for (size_t i = 0; i < value.size(); ++i) {
    std::string item_path = IndexPath(path, i);
    const json& item = value[i];
    if (!item.is_object() && !item.is_array()) {
      return PathError(item_path,
                       absl::StrCat(DescribeValue(item),
                                    " is neither a {group, geometries} "
                                    "mapping nor a list of instances"));
    }
    // Group names become part of Volcano's allocation ids
    // (`GPU-x[group2-3]`), so a list that mixes named and unnamed
    // geometries has no consistent encoding.
    if (item.is_object() != named) {
      return PathError(item_path,
                       "mixes Volcano's {group, geometries} shape with HAMi's "
                       "list-of-lists shape");
    }
    MigGeometry geometry;
    if (named) {
      DS_ASSIGN_OR_RETURN(geometry, ParseNamedGeometry(item, item_path));
      for (const MigGeometry& earlier : geometries) {
        if (earlier.group == geometry.group) {
          return PathError(
              KeyPath(item_path, "group"),
              absl::StrCat("duplicate group \"", geometry.group, "\""));
        }
      }
    } else {
      DS_ASSIGN_OR_RETURN(geometry.instances, ParseInstances(item, item_path));
    }
    geometries.push_back(std::move(geometry));
  }
  return geometries;
}

}  // namespace

absl::StatusOr<std::vector<KnownMigGeometries>> ParseKnownMigGeometries(
    const json& value, absl::string_view path) {
  DS_RETURN_IF_ERROR(RequireList(value, path));
  std::vector<KnownMigGeometries> result;
  for (size_t i = 0; i < value.size(); ++i) {
    std::string entry_path = IndexPath(path, i);
    const json& entry = value[i];
    DS_RETURN_IF_ERROR(RequireMapping(entry, entry_path));
    DS_RETURN_IF_ERROR(
        CheckKnownKeys(entry, entry_path, {"models", "allowedGeometries"}));
    KnownMigGeometries known;
    DS_ASSIGN_OR_RETURN(const json* models,
                        Require(entry, entry_path, "models"));
    DS_ASSIGN_OR_RETURN(known.models,
                        ReadStringList(*models, KeyPath(entry_path, "models")));
    DS_ASSIGN_OR_RETURN(const json* allowed,
                        Require(entry, entry_path, "allowedGeometries"));
    DS_ASSIGN_OR_RETURN(
        known.geometries,
        ParseAllowedGeometries(*allowed,
                               KeyPath(entry_path, "allowedGeometries")));
    result.push_back(std::move(known));
  }
  return result;
}

absl::StatusOr<std::vector<MigProfileAllowlist>> ParseMigProfileAllowlist(
    const json& value, absl::string_view path) {
  DS_RETURN_IF_ERROR(RequireList(value, path));
  std::vector<MigProfileAllowlist> result;
  for (size_t i = 0; i < value.size(); ++i) {
    std::string entry_path = IndexPath(path, i);
    const json& entry = value[i];
    DS_RETURN_IF_ERROR(RequireMapping(entry, entry_path));
    DS_RETURN_IF_ERROR(
        CheckKnownKeys(entry, entry_path, {"models", "profiles"}));
    MigProfileAllowlist allow;
    DS_ASSIGN_OR_RETURN(const json* models,
                        Require(entry, entry_path, "models"));
    DS_ASSIGN_OR_RETURN(allow.models,
                        ReadStringList(*models, KeyPath(entry_path, "models")));
    DS_ASSIGN_OR_RETURN(const json* profiles,
                        Require(entry, entry_path, "profiles"));
    std::string profiles_path = KeyPath(entry_path, "profiles");
    DS_RETURN_IF_ERROR(RequireList(*profiles, profiles_path));
    if (profiles->empty()) return PathError(profiles_path, "is empty");
    for (size_t j = 0; j < profiles->size(); ++j) {
      DS_ASSIGN_OR_RETURN(
          std::string name,
          ReadProfileName((*profiles)[j], IndexPath(profiles_path, j)));
      allow.profiles.push_back(std::move(name));
    }
    result.push_back(std::move(allow));
  }
  return result;
}

}  // namespace deviceshare::mig::internal
