// DecodeExtenderArgs, its general field reader (extender_args_fields.h)
// and the NodeList helpers of extender_wire.h.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deviceshare/extender/extender_wire.h"
#include "deviceshare/status_macros.h"
#include "extender_args_fields.h"
#include "go_object.h"
#include "json_text.h"

namespace deviceshare::extender {
namespace {

using Json = nlohmann::json;
using internal::DescribeValue;
using internal::GoFieldKind;
using internal::GoObject;

absl::Status WrongShape(absl::string_view path, const Json& value,
                        absl::string_view want) {
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": ", DescribeValue(value), " is not ", want));
}

absl::Status CheckCount(absl::string_view path, size_t count) {
  if (count <= kMaxNodes) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      path, ": ", count, " entries, more than the ", kMaxNodes, " allowed"));
}

// The metadata.name of a Kubernetes object, or nullptr when it has none.
const std::string* ObjectName(const Json& object) {
  if (!object.is_object()) return nullptr;
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return nullptr;
  auto name = metadata->find("name");
  if (name == metadata->end() || !name->is_string()) return nullptr;
  return &name->get_ref<const std::string&>();
}

// `object` (at `path`) must be an object with a non-empty metadata.name.
absl::Status CheckNamedObject(const Json& object, absl::string_view path) {
  if (!object.is_object()) return WrongShape(path, object, "an object");
  auto metadata = object.find("metadata");
  if (metadata == object.end() || metadata->is_null()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ".metadata: missing"));
  }
  if (!metadata->is_object()) {
    return WrongShape(absl::StrCat(path, ".metadata"), *metadata, "an object");
  }
  const std::string name_path = absl::StrCat(path, ".metadata.name");
  auto name = metadata->find("name");
  if (name == metadata->end() || name->is_null()) {
    return absl::InvalidArgumentError(absl::StrCat(name_path, ": missing"));
  }
  if (!name->is_string()) return WrongShape(name_path, *name, "a string");
  if (name->get_ref<const std::string&>().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(name_path, ": is empty"));
  }
  return absl::OkStatus();
}

absl::StatusOr<NameList> DecodeNodeNames(const Json& names) {
  constexpr absl::string_view kPath = "ExtenderArgs.NodeNames";
  if (!names.is_array()) return WrongShape(kPath, names, "an array");
  DS_RETURN_IF_ERROR(CheckCount(kPath, names.size()));
  NameList out;
  for (size_t i = 0; i < names.size(); ++i) {
    const Json& name = names[i];
    if (!name.is_string()) {
      return WrongShape(absl::StrCat(kPath, "[", i, "]"), name, "a string");
    }
    out.push_back(name.get_ref<const std::string&>());
  }
  return out;
}

absl::Status CheckNodeList(const Json& list) {
  constexpr absl::string_view kPath = "ExtenderArgs.Nodes";
  if (!list.is_object()) return WrongShape(kPath, list, "an object");
  auto items = list.find("items");
  if (items == list.end() || items->is_null()) return absl::OkStatus();
  const std::string items_path = absl::StrCat(kPath, ".items");
  if (!items->is_array()) return WrongShape(items_path, *items, "an array");
  DS_RETURN_IF_ERROR(CheckCount(items_path, items->size()));
  for (size_t i = 0; i < items->size(); ++i) {
    DS_RETURN_IF_ERROR(
        CheckNamedObject((*items)[i], absl::StrCat(items_path, "[", i, "]")));
  }
  return absl::OkStatus();
}

// The items of a NodeList, or nullptr when it has none.
const Json* Items(const Json& node_list) {
  if (!node_list.is_object()) return nullptr;
  auto items = node_list.find("items");
  return items != node_list.end() && items->is_array() ? &*items : nullptr;
}

}  // namespace

namespace internal {

absl::StatusOr<ExtenderArgs> ReadExtenderArgsFields(absl::string_view body) {
  DS_ASSIGN_OR_RETURN(GoObject object, GoObject::Parse(body, "ExtenderArgs"));
  ExtenderArgs args;
  if (Json* pod = object.Field("Pod", GoFieldKind::kPointer)) {
    args.pod = std::move(*pod);
  }
  if (Json* names = object.Field("NodeNames", GoFieldKind::kPointer)) {
    DS_ASSIGN_OR_RETURN(args.node_names, DecodeNodeNames(*names));
  }
  if (Json* nodes = object.Field("Nodes", GoFieldKind::kPointer)) {
    args.nodes = std::move(*nodes);
  }
  return args;
}

}  // namespace internal

absl::StatusOr<ExtenderArgs> DecodeExtenderArgs(absl::string_view body) {
  std::optional<ExtenderArgs> fields = internal::ScanPlainExtenderArgs(body);
  if (!fields.has_value()) {
    DS_ASSIGN_OR_RETURN(fields, internal::ReadExtenderArgsFields(body));
  }
  ExtenderArgs& args = *fields;
  if (args.pod.is_null()) {
    return absl::InvalidArgumentError("ExtenderArgs.Pod: missing or null");
  }
  DS_RETURN_IF_ERROR(CheckNamedObject(args.pod, "ExtenderArgs.Pod"));
  if (args.node_names.has_value()) {
    DS_RETURN_IF_ERROR(
        CheckCount("ExtenderArgs.NodeNames", args.node_names->size()));
  }
  if (args.nodes.has_value()) DS_RETURN_IF_ERROR(CheckNodeList(*args.nodes));
  if (!args.node_names.has_value() && !args.nodes.has_value()) {
    return absl::InvalidArgumentError(
        "ExtenderArgs: neither NodeNames nor Nodes is set");
  }
  return std::move(args);
}

NameList ExtenderArgs::NodeNamesOrFromList() const {
  if (node_names.has_value()) return *node_names;
  NameList names;
  const Json* items = nodes.has_value() ? Items(*nodes) : nullptr;
  if (items == nullptr) return names;
  for (const Json& item : *items) {
    if (const std::string* name = ObjectName(item)) names.push_back(*name);
  }
  return names;
}

Json NodeListWith(const Json& node_list, absl::Span<const std::string> names) {
  Json out = Json::object();
  if (node_list.is_object()) {
    for (const auto& [key, value] : node_list.items()) {
      if (key != "items") out[key] = value;
    }
  }
  Json& kept = out["items"] = Json::array();
  const Json* items = Items(node_list);
  if (items == nullptr) return out;
  const absl::flat_hash_set<absl::string_view> wanted(names.begin(),
                                                      names.end());
  for (const Json& item : *items) {
    const std::string* name = ObjectName(item);
    if (name != nullptr && wanted.contains(*name)) kept.push_back(item);
  }
  return out;
}

}  // namespace deviceshare::extender
