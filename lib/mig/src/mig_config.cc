#include "deviceshare/mig/mig_config.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deviceshare/config/config_fields.h"
#include "deviceshare/mig/mig_backend.h"
#include "deviceshare/model/model_match.h"
#include "deviceshare/status_macros.h"
#include "geometry_parser.h"

namespace deviceshare::mig {
namespace {

using ::deviceshare::internal::DescribeValue;
using ::deviceshare::internal::PathError;
using nlohmann::json;

constexpr char kNvidia[] = "nvidia";
constexpr char kScheduler[] = "scheduler";
constexpr char kSearchKey[] = "migSearch";
constexpr char kGeometriesKey[] = "knownMigGeometries";
constexpr char kAllowlistKey[] = "migProfileAllowlist";

// The value of an owned key, or nullptr.
const json* Owned(const Config& config, const char* section, const char* key) {
  auto it = config.extensions.find(section);
  if (it == config.extensions.end() || !it->is_object()) return nullptr;
  auto value = it->find(key);
  return value == it->end() || value->is_null() ? nullptr : &*value;
}

absl::StatusOr<MigSearch> ReadSearch(const json& value,
                                     absl::string_view path) {
  DS_ASSIGN_OR_RETURN(
      std::string text,
      ::deviceshare::internal::ReadString(value, path, /*allow_empty=*/false));
  for (MigSearch search : {MigSearch::kPlacement, MigSearch::kConfigMap}) {
    if (text == MigSearchName(search)) return search;
  }
  return PathError(path, absl::StrCat(DescribeValue(value),
                                      " is not a MIG search (want placement "
                                      "or configmap)"));
}

json InstancesJson(const MigGeometry& geometry) {
  json instances = json::array();
  for (const MigGeometryInstance& i : geometry.instances) {
    json instance = {
        {"name", i.name}, {"memory", i.memory_mib}, {"count", i.count}};
    if (i.cores > 0) instance["core"] = i.cores;
    instances.push_back(std::move(instance));
  }
  return instances;
}

// Volcano's shape when the groups are named, HAMi's lists otherwise.
json GeometriesJson(const std::vector<KnownMigGeometries>& known) {
  json out = json::array();
  for (const KnownMigGeometries& entry : known) {
    json allowed = json::array();
    for (const MigGeometry& geometry : entry.geometries) {
      allowed.push_back(geometry.group.empty()
                            ? InstancesJson(geometry)
                            : json{{"group", geometry.group},
                                   {"geometries", InstancesJson(geometry)}});
    }
    out.push_back({{"models", entry.models}, {"allowedGeometries", allowed}});
  }
  return out;
}

// The MIG keys only matter together: say which of them go unused, and
// refuse a configmap search without geometries.
absl::Status CheckMigSettings(Config& config) {
  DS_ASSIGN_OR_RETURN(MigConfig mig, ReadMigConfig(config));
  // No scheduler.modes enables every registered backend, this one too.
  const std::vector<SharingMode>& modes = config.scheduler.enabled_modes;
  const bool mig_enabled =
      modes.empty() ||
      std::find(modes.begin(), modes.end(), kMode) != modes.end();
  const bool configmap = mig.search == MigSearch::kConfigMap;
  if (mig_enabled && configmap && mig.known_geometries.empty()) {
    return PathError("scheduler.migSearch",
                     "\"configmap\" needs nvidia.knownMigGeometries");
  }
  if (mig_enabled && configmap) {
    // Volcano's decodeNodeDevices serves a `mig` device whose type no
    // knownMigGeometries entry lists as hami-core (HAMi's own search leaves
    // such a device without geometries instead: no fallback there).
    RegisteredModeModels rule{kMode, {}};
    for (const KnownMigGeometries& entry : mig.known_geometries) {
      rule.models.insert(rule.models.end(), entry.models.begin(),
                         entry.models.end());
    }
    std::erase(config.device.volcano_mode_models, rule);  // checked twice
    config.device.volcano_mode_models.push_back(std::move(rule));
  }
  auto unused = [&](absl::string_view key, absl::string_view why) {
    config.notices.push_back(
        absl::StrFormat("%s.%s: not used: %s", kNvidia, key, why));
  };
  const bool geometries = !mig.known_geometries.empty();
  const bool allowlist = !mig.profile_allowlist.empty();
  if (!mig_enabled) {
    if (geometries) unused(kGeometriesKey, "scheduler.modes has no mig");
    if (allowlist) unused(kAllowlistKey, "scheduler.modes has no mig");
  } else if (configmap) {
    if (allowlist) {
      unused(kAllowlistKey,
             "scheduler.migSearch is configmap, which takes the profiles of "
             "knownMigGeometries");
    }
  } else if (geometries) {
    unused(kGeometriesKey,
           "scheduler.migSearch is placement (the default), which searches "
           "the MIG profile catalog; set it to configmap to use the groups");
  }
  return absl::OkStatus();
}

}  // namespace

absl::string_view MigSearchName(MigSearch search) {
  return search == MigSearch::kConfigMap ? "configmap" : "placement";
}

absl::StatusOr<MigConfig> ReadMigConfig(const Config& config) {
  MigConfig mig;
  if (const json* search = Owned(config, kScheduler, kSearchKey)) {
    DS_ASSIGN_OR_RETURN(
        mig.search,
        ReadSearch(*search, absl::StrCat(kScheduler, ".", kSearchKey)));
  }
  if (const json* known = Owned(config, kNvidia, kGeometriesKey)) {
    DS_ASSIGN_OR_RETURN(
        mig.known_geometries,
        internal::ParseKnownMigGeometries(
            *known, absl::StrCat(kNvidia, ".", kGeometriesKey)));
  }
  if (const json* allow = Owned(config, kNvidia, kAllowlistKey)) {
    DS_ASSIGN_OR_RETURN(mig.profile_allowlist,
                        internal::ParseMigProfileAllowlist(
                            *allow, absl::StrCat(kNvidia, ".", kAllowlistKey)));
  }
  return mig;
}

Config WithMigConfig(Config config, const MigConfig& mig) {
  if (!config.extensions.is_object()) config.extensions = json::object();
  json& scheduler = config.extensions[kScheduler];
  if (!scheduler.is_object()) scheduler = json::object();
  scheduler[kSearchKey] = std::string(MigSearchName(mig.search));
  json& nvidia = config.extensions[kNvidia];
  if (!nvidia.is_object()) nvidia = json::object();
  nvidia.erase(kGeometriesKey);
  nvidia.erase(kAllowlistKey);
  if (!mig.known_geometries.empty()) {
    nvidia[kGeometriesKey] = GeometriesJson(mig.known_geometries);
  }
  if (!mig.profile_allowlist.empty()) {
    json allow = json::array();
    for (const MigProfileAllowlist& entry : mig.profile_allowlist) {
      allow.push_back({{"models", entry.models}, {"profiles", entry.profiles}});
    }
    nvidia[kAllowlistKey] = std::move(allow);
  }
  return config;
}

ConfigExtension MigConfigExtension() {
  ConfigExtension extension;
  extension.nvidia_keys = {kGeometriesKey, kAllowlistKey};
  extension.scheduler_keys = {kSearchKey};
  extension.check = CheckMigSettings;
  return extension;
}

const MigProfileAllowlist* AllowlistEntryFor(
    const std::vector<MigProfileAllowlist>& allowlist,
    absl::string_view gpu_model) {
  for (const MigProfileAllowlist& entry : allowlist) {
    if (ModelNamesAny(gpu_model, entry.models)) return &entry;
  }
  return nullptr;
}

const KnownMigGeometries* GeometriesEntryFor(
    const std::vector<KnownMigGeometries>& known_geometries,
    absl::string_view gpu_model) {
  for (const KnownMigGeometries& entry : known_geometries) {
    if (ModelNamesAny(gpu_model, entry.models)) return &entry;
  }
  return nullptr;
}

}  // namespace deviceshare::mig
