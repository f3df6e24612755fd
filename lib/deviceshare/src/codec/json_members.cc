#include "codec/json_members.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deviceshare/json_text.h"

namespace deviceshare::wire {
namespace {

using Json = nlohmann::json;

absl::Status OutOfRange(absl::string_view where, absl::string_view field,
                        const Json& value, int64_t max) {
  return JsonFieldError(where, field, value,
                        absl::StrCat("is out of range (max ", max, ")"));
}

}  // namespace

// JSON values quote themselves, so the value is shown as JSON text.
absl::Status JsonFieldError(absl::string_view where, absl::string_view field,
                            const Json& value, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s field %s: %s %s", where, field, JsonText(value), why));
}

absl::Status MissingField(absl::string_view where, absl::string_view field,
                          absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat(where, " field ", field, ": is missing", why));
}

absl::StatusOr<int64_t> JsonIntValue(const Json& value, absl::string_view field,
                                     int64_t max, absl::string_view where,
                                     bool unknown_numa_is_zero) {
  if (value.is_number_float() && std::abs(value.get<double>()) >= 0x1p63) {
    // nlohmann reads integers beyond uint64 as doubles.
    return OutOfRange(where, field, value, max);
  }
  if (!value.is_number_integer()) {
    return JsonFieldError(where, field, value, "is not an integer");
  }
  if (value.is_number_unsigned()) {
    uint64_t n = value.get<uint64_t>();
    if (n > static_cast<uint64_t>(max)) {
      return OutOfRange(where, field, value, max);
    }
    return static_cast<int64_t>(n);
  }
  int64_t n = value.get<int64_t>();
  if (n == -1 && unknown_numa_is_zero) return 0;
  if (n < 0) return JsonFieldError(where, field, value, "is negative");
  if (n > max) return OutOfRange(where, field, value, max);
  return n;
}

absl::StatusOr<int64_t> JsonInt(const Json& object, const char* name,
                                int64_t max, absl::string_view where,
                                bool unknown_numa_is_zero) {
  auto it = object.find(name);
  if (it == object.end()) return 0;
  return JsonIntValue(*it, name, max, where, unknown_numa_is_zero);
}

absl::StatusOr<int64_t> JsonIntNamed(const Json& object, const char* name,
                                     absl::string_view field, int64_t max,
                                     absl::string_view where) {
  auto it = object.find(name);
  if (it == object.end()) return 0;
  return JsonIntValue(*it, field, max, where);
}

absl::StatusOr<std::string> JsonString(const Json& object, const char* name,
                                       absl::string_view where) {
  auto it = object.find(name);
  if (it == object.end()) return std::string();
  if (!it->is_string()) {
    return JsonFieldError(where, name, *it, "is not a string");
  }
  return it->get<std::string>();
}

absl::StatusOr<int64_t> RequiredInt(const Json& object, const char* name,
                                    absl::string_view field, int64_t min,
                                    int64_t max, absl::string_view where) {
  auto it = object.find(name);
  if (it == object.end()) return MissingField(where, field);
  absl::StatusOr<int64_t> value = JsonIntValue(*it, field, max, where);
  if (!value.ok()) return value.status();
  if (*value < min) {
    return JsonFieldError(where, field, *it, absl::StrCat("is below ", min));
  }
  return value;
}

}  // namespace deviceshare::wire
