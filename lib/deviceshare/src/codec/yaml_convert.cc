#include "codec/yaml_convert.h"

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"

namespace deviceshare {
namespace {

using nlohmann::json;

// The tags yaml-cpp reports: "?" for a plain scalar, "!" for a quoted or
// block scalar (which YAML never resolves to anything but a string).
constexpr char kPlainTag[] = "?";
constexpr char kNonPlainTag[] = "!";
constexpr char kStrTag[] = "tag:yaml.org,2002:str";
constexpr char kIntTag[] = "tag:yaml.org,2002:int";
constexpr char kFloatTag[] = "tag:yaml.org,2002:float";
constexpr char kBoolTag[] = "tag:yaml.org,2002:bool";
constexpr char kNullTag[] = "tag:yaml.org,2002:null";

bool IsDigits(absl::string_view s, int base) {
  if (s.empty()) return false;
  for (char c : s) {
    bool ok = base == 8    ? (c >= '0' && c <= '7')
              : base == 16 ? absl::ascii_isxdigit(static_cast<unsigned char>(c))
                           : absl::ascii_isdigit(static_cast<unsigned char>(c));
    if (!ok) return false;
  }
  return true;
}

int DigitValue(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  return absl::ascii_isdigit(u) ? c - '0' : absl::ascii_tolower(u) - 'a' + 10;
}

// Integers that do not fit int64 stay numbers: unsigned when they fit
// uint64, else double, as nlohmann's own JSON parser does.
json IntegerValue(bool negative, absl::string_view digits, int base) {
  constexpr uint64_t kUint64Max = std::numeric_limits<uint64_t>::max();
  constexpr uint64_t kInt64Max = std::numeric_limits<int64_t>::max();
  uint64_t magnitude = 0;
  bool overflow = false;
  for (char c : digits) {
    uint64_t d = DigitValue(c);
    if (magnitude > (kUint64Max - d) / base) {
      overflow = true;
      break;
    }
    magnitude = magnitude * base + d;
  }
  if (!overflow && !negative) {
    if (magnitude <= kInt64Max) return json(static_cast<int64_t>(magnitude));
    return json(magnitude);
  }
  if (!overflow && magnitude <= kInt64Max + 1) {
    // -(2^63) has no positive int64 counterpart; negate in unsigned space.
    return json(static_cast<int64_t>(~magnitude + 1));
  }
  double value = 0;
  if (base == 10) {
    // Correctly rounded, unlike accumulating digit by digit.
    value = std::strtod(std::string(digits).c_str(), nullptr);
  } else {
    for (char c : digits) value = value * base + DigitValue(c);
  }
  return json(negative ? -value : value);
}

// YAML 1.2 core schema: [-+]?[0-9]+ | 0o[0-7]+ | 0x[0-9a-fA-F]+.
std::optional<json> ResolveInt(absl::string_view s) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'x')) {
    int base = s[1] == 'o' ? 8 : 16;
    absl::string_view digits = s.substr(2);
    if (!IsDigits(digits, base)) return std::nullopt;
    return IntegerValue(false, digits, base);
  }
  bool negative = false;
  absl::string_view digits = s;
  if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  if (!IsDigits(digits, 10)) return std::nullopt;
  return IntegerValue(negative, digits, 10);
}

// YAML 1.2 core schema floats, including .inf and .nan.
std::optional<json> ResolveFloat(absl::string_view s) {
  absl::string_view body = s;
  bool negative = false;
  if (!body.empty() && (body[0] == '-' || body[0] == '+')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  if (body == ".inf" || body == ".Inf" || body == ".INF") {
    double inf = std::numeric_limits<double>::infinity();
    return json(negative ? -inf : inf);
  }
  if (s == ".nan" || s == ".NaN" || s == ".NAN") {
    return json(std::numeric_limits<double>::quiet_NaN());
  }
  // [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
  size_t i = 0;
  size_t int_digits = 0;
  while (i < body.size() && absl::ascii_isdigit(body[i])) ++i, ++int_digits;
  size_t frac_digits = 0;
  if (i < body.size() && body[i] == '.') {
    ++i;
    while (i < body.size() && absl::ascii_isdigit(body[i])) ++i, ++frac_digits;
  }
  if (int_digits == 0 && frac_digits == 0) return std::nullopt;
  if (i < body.size() && (body[i] == 'e' || body[i] == 'E')) {
    ++i;
    if (i < body.size() && (body[i] == '-' || body[i] == '+')) ++i;
    size_t exp_digits = 0;
    while (i < body.size() && absl::ascii_isdigit(body[i])) ++i, ++exp_digits;
    if (exp_digits == 0) return std::nullopt;
  }
  if (i != body.size()) return std::nullopt;
  double value = 0;
  // The pattern above is already checked; SimpleAtod only refuses values out
  // of double's range, where strtod gives the right +-inf or 0.
  if (!absl::SimpleAtod(s, &value)) {
    value = std::strtod(std::string(s).c_str(), nullptr);
  }
  return json(value);
}

std::optional<json> ResolveBool(absl::string_view s) {
  if (s == "true" || s == "True" || s == "TRUE") return json(true);
  if (s == "false" || s == "False" || s == "FALSE") return json(false);
  return std::nullopt;
}

}  // namespace

absl::Status YamlErrorAt(YamlMark mark, absl::string_view message) {
  if (mark.line < 0) {
    return absl::InvalidArgumentError(absl::StrFormat("YAML: %s", message));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "YAML line %d, column %d: %s", mark.line + 1, mark.column + 1, message));
}

YamlMark ToYamlMark(const YAML::Mark& mark) {
  if (mark.is_null()) return YamlMark();
  return {mark.line, mark.column};
}

absl::Status ErrorAt(const YAML::Mark& mark, absl::string_view message) {
  return YamlErrorAt(ToYamlMark(mark), message);
}

bool IsYamlNull(absl::string_view s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

absl::StatusOr<json> ConvertYamlScalar(const std::string& tag,
                                       const std::string& text, YamlMark mark) {
  if (tag == kNonPlainTag || tag == kStrTag) return json(text);
  if (tag == kPlainTag) {
    if (IsYamlNull(text)) return json(nullptr);
    if (auto b = ResolveBool(text)) return *b;
    if (auto i = ResolveInt(text)) return *i;
    if (auto f = ResolveFloat(text)) return *f;
    return json(text);
  }
  std::optional<json> value;
  if (tag == kIntTag) {
    value = ResolveInt(text);
  } else if (tag == kFloatTag) {
    value = ResolveFloat(text);
    if (!value) value = ResolveInt(text);
    if (value) value = json(value->get<double>());
  } else if (tag == kBoolTag) {
    value = ResolveBool(text);
  } else if (tag == kNullTag) {
    if (IsYamlNull(text)) value = json(nullptr);
  } else {
    return YamlErrorAt(mark, absl::StrFormat("unsupported tag \"%s\"", tag));
  }
  if (!value) {
    return YamlErrorAt(mark,
                       absl::StrFormat("\"%s\" is not a valid %s", text, tag));
  }
  return *value;
}

}  // namespace deviceshare
