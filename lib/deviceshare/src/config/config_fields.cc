#include "deviceshare/config/config_fields.h"

#include <cmath>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deviceshare/json_text.h"

namespace deviceshare::internal {

using nlohmann::json;

std::string KeyPath(absl::string_view path, absl::string_view key) {
  if (path.empty()) return std::string(key);
  return absl::StrCat(path, ".", key);
}

std::string IndexPath(absl::string_view path, size_t index) {
  return absl::StrCat(path, "[", index, "]");
}

std::string DescribeValue(const json& value) {
  if (value.is_object()) return "a mapping";
  if (value.is_array()) return "a list";
  return JsonText(value);
}

absl::Status PathError(absl::string_view path, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", message));
}

absl::Status RequireMapping(const json& value, absl::string_view path) {
  if (value.is_object()) return absl::OkStatus();
  return PathError(path, absl::StrCat(DescribeValue(value),
                                      " is not a mapping (want key: value)"));
}

absl::Status RequireList(const json& value, absl::string_view path) {
  if (value.is_array()) return absl::OkStatus();
  return PathError(path, absl::StrCat(DescribeValue(value), " is not a list"));
}

absl::Status CheckKnownKeys(const json& object, absl::string_view path,
                            std::initializer_list<absl::string_view> known) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    bool found = false;
    for (absl::string_view k : known) found = found || k == it.key();
    if (!found) return PathError(KeyPath(path, it.key()), "unknown key");
  }
  return absl::OkStatus();
}

namespace {

// A bound that is only the width of the storage type is shown alone, so
// that `deviceSplitCount: 0` asks for ">= 1", not "1..2147483647".
std::string RangeText(bool too_small, int64_t min, int64_t max) {
  bool open_top = max == std::numeric_limits<int32_t>::max() ||
                  max == std::numeric_limits<int64_t>::max();
  if (!open_top) return absl::StrCat(min, "..", max);
  if (too_small) return absl::StrCat(">= ", min);
  return absl::StrCat("<= ", max);
}

absl::Status NotANumber(const json& value, absl::string_view path) {
  std::string message = absl::StrCat(DescribeValue(value), " is not a number");
  double ignored;
  if (value.is_string() &&
      absl::SimpleAtod(value.get_ref<const std::string&>(), &ignored)) {
    absl::StrAppend(&message, " (it is quoted; write it without quotes)");
  }
  return PathError(path, message);
}

}  // namespace

absl::StatusOr<int64_t> ReadInteger(const json& value, absl::string_view path,
                                    int64_t min, int64_t max) {
  int64_t result = 0;
  bool in_int64 = true;
  if (value.is_number_integer() && !value.is_number_unsigned()) {
    result = value.get<int64_t>();
  } else if (value.is_number_unsigned()) {
    uint64_t u = value.get<uint64_t>();
    in_int64 = u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    result = static_cast<int64_t>(u);
  } else if (value.is_number_float()) {
    double d = value.get<double>();
    if (!std::isfinite(d) || std::trunc(d) != d) {
      return PathError(
          path, absl::StrCat(DescribeValue(value), " is not a whole number"));
    }
    // 2^63 is exactly representable; anything at or above it is out.
    in_int64 = std::fabs(d) < 9223372036854775808.0;
    result = in_int64 ? static_cast<int64_t>(d) : 0;
  } else {
    return NotANumber(value, path);
  }
  if (!in_int64 || result < min || result > max) {
    bool too_small = in_int64 ? result < min : value.get<double>() < 0;
    return PathError(
        path, absl::StrCat(DescribeValue(value), " is out of range (want ",
                           RangeText(too_small, min, max), ")"));
  }
  return result;
}

absl::StatusOr<int32_t> ReadPositiveMilli(const json& value,
                                          absl::string_view path) {
  if (!value.is_number()) return NotANumber(value, path);
  double d = value.get<double>();
  if (!std::isfinite(d) || d <= 0) {
    return PathError(path, absl::StrCat(DescribeValue(value),
                                        " is out of range (want > 0)"));
  }
  double milli = std::round(d * 1000);
  if (milli < 1) {
    return PathError(path, absl::StrCat(DescribeValue(value),
                                        " is below the 0.001 resolution"));
  }
  if (milli > std::numeric_limits<int32_t>::max()) {
    return PathError(path, absl::StrCat(DescribeValue(value), " is too large"));
  }
  return static_cast<int32_t>(milli);
}

absl::StatusOr<bool> ReadBool(const json& value, absl::string_view path) {
  if (value.is_boolean()) return value.get<bool>();
  return PathError(path,
                   absl::StrCat(DescribeValue(value),
                                " is not a boolean (want true or false)"));
}

absl::StatusOr<std::string> ReadString(const json& value,
                                       absl::string_view path,
                                       bool allow_empty) {
  if (!value.is_string()) {
    return PathError(path,
                     absl::StrCat(DescribeValue(value), " is not a string"));
  }
  const std::string& text = value.get_ref<const std::string&>();
  if (text.empty() && !allow_empty) return PathError(path, "is empty");
  return text;
}

absl::StatusOr<std::vector<std::string>> ReadStringList(
    const json& value, absl::string_view path) {
  if (absl::Status s = RequireList(value, path); !s.ok()) return s;
  if (value.empty()) return PathError(path, "is empty");
  std::vector<std::string> result;
  for (size_t i = 0; i < value.size(); ++i) {
    auto item = ReadString(value[i], IndexPath(path, i), /*allow_empty=*/false);
    if (!item.ok()) return item.status();
    result.push_back(*std::move(item));
  }
  return result;
}

}  // namespace deviceshare::internal
