#include "json_fields.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace deviceshare::mig::internal {

using nlohmann::json;

absl::Status CheckKnownKeys(const json& object, absl::string_view path,
                            std::initializer_list<absl::string_view> known) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    bool found = false;
    for (absl::string_view k : known) found = found || it.key() == k;
    if (!found) {
      return PathError(KeyPath(path, it.key()),
                       absl::StrCat("unknown key (known: ",
                                    absl::StrJoin(known, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

const json* FindKey(const json& object, absl::string_view key) {
  auto it = object.find(std::string(key));
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

absl::StatusOr<const json*> RequireKey(const json& object,
                                       absl::string_view path,
                                       absl::string_view key) {
  const json* value = FindKey(object, key);
  if (value == nullptr) return PathError(KeyPath(path, key), "missing");
  return value;
}

absl::StatusOr<int64_t> ReadInteger(const json& value, absl::string_view path,
                                    int64_t min, int64_t max) {
  int64_t n = 0;
  if (value.is_number_integer()) {
    if (value.is_number_unsigned() &&
        value.get<uint64_t>() > static_cast<uint64_t>(max)) {
      return PathError(path, absl::StrCat(DescribeValue(value), " is outside ",
                                          min, "..", max));
    }
    n = value.get<int64_t>();
  } else if (value.is_number_float()) {
    const double d = value.get<double>();
    if (!std::isfinite(d) || std::trunc(d) != d || d < -9.2e18 || d > 9.2e18) {
      return PathError(
          path, absl::StrCat(DescribeValue(value), " is not a whole number"));
    }
    n = static_cast<int64_t>(d);
  } else {
    return PathError(path,
                     absl::StrCat(DescribeValue(value), " is not a number"));
  }
  if (n < min || n > max) {
    return PathError(path, absl::StrCat(DescribeValue(value), " is outside ",
                                        min, "..", max));
  }
  return n;
}

absl::StatusOr<std::string> ReadString(const json& value,
                                       absl::string_view path) {
  if (!value.is_string()) {
    return PathError(path,
                     absl::StrCat(DescribeValue(value), " is not a string"));
  }
  std::string s = value.get<std::string>();
  if (s.empty()) return PathError(path, "is empty");
  return s;
}

}  // namespace deviceshare::mig::internal
