#include "dra/json_fields.h"

#include "absl/strings/str_cat.h"
#include "deviceshare/json_text.h"

namespace deviceshare::dra::json_fields {

using nlohmann::json;

absl::Status Invalid(absl::string_view path, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", why));
}

absl::Status NotA(absl::string_view path, const json& value,
                  absl::string_view what) {
  return Invalid(path, absl::StrCat(JsonText(value), " is not ", what));
}

std::string Join(const std::string& path, const char* key) {
  return path.empty() ? std::string(key) : absl::StrCat(path, ".", key);
}

const json* Member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

absl::StatusOr<std::string> StringField(const json& object,
                                        const std::string& path,
                                        const char* key, bool required) {
  const json* value = Member(object, key);
  const std::string at = Join(path, key);
  if (value == nullptr) {
    if (required) return Invalid(at, "missing");
    return std::string();
  }
  if (!value->is_string()) return NotA(at, *value, "a string");
  if (required && value->get_ref<const std::string&>().empty()) {
    return Invalid(at, "empty");
  }
  return value->get<std::string>();
}

absl::StatusOr<const json*> ObjectField(const json& object,
                                        const std::string& path,
                                        const char* key, bool required) {
  const json* value = Member(object, key);
  const std::string at = Join(path, key);
  if (value == nullptr) {
    if (required) return Invalid(at, "missing");
    return nullptr;
  }
  if (!value->is_object()) return NotA(at, *value, "an object");
  return value;
}

absl::StatusOr<const json*> ArrayField(const json& object,
                                       const std::string& path, const char* key,
                                       size_t max, absl::string_view what) {
  const json* value = Member(object, key);
  if (value == nullptr) return nullptr;
  const std::string at = Join(path, key);
  if (!value->is_array()) return NotA(at, *value, "an array");
  if (value->size() > max) {
    return Invalid(at,
                   absl::StrCat(value->size(), " ", what, ", more than ", max));
  }
  return value;
}

absl::StatusOr<int64_t> Int64(const json& value, const std::string& path) {
  if (value.is_number_unsigned()) {
    if (value.get<uint64_t>() >
        static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return NotA(path, value, "an int64");
    }
    return static_cast<int64_t>(value.get<uint64_t>());
  }
  if (value.is_number_integer()) return value.get<int64_t>();
  return NotA(path, value, "an integer");
}

}  // namespace deviceshare::dra::json_fields
