#include "deviceshare/config/config_parser.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "device_config_parser.h"
#include "deviceshare/codec/yaml_json.h"
#include "deviceshare/config/config_fields.h"
#include "deviceshare/config/policy_name.h"
#include "deviceshare/status_macros.h"

namespace deviceshare {
namespace {

using internal::DescribeValue;
using internal::IndexPath;
using internal::KeyPath;
using internal::PathError;
using nlohmann::json;

constexpr char kSchedulerSection[] = "scheduler";
constexpr char kNvidiaSection[] = "nvidia";
// Data keys of a ConfigMap: the upstream device config map body, and
// deviceshare's own whole file.
constexpr char kDeviceConfigKey[] = "device-config.yaml";
constexpr char kOwnConfigKey[] = "deviceshare.yaml";

constexpr absl::string_view kSchedulerKeys[] = {
    "nodePolicy", "gpuPolicy",       "dialect",
    "modes",      "typicalWorkload", "nodesToScore"};

bool IsSchedulerKey(absl::string_view key) {
  for (absl::string_view k : kSchedulerKeys) {
    if (k == key) return true;
  }
  return false;
}

using Extensions = absl::Span<const ConfigExtension>;

// Whether a backend owns `key` of `section`.
bool Owned(Extensions extensions, absl::string_view section,
           absl::string_view key) {
  for (const ConfigExtension& extension : extensions) {
    const std::vector<std::string>& keys = section == kNvidiaSection
                                               ? extension.nvidia_keys
                                               : extension.scheduler_keys;
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) return true;
  }
  return false;
}

absl::Status Prefixed(absl::string_view prefix, const absl::Status& status) {
  return absl::Status(status.code(),
                      absl::StrCat(prefix, ": ", status.message()));
}

absl::StatusOr<std::string> ReadPolicy(const json& value,
                                       absl::string_view path) {
  DS_ASSIGN_OR_RETURN(std::string text,
                      internal::ReadString(value, path, /*allow_empty=*/false));
  return ParsePolicyName(text, path);
}

absl::StatusOr<Dialect> ReadDialect(const json& value, absl::string_view path) {
  DS_ASSIGN_OR_RETURN(std::string text,
                      internal::ReadString(value, path, /*allow_empty=*/false));
  for (Dialect d : {Dialect::kHami, Dialect::kVolcano}) {
    if (text == DialectName(d)) return d;
  }
  return PathError(path, absl::StrCat(DescribeValue(value),
                                      " is not a dialect (want hami or "
                                      "volcano)"));
}

absl::StatusOr<std::vector<SharingMode>> ReadModes(const json& value,
                                                   absl::string_view path) {
  DS_RETURN_IF_ERROR(internal::RequireList(value, path));
  if (value.empty()) {
    return PathError(path, "is empty (enable at least one sharing mode)");
  }
  std::vector<SharingMode> modes;
  for (size_t i = 0; i < value.size(); ++i) {
    std::string item_path = IndexPath(path, i);
    DS_ASSIGN_OR_RETURN(std::string text,
                        internal::ReadString(value[i], item_path,
                                             /*allow_empty=*/false));
    DS_ASSIGN_OR_RETURN(SharingMode mode, ParseSharingMode(text, item_path));
    for (SharingMode earlier : modes) {
      if (earlier == mode) {
        return PathError(item_path,
                         absl::StrCat("duplicate mode \"", text, "\""));
      }
    }
    modes.push_back(mode);
  }
  return modes;
}

// One entry of typicalWorkload: {cpuMilli, gpuCount, gpuMilli, models,
// share}; gpuMilli is per GPU (1000 = a whole one).
absl::StatusOr<WorkloadShape> ReadWorkloadShape(const json& value,
                                                absl::string_view path) {
  DS_RETURN_IF_ERROR(internal::RequireMapping(value, path));
  DS_RETURN_IF_ERROR(internal::CheckKnownKeys(
      value, path, {"cpuMilli", "gpuCount", "gpuMilli", "models", "share"}));
  WorkloadShape shape;
  if (!value.contains("share")) {
    return PathError(KeyPath(path, "share"), "is missing");
  }
  const json& share = value["share"];
  if (!share.is_number() || !(share.get<double>() > 0) ||
      share.get<double>() > 1) {
    return PathError(
        KeyPath(path, "share"),
        absl::StrCat(DescribeValue(share), " is not a number in (0, 1]"));
  }
  shape.share = share.get<double>();
  if (value.contains("cpuMilli")) {
    DS_ASSIGN_OR_RETURN(
        shape.cpu_milli,
        internal::ReadInteger(value["cpuMilli"], KeyPath(path, "cpuMilli"), 0,
                              int64_t{1} << 40));
  }
  if (value.contains("gpuCount")) {
    DS_ASSIGN_OR_RETURN(
        const int64_t count,
        internal::ReadInteger(value["gpuCount"], KeyPath(path, "gpuCount"), 0,
                              1024));
    shape.gpu_count = static_cast<int32_t>(count);
  }
  if (value.contains("gpuMilli")) {
    DS_ASSIGN_OR_RETURN(
        const int64_t milli,
        internal::ReadInteger(value["gpuMilli"], KeyPath(path, "gpuMilli"), 0,
                              1000));
    shape.gpu_milli = static_cast<int32_t>(milli);
  }
  if ((shape.gpu_count == 0) != (shape.gpu_milli == 0)) {
    return PathError(path,
                     absl::StrFormat("gpuCount %d with gpuMilli %d: both are "
                                     "0 (a CPU-only pod) or neither is",
                                     shape.gpu_count, shape.gpu_milli));
  }
  if (value.contains("models")) {
    DS_ASSIGN_OR_RETURN(
        shape.models,
        internal::ReadStringList(value["models"], KeyPath(path, "models")));
  }
  return shape;
}

absl::StatusOr<std::vector<WorkloadShape>> ReadTypicalWorkload(
    const json& value, absl::string_view path) {
  DS_RETURN_IF_ERROR(internal::RequireList(value, path));
  std::vector<WorkloadShape> shapes;
  double total = 0;
  for (size_t i = 0; i < value.size(); ++i) {
    DS_ASSIGN_OR_RETURN(
        WorkloadShape shape,
        ReadWorkloadShape(value[i], internal::IndexPath(path, i)));
    total += shape.share;
    shapes.push_back(std::move(shape));
  }
  if (total > 1.0 + 1e-6) {
    return PathError(path,
                     absl::StrFormat("shares sum to %.4f, more than 1", total));
  }
  // Shares that sum to less than 1 are read as relative weights.
  for (WorkloadShape& shape : shapes) shape.share /= total > 0 ? total : 1;
  return shapes;
}

absl::Status ParseSchedulerSection(const json& section, absl::string_view path,
                                   Extensions extensions, Config& whole) {
  if (section.is_null()) return absl::OkStatus();
  DS_RETURN_IF_ERROR(internal::RequireMapping(section, path));
  SchedulerConfig& config = whole.scheduler;
  for (auto it = section.begin(); it != section.end(); ++it) {
    std::string key_path = KeyPath(path, it.key());
    if (Owned(extensions, kSchedulerSection, it.key())) {
      if (!it->is_null()) whole.extensions[kSchedulerSection][it.key()] = *it;
      continue;
    }
    if (!IsSchedulerKey(it.key())) return PathError(key_path, "unknown key");
    if (it->is_null()) continue;
    if (it.key() == "nodePolicy") {
      DS_ASSIGN_OR_RETURN(config.node_policy, ReadPolicy(*it, key_path));
    } else if (it.key() == "gpuPolicy") {
      DS_ASSIGN_OR_RETURN(config.gpu_policy, ReadPolicy(*it, key_path));
    } else if (it.key() == "dialect") {
      DS_ASSIGN_OR_RETURN(config.default_dialect, ReadDialect(*it, key_path));
    } else if (it.key() == "typicalWorkload") {
      DS_ASSIGN_OR_RETURN(config.typical_workload,
                          ReadTypicalWorkload(*it, key_path));
    } else if (it.key() == "nodesToScore") {
      DS_ASSIGN_OR_RETURN(config.nodes_to_score,
                          internal::ReadInteger(*it, key_path, 0, 1 << 30));
    } else {
      DS_ASSIGN_OR_RETURN(config.enabled_modes, ReadModes(*it, key_path));
    }
  }
  return absl::OkStatus();
}

// The top level of our file, or of a device config map body: `nvidia:`,
// optionally `scheduler:`, and other vendors' sections of a HAMi config map.
absl::Status ParseBody(const json& root, bool allow_scheduler,
                       Extensions extensions, Config& config) {
  if (root.is_null()) return absl::OkStatus();
  if (!root.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "configuration: ", DescribeValue(root),
        " is not a mapping (want nvidia: and scheduler: sections)"));
  }
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string& key = it.key();
    if (key == kNvidiaSection) {
      DS_RETURN_IF_ERROR(internal::ParseNvidiaSection(
          *it, kNvidiaSection,
          [&](absl::string_view owned) {
            return Owned(extensions, kNvidiaSection, owned);
          },
          config));
    } else if (key == kSchedulerSection) {
      if (!allow_scheduler) {
        return PathError(key,
                         "is deviceshare's own section and does not belong in "
                         "a device config map body (put it in "
                         "deviceshare.yaml)");
      }
      DS_RETURN_IF_ERROR(
          ParseSchedulerSection(*it, kSchedulerSection, extensions, config));
    } else if (internal::IsNvidiaSectionKey(key) ||
               Owned(extensions, kNvidiaSection, key)) {
      // A body pasted without its `nvidia:` line would otherwise read as
      // a pile of unknown vendor sections and silently yield defaults.
      return PathError(key,
                       "is an nvidia key at the top level; indent it "
                       "under nvidia:");
    } else if (IsSchedulerKey(key) ||
               Owned(extensions, kSchedulerSection, key)) {
      return PathError(key,
                       "is a scheduler key at the top level; indent it "
                       "under scheduler:");
    } else {
      config.notices.push_back(absl::StrFormat(
          "section `%s` belongs to another vendor; deviceshare does not read "
          "it",
          key));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<json> ParseEmbedded(const json& data, const char* key) {
  std::string path = absl::StrFormat("data[\"%s\"]", key);
  DS_ASSIGN_OR_RETURN(std::string text,
                      internal::ReadString(data[key], path,
                                           /*allow_empty=*/true));
  absl::StatusOr<json> doc = ParseJsonOrYaml(text);
  if (!doc.ok()) return Prefixed(key, doc.status());
  return doc;
}

bool HasSection(const json& doc, const char* section) {
  return doc.is_object() && doc.contains(section) && !doc[section].is_null();
}

// A Kubernetes ConfigMap object holding the upstream device config map body
// and/or deviceshare's own file.
absl::Status ParseConfigMap(const json& root, Extensions extensions,
                            Config& config) {
  if (!root.contains("data") || root["data"].is_null()) {
    return PathError(
        "data", absl::StrFormat("missing; a ConfigMap needs data[\"%s\"] or "
                                "data[\"%s\"]",
                                kDeviceConfigKey, kOwnConfigKey));
  }
  const json& data = root["data"];
  DS_RETURN_IF_ERROR(internal::RequireMapping(data, "data"));
  json device_doc;
  json own_doc;
  bool found = false;
  for (auto it = data.begin(); it != data.end(); ++it) {
    if (it.key() == kDeviceConfigKey) {
      DS_ASSIGN_OR_RETURN(device_doc, ParseEmbedded(data, kDeviceConfigKey));
      found = true;
    } else if (it.key() == kOwnConfigKey) {
      DS_ASSIGN_OR_RETURN(own_doc, ParseEmbedded(data, kOwnConfigKey));
      found = true;
    } else {
      config.notices.push_back(absl::StrFormat(
          "ConfigMap data key `%s` is not read by deviceshare", it.key()));
    }
  }
  if (!found) {
    return PathError("data", absl::StrFormat("has neither \"%s\" nor \"%s\"",
                                             kDeviceConfigKey, kOwnConfigKey));
  }
  if (HasSection(device_doc, kNvidiaSection) &&
      HasSection(own_doc, kNvidiaSection)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("both %s and %s have an nvidia: section; keep one",
                        kDeviceConfigKey, kOwnConfigKey));
  }
  absl::Status status =
      ParseBody(device_doc, /*allow_scheduler=*/false, extensions, config);
  if (!status.ok()) return Prefixed(kDeviceConfigKey, status);
  status = ParseBody(own_doc, /*allow_scheduler=*/true, extensions, config);
  if (!status.ok()) return Prefixed(kOwnConfigKey, status);
  return absl::OkStatus();
}

