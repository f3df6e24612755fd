#include "deviceshare/k8s/resource_quota_parser.h"

#include <algorithm>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deviceshare/json_text.h"
#include "deviceshare/model/units.h"
#include "deviceshare/status_macros.h"
#include "nlohmann/json.hpp"
#include "pod_container_parser.h"

namespace deviceshare {
namespace {

using Json = nlohmann::json;

absl::Status Malformed(absl::string_view where, const Json& value,
                       absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrFormat("ResourceQuota %s: %s %s", where, JsonText(value), why));
}

// The text of a metadata member, "" when absent.
std::string MetadataText(const Json& object, const char* member) {
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return "";
  auto it = metadata->find(member);
  return it != metadata->end() && it->is_string() ? it->get<std::string>() : "";
}

// A spec.hard value as HAMi's Quantity.AsInt64 reads it: a whole number
// (nullopt for "1.5" or "500m", which HAMi skips); negative or not a
// quantity is an error.
absl::StatusOr<std::optional<int64_t>> WholeLimit(const Json& value,
                                                  const std::string& field) {
  absl::StatusOr<std::string> text = internal::QuantityText(value, field);
  if (!text.ok()) return Malformed(field, value, "is not a quantity");
  absl::StatusOr<int64_t> milli = ParseQuantityMilli(*text, field);
  if (!milli.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ResourceQuota ", milli.status().message()));
  }
  if (*milli % 1000 != 0) return std::nullopt;
  return *milli / 1000;
}

}  // namespace

absl::StatusOr<std::optional<GpuQuota>> ParseResourceQuota(
    const Json& object, const DeviceConfig& config) {
  GpuQuota quota;
  quota.name = MetadataText(object, "name");
  quota.namespace_name = MetadataText(object, "namespace");
  if (quota.name.empty()) {
    return absl::InvalidArgumentError(
        "ResourceQuota: metadata.name is missing");
  }
  if (quota.namespace_name.empty()) quota.namespace_name = "default";
  const std::string where = absl::StrCat(quota.namespace_name, "/", quota.name);
  auto spec = object.find("spec");
  if (spec == object.end() || spec->is_null()) return std::nullopt;
  if (!spec->is_object()) {
    return Malformed(absl::StrCat(where, " spec"), *spec, "is not a mapping");
  }
  auto hard = spec->find("hard");
  if (hard == spec->end() || hard->is_null()) return std::nullopt;
  if (!hard->is_object()) {
    return Malformed(absl::StrCat(where, " spec.hard"), *hard,
                     "is not a mapping");
  }
  const std::string memory_key =
      absl::StrCat("limits.", config.resource_memory_name);
  const std::string cores_key =
      absl::StrCat("limits.", config.resource_core_name);
  for (const auto& [key, value] : hard->items()) {
    const bool memory =
        !config.resource_memory_name.empty() && key == memory_key;
    const bool cores = !config.resource_core_name.empty() && key == cores_key;
    if (!memory && !cores) continue;
    DS_ASSIGN_OR_RETURN(
        std::optional<int64_t> limit,
        WholeLimit(value, absl::StrCat(where, " spec.hard.", key)));
    if (!limit) continue;
    if (memory) {
      // Requests are memory units times the factor; so is the limit.
      const int64_t factor = std::max(config.memory_factor, 1);
      quota.limits.memory_mib =
          *limit > std::numeric_limits<int64_t>::max() / factor
              ? std::numeric_limits<int64_t>::max()
              : *limit * factor;
    } else {
      quota.limits.cores = *limit;
    }
  }
  if (!quota.limits.memory_mib && !quota.limits.cores) return std::nullopt;
  return quota;
}

}  // namespace deviceshare
