#include "text_input.h"

#include <cstdint>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "c_status.h"
#include "deviceshare/codec/yaml_json.h"
#include "deviceshare/input/kube_objects.h"
#include "deviceshare/json_text.h"
#include "deviceshare/k8s/pod_parser.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::capi {
namespace {

using Json = nlohmann::json;

// An optional argument: NULL, "" or only blanks means "not given".
bool Absent(const char* text) {
  if (text == nullptr) return true;
  return absl::StripAsciiWhitespace(text).empty();
}

absl::StatusOr<std::vector<std::string>> StringList(const Json& list,
                                                    absl::string_view path) {
  if (!list.is_array()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: a %s, want a list of node names", path, list.type_name()));
  }
  std::vector<std::string> names;
  names.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s[%d]: a %s, want a node name", path, i, list[i].type_name()));
    }
    names.push_back(list[i].get<std::string>());
  }
  return names;
}

absl::Status ReadOption(const std::string& key, const Json& value,
                        ScheduleOptions& options) {
  const std::string path = absl::StrCat("options_json.", key);
  if (key == "candidates") {
    DS_ASSIGN_OR_RETURN(options.candidates, StringList(value, path));
  } else if (key == "max_explained_nodes") {
    const bool non_negative =
        value.is_number_unsigned() ||
        (value.is_number_integer() && value.get<int64_t>() >= 0);
    if (!non_negative) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %s, want a non-negative integer", path, JsonText(value)));
    }
    options.max_explained_nodes = value.get<uint64_t>();
  } else if (key == "count_reasons") {
    if (!value.is_boolean()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: %s, want true or false", path, JsonText(value)));
    }
    options.count_reasons = value.get<bool>();
  } else {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: unknown key (want candidates, max_explained_nodes, "
        "count_reasons)",
        path));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Json> ParseObject(absl::string_view text,
                                 absl::string_view argument) {
  absl::StatusOr<Json> parsed = ParseJsonOrYaml(text);
  if (!parsed.ok()) return Prefixed(argument, parsed.status());
  if (!parsed->is_object()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: a %s, want a Kubernetes object (a mapping)",
                        argument, parsed->type_name()));
  }
  return parsed;
}

absl::StatusOr<ParsedPod> ParsePod(absl::string_view text,
                                   const DeviceConfig& config) {
  ParsedPod pod;
  DS_ASSIGN_OR_RETURN(pod.object, ParseObject(text, "pod"));
  const std::string kind = input::KindOf(pod.object);
  if (!kind.empty() && kind != "Pod") {
    return absl::InvalidArgumentError(
        absl::StrFormat("pod: kind %s, want Pod", kind));
  }
  DS_ASSIGN_OR_RETURN(pod.request, ParsePodRequest(pod.object, config));
  return pod;
}

absl::StatusOr<Json> DocumentObjectsJson(absl::string_view text) {
  absl::StatusOr<std::vector<Json>> documents = ParseYamlDocuments(text);
  if (!documents.ok()) return Prefixed("text", documents.status());
  Json objects = Json::array();
  for (size_t d = 0; d < documents->size(); ++d) {
    Json& document = (*documents)[d];
    const std::string where = absl::StrCat("document ", d + 1);
    if (!document.is_object()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: a %s, want an object", where, document.type_name()));
    }
    // Any <X>List: a host may hand over whatever `kubectl get` printed.
    const std::string kind = input::KindOf(document);
    absl::string_view item_kind = kind;
    if (!absl::ConsumeSuffix(&item_kind, "List")) {
      objects.push_back(std::move(document));
      continue;
    }
    absl::StatusOr<std::vector<input::DocumentObject>> items =
        input::DocumentObjects(document, item_kind);
    if (!items.ok()) return Prefixed(where, items.status());
    for (const input::DocumentObject& item : *items) {
      if (!item.object->is_object()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: %sa %s, want an object", where, item.where,
                            item.object->type_name()));
      }
      objects.push_back(*item.object);
    }
  }
  return objects;
}

absl::StatusOr<std::vector<std::string>> ParseNodeNames(const char* text) {
  if (Absent(text)) return std::vector<std::string>();
  absl::StatusOr<Json> parsed = ParseJsonOrYaml(text);
  if (!parsed.ok()) return Prefixed("nodes_json", parsed.status());
  if (parsed->is_null()) return std::vector<std::string>();
  return StringList(*parsed, "nodes_json");
}

absl::StatusOr<ScheduleOptions> ParseScheduleOptions(const char* text) {
  ScheduleOptions options;
  if (Absent(text)) return options;
  absl::StatusOr<Json> parsed = ParseJsonOrYaml(text);
  if (!parsed.ok()) return Prefixed("options_json", parsed.status());
  if (parsed->is_null()) return options;
  if (!parsed->is_object()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "options_json: a %s, want an object", parsed->type_name()));
  }
  for (const auto& [key, value] : parsed->items()) {
    DS_RETURN_IF_ERROR(ReadOption(key, value, options));
  }
  return options;
}

}  // namespace deviceshare::capi
