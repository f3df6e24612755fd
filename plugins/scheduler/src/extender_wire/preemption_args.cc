// DecodePreemptionArgs and EncodePreemptionResult of extender_wire.h.
//
// The top-level fields are read as GoObject reads them (go_object.h). The
// nested Go structs (Victims, MetaVictims, MetaPod) fold their keys too;
// the parsed tree no longer knows which of two folding keys came last, so
// a nested object where several distinct keys fold to one field is refused
// (kube-scheduler writes each field once, by its Go name). A preempt call
// is rare (once per failed scheduling cycle of a pod that may preempt) and
// small, so the general parser is all it needs.
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deviceshare/extender/extender_wire.h"
#include "deviceshare/status_macros.h"
#include "go_object.h"
#include "json_text.h"

namespace deviceshare::extender {
namespace {

using Json = nlohmann::json;
using internal::GoFieldKind;
using internal::GoFoldEquals;
using internal::GoObject;

constexpr absl::string_view kType = "ExtenderPreemptionArgs";

absl::Status WrongShape(absl::string_view path, const Json& value,
                        absl::string_view want) {
  return absl::InvalidArgumentError(absl::StrCat(
      path, ": ", internal::DescribeValue(value), " is not ", want));
}

// The value Go decodes into field `name` of the nested struct `object` (at
// `path`); nullptr when no key folds to it or its key holds null.
absl::StatusOr<const Json*> GoField(const Json& object, absl::string_view name,
                                    absl::string_view path) {
  const Json* found = nullptr;
  const std::string* found_key = nullptr;
  for (const auto& [key, value] : object.items()) {
    if (!GoFoldEquals(key, name)) continue;
    if (found_key != nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": keys \"", *found_key, "\" and \"", key,
                       "\" both name field ", name, "; send it once"));
    }
    found_key = &key;
    found = &value;
  }
  return found != nullptr && found->is_null() ? nullptr : found;
}

// `[` + the key as a JSON string + `]`, for paths into a map.
std::string MapIndex(absl::string_view key) {
  std::string out = "[";
  internal::AppendJsonString(key, &out);
  out.push_back(']');
  return out;
}

// A non-empty string at `path`.
absl::StatusOr<std::string> NonEmptyString(const Json* value,
                                           absl::string_view path) {
  if (value == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": missing"));
  }
  if (!value->is_string()) return WrongShape(path, *value, "a string");
  if (value->get_ref<const std::string&>().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": is empty"));
  }
  return value->get<std::string>();
}

// A Kubernetes Pod (json tags: keys matched exactly) with a non-empty
// metadata.name; returns metadata.uid's value when `uid` is wanted.
absl::StatusOr<std::string> CheckPod(const Json& pod, absl::string_view path,
                                     bool want_uid) {
  if (!pod.is_object()) return WrongShape(path, pod, "an object");
  auto metadata = pod.find("metadata");
  if (metadata == pod.end() || metadata->is_null()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ".metadata: missing"));
  }
  if (!metadata->is_object()) {
    return WrongShape(absl::StrCat(path, ".metadata"), *metadata, "an object");
  }
  auto member = [&](const char* key) -> const Json* {
    auto it = metadata->find(key);
    return it == metadata->end() || it->is_null() ? nullptr : &*it;
  };
  DS_RETURN_IF_ERROR(
      NonEmptyString(member("name"), absl::StrCat(path, ".metadata.name"))
          .status());
  if (!want_uid) return std::string();
  return NonEmptyString(member("uid"), absl::StrCat(path, ".metadata.uid"));
}

absl::StatusOr<int64_t> Int64Field(const Json& object, absl::string_view name,
                                   absl::string_view path) {
  DS_ASSIGN_OR_RETURN(const Json* value, GoField(object, name, path));
  if (value == nullptr) return 0;
  const std::string field_path = absl::StrCat(path, ".", name);
  if (value->is_number_unsigned()) {
    if (value->get<uint64_t>() >
        static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return WrongShape(field_path, *value, "an int64");
    }
    return static_cast<int64_t>(value->get<uint64_t>());
  }
  if (!value->is_number_integer()) {
    return WrongShape(field_path, *value, "an int64");
  }
  return value->get<int64_t>();
}

