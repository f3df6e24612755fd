// DecodeBindingArgs of extender_wire.h.
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deviceshare/extender/extender_wire.h"
#include "deviceshare/status_macros.h"
#include "go_object.h"
#include "json_text.h"

namespace deviceshare::extender {
namespace {

using internal::GoFieldKind;
using internal::GoObject;

// Field `name` as a string: "" when absent or null; an error when it is
// not a string, or (`required`) when it is empty.
absl::StatusOr<std::string> StringField(GoObject& object,
                                        absl::string_view name, bool required) {
  const nlohmann::json* value = object.Field(name, GoFieldKind::kValue);
  const std::string path = absl::StrCat("ExtenderBindingArgs.", name);
  if (value == nullptr) {
    if (!required) return std::string();
    return absl::InvalidArgumentError(absl::StrCat(path, ": missing"));
  }
  if (!value->is_string()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": ", internal::DescribeValue(*value), " is not a string"));
  }
  std::string text = value->get<std::string>();
  if (required && text.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": is empty"));
  }
  return text;
}

}  // namespace

absl::StatusOr<BindingArgs> DecodeBindingArgs(absl::string_view body) {
  DS_ASSIGN_OR_RETURN(GoObject object,
                      GoObject::Parse(body, "ExtenderBindingArgs"));
  BindingArgs args;
  DS_ASSIGN_OR_RETURN(args.pod_name, StringField(object, "PodName", true));
  DS_ASSIGN_OR_RETURN(args.pod_namespace,
                      StringField(object, "PodNamespace", true));
  DS_ASSIGN_OR_RETURN(args.pod_uid, StringField(object, "PodUID", false));
  DS_ASSIGN_OR_RETURN(args.node, StringField(object, "Node", true));
  return args;
}

}  // namespace deviceshare::extender
