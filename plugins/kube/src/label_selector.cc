#include "deviceshare/kube/label_selector.h"

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deviceshare/json_text.h"

namespace deviceshare::kube {
namespace {

using nlohmann::json;

// The label's value; nullopt when the object has no such label.
std::optional<std::string> LabelOf(const json& labels, const std::string& key) {
  if (!labels.is_object()) return std::nullopt;
  auto it = labels.find(key);
  if (it == labels.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

absl::StatusOr<bool> ExpressionMatches(const json& expression, size_t index,
                                       const json& labels) {
  const std::string where = absl::StrCat("matchExpressions[", index, "]");
  if (!expression.is_object() || !expression.value("key", json()).is_string() ||
      !expression.value("operator", json()).is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": needs a string key and operator"));
  }
  const std::string key = expression["key"].get<std::string>();
  const std::string op = expression["operator"].get<std::string>();
  const std::optional<std::string> value = LabelOf(labels, key);
  if (op == "Exists") return value.has_value();
  if (op == "DoesNotExist") return !value.has_value();
  if (op != "In" && op != "NotIn") {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ".operator: \"", op,
                     "\" is not one of In, NotIn, Exists, DoesNotExist"));
  }
  const json values = expression.value("values", json());
  if (!values.is_array() || values.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ".values: ", op, " needs a non-empty list"));
  }
  bool listed = false;
  for (const json& v : values) {
    if (!v.is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ".values: ", JsonText(v), " is not a string"));
    }
    listed |= value.has_value() && v.get<std::string>() == *value;
  }
  return op == "In" ? listed : !listed;
}

}  // namespace

absl::StatusOr<bool> SelectorMatches(const json& selector, const json& labels) {
  if (selector.is_null()) return false;
  if (!selector.is_object()) {
    return absl::InvalidArgumentError("selector: is not an object");
  }
  const json match_labels = selector.value("matchLabels", json());
  if (!match_labels.is_null() && !match_labels.is_object()) {
    return absl::InvalidArgumentError("matchLabels: is not an object");
  }
  bool matches = true;
  if (match_labels.is_object()) {
    for (const auto& [key, want] : match_labels.items()) {
      if (!want.is_string()) {
        return absl::InvalidArgumentError(
            absl::StrCat("matchLabels.", key, ": is not a string"));
      }
      matches &= LabelOf(labels, key) == want.get<std::string>();
    }
  }
  const json expressions = selector.value("matchExpressions", json());
  if (expressions.is_null()) return matches;
  if (!expressions.is_array()) {
    return absl::InvalidArgumentError("matchExpressions: is not a list");
  }
  for (size_t i = 0; i < expressions.size(); ++i) {
    absl::StatusOr<bool> one = ExpressionMatches(expressions[i], i, labels);
    if (!one.ok()) return one.status();
    matches &= *one;
  }
  return matches;
}

}  // namespace deviceshare::kube
