#include "deviceshare/input/json_object_reader.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "deviceshare/json_text.h"

namespace deviceshare::input {
namespace {

using Json = nlohmann::json;

absl::Status WrongType(absl::string_view path, const Json& value,
                       absl::string_view want) {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: %s is a%s %s, want %s", path, JsonText(value),
                      value.is_array() || value.is_object() ? "n" : "",
                      value.type_name(), want));
}

}  // namespace

absl::StatusOr<JsonObjectReader> JsonObjectReader::Create(const Json& value,
                                                          std::string path) {
  if (!value.is_object()) {
    return WrongType(path.empty() ? "(top level)" : path, value, "a mapping");
  }
  return JsonObjectReader(&value, std::move(path));
}

std::string JsonObjectReader::PathOf(absl::string_view key) const {
  return path_.empty() ? std::string(key) : absl::StrCat(path_, ".", key);
}

const Json* JsonObjectReader::Find(absl::string_view key) const {
  auto it = object_->find(std::string(key));
  if (it == object_->end() || it->is_null()) return nullptr;
  return &*it;
}

absl::StatusOr<std::optional<int64_t>> JsonObjectReader::Int(
    absl::string_view key, int64_t min, int64_t max) const {
  const Json* value = Find(key);
  if (value == nullptr) return std::nullopt;
  int64_t number = 0;
  if (value->is_number_unsigned()) {
    uint64_t u = value->get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: %d is too large", PathOf(key), u));
    }
    number = static_cast<int64_t>(u);
  } else if (value->is_number_integer()) {
    number = value->get<int64_t>();
  } else {
    return WrongType(PathOf(key), *value, "an integer");
  }
  if (number < min || number > max) {
    return absl::InvalidArgumentError(
        max == INT64_MAX ? absl::StrFormat("%s: %d is below the minimum %d",
                                           PathOf(key), number, min)
                         : absl::StrFormat("%s: %d is outside [%d, %d]",
                                           PathOf(key), number, min, max));
  }
  return number;
}

absl::StatusOr<std::optional<std::string>> JsonObjectReader::String(
    absl::string_view key) const {
  const Json* value = Find(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_string()) return WrongType(PathOf(key), *value, "a string");
  return value->get<std::string>();
}

absl::StatusOr<std::optional<bool>> JsonObjectReader::Bool(
    absl::string_view key) const {
  const Json* value = Find(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_boolean()) {
    return WrongType(PathOf(key), *value, "true or false");
  }
  return value->get<bool>();
}

absl::StatusOr<const Json*> JsonObjectReader::Array(
    absl::string_view key) const {
  const Json* value = Find(key);
  if (value == nullptr) return nullptr;
  if (!value->is_array()) return WrongType(PathOf(key), *value, "a list");
  return value;
}

absl::Status JsonObjectReader::OnlyKeys(
    std::initializer_list<absl::string_view> known) const {
  for (const auto& [key, value] : object_->items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: unknown key (known: %s)", PathOf(key),
                          absl::StrJoin(known, ", ")));
    }
  }
  return absl::OkStatus();
}

}  // namespace deviceshare::input