// One MetaVictims (`meta`: {Pods:[{UID}], NumPDBViolations}) or Victims
// ({Pods:[Pod], NumPDBViolations}) value at `path`.
absl::StatusOr<MetaVictims> DecodeVictims(const Json& victims,
                                          absl::string_view path, bool meta) {
  MetaVictims out;
  if (victims.is_null()) return out;
  if (!victims.is_object()) return WrongShape(path, victims, "an object");
  DS_ASSIGN_OR_RETURN(out.num_pdb_violations,
                      Int64Field(victims, "NumPDBViolations", path));
  DS_ASSIGN_OR_RETURN(const Json* pods, GoField(victims, "Pods", path));
  if (pods == nullptr) return out;
  const std::string pods_path = absl::StrCat(path, ".Pods");
  if (!pods->is_array()) return WrongShape(pods_path, *pods, "an array");
  for (size_t i = 0; i < pods->size(); ++i) {
    const Json& pod = (*pods)[i];
    const std::string pod_path = absl::StrCat(pods_path, "[", i, "]");
    if (!meta) {
      DS_ASSIGN_OR_RETURN(std::string uid, CheckPod(pod, pod_path, true));
      out.pod_uids.push_back(std::move(uid));
      continue;
    }
    if (!pod.is_object()) return WrongShape(pod_path, pod, "an object");
    DS_ASSIGN_OR_RETURN(const Json* uid_value, GoField(pod, "UID", pod_path));
    DS_ASSIGN_OR_RETURN(
        std::string uid,
        NonEmptyString(uid_value, absl::StrCat(pod_path, ".UID")));
    out.pod_uids.push_back(std::move(uid));
  }
  return out;
}

// NodeNameToMetaVictims (`meta`) or NodeNameToVictims: node -> victims.
absl::Status DecodeNodeMap(const Json& map, absl::string_view field, bool meta,
                           std::map<std::string, MetaVictims>& out) {
  const std::string path = absl::StrCat(kType, ".", field);
  if (!map.is_object()) return WrongShape(path, map, "an object");
  if (map.size() > kMaxNodes) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", map.size(),
                                                   " entries, more than the ",
                                                   kMaxNodes, " allowed"));
  }
  for (const auto& [node, victims] : map.items()) {
    const std::string node_path = absl::StrCat(path, MapIndex(node));
    if (node.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(node_path, ": empty node name"));
    }
    DS_ASSIGN_OR_RETURN(out[node], DecodeVictims(victims, node_path, meta));
  }
  return absl::OkStatus();
}

void AppendVictims(const MetaVictims& victims, std::string* out) {
  out->append(R"({"Pods":[)");
  for (size_t i = 0; i < victims.pod_uids.size(); ++i) {
    if (i > 0) out->push_back(',');
    out->append(R"({"UID":)");
    internal::AppendJsonString(victims.pod_uids[i], out);
    out->push_back('}');
  }
  absl::StrAppend(out, R"(],"NumPDBViolations":)", victims.num_pdb_violations,
                  "}");
}

}  // namespace

absl::StatusOr<PreemptionArgs> DecodePreemptionArgs(absl::string_view body) {
  DS_ASSIGN_OR_RETURN(GoObject object, GoObject::Parse(body, kType));
  PreemptionArgs args;
  Json* pod = object.Field("Pod", GoFieldKind::kPointer);
  if (pod == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(kType, ".Pod: missing or null"));
  }
  DS_RETURN_IF_ERROR(
      CheckPod(*pod, absl::StrCat(kType, ".Pod"), false).status());
  args.pod = std::move(*pod);
  if (const Json* meta =
          object.Field("NodeNameToMetaVictims", GoFieldKind::kPointer)) {
    DS_RETURN_IF_ERROR(
        DecodeNodeMap(*meta, "NodeNameToMetaVictims", true, args.node_victims));
  } else if (const Json* full =
                 object.Field("NodeNameToVictims", GoFieldKind::kPointer)) {
    DS_RETURN_IF_ERROR(
        DecodeNodeMap(*full, "NodeNameToVictims", false, args.node_victims));
  }
  return args;
}

std::string EncodePreemptionResult(const PreemptionResult& result) {
  std::string out = R"({"NodeNameToMetaVictims":{)";
  bool first = true;
  for (const auto& [node, victims] : result.node_victims) {
    if (!first) out.push_back(',');
    first = false;
    internal::AppendJsonString(node, &out);
    out.push_back(':');
    AppendVictims(victims, &out);
  }
  out.append("}}");
  return out;
}

}  // namespace deviceshare::extender