// Tells a ConfigMap object from a plain body by its `kind`.
absl::StatusOr<bool> IsConfigMap(const json& root) {
  if (!root.is_object() || !root.contains("kind")) return false;
  const json& kind = root["kind"];
  if (kind.is_string() && kind.get_ref<const std::string&>() == "ConfigMap") {
    return true;
  }
  return PathError("kind",
                   absl::StrCat(DescribeValue(kind), " is not a ConfigMap"));
}

absl::StatusOr<Config> ParseConfigRoot(const json& root, bool allow_scheduler,
                                       Extensions extensions) {
  Config config;
  DS_ASSIGN_OR_RETURN(bool config_map, IsConfigMap(root));
  if (config_map) {
    DS_RETURN_IF_ERROR(ParseConfigMap(root, extensions, config));
  } else {
    DS_RETURN_IF_ERROR(ParseBody(root, allow_scheduler, extensions, config));
  }
  if (!allow_scheduler) return config;
  for (const ConfigExtension& extension : extensions) {
    if (extension.check) DS_RETURN_IF_ERROR(extension.check(config));
  }
  return config;
}

}  // namespace

absl::StatusOr<Config> ParseConfigYaml(
    absl::string_view yaml_text, absl::Span<const ConfigExtension> extensions) {
  DS_ASSIGN_OR_RETURN(json root, ParseJsonOrYaml(yaml_text));
  return ParseConfigRoot(root, /*allow_scheduler=*/true, extensions);
}

absl::StatusOr<DeviceConfig> ParseDeviceConfigYaml(
    absl::string_view yaml_text, absl::Span<const ConfigExtension> extensions) {
  DS_ASSIGN_OR_RETURN(json root, ParseJsonOrYaml(yaml_text));
  DS_ASSIGN_OR_RETURN(
      Config config,
      ParseConfigRoot(root, /*allow_scheduler=*/false, extensions));
  return std::move(config.device);
}

}  // namespace deviceshare
