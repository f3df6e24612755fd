#include "testing/api_value_formats.h"

#include <initializer_list>
#include <map>
#include <mutex>
#include <regex>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace deviceshare::testing {
namespace {

constexpr char kDnsLabelFormat[] = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
constexpr char kDnsSubdomainFormat[] =
    R"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)";
constexpr char kCIdentifierFormat[] = "[A-Za-z_][A-Za-z0-9_]*";
constexpr char kQualifiedNameFormat[] =
    "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
constexpr char kLabelValueFormat[] =
    "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
constexpr char kQualifiedNameMessage[] =
    "must consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character";
constexpr size_t kDnsLabelMaxLength = 63;
constexpr size_t kDnsSubdomainMaxLength = 253;
constexpr size_t kQualifiedNameMaxLength = 63;
constexpr size_t kLabelValueMaxLength = 63;

constexpr char kQuantityFormatError[] =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
constexpr char kQuantitySuffixError[] = "unable to parse quantity's suffix";

// Beyond any quantity a device reports (1e27 units): values are clamped
// here so that arithmetic cannot overflow.
constexpr __int128 kSaturated =
    static_cast<__int128>(1000000000000000000LL) * 1000000000000000000LL;
constexpr int64_t kNanosPerUnit = 1000000000;

// validation.RegexError: the message, the examples, the pattern.
std::string RegexError(absl::string_view message, absl::string_view format,
                       std::initializer_list<absl::string_view> examples) {
  std::string out(message);
  if (examples.size() == 0) {
    absl::StrAppend(&out, " (regex used for validation is '", format, "')");
    return out;
  }
  out += " (e.g. ";
  bool first = true;
  for (absl::string_view example : examples) {
    if (!first) out += " or ";
    first = false;
    absl::StrAppend(&out, "'", example, "', ");
  }
  absl::StrAppend(&out, "regex used for validation is '", format, "')");
  return out;
}

std::string MaxLengthError(size_t length) {
  return absl::StrCat("must be no more than ", length, " characters");
}

bool FullMatch(absl::string_view value, const char* format) {
  // Building a std::regex is slow and the formats are a few constants, so
  // each is built once. Map nodes never move, so a regex found under the
  // lock may be used after it.
  static auto* const cache = new std::map<const char*, std::regex>;
  static auto* const mu = new std::mutex;
  const std::regex* re = nullptr;
  {
    std::lock_guard<std::mutex> lock(*mu);
    auto it = cache->find(format);
    if (it == cache->end()) {
      it = cache->emplace(format, std::regex(format)).first;
    }
    re = &it->second;
  }
  return std::regex_match(value.begin(), value.end(), *re);
}

__int128 Saturate(__int128 value) {
  if (value > kSaturated) return kSaturated;
  if (value < -kSaturated) return -kSaturated;
  return value;
}

// Multiplies by 10^exponent (rounding a division up), saturating.
__int128 ScaleByPowerOfTen(__int128 value, int64_t exponent) {
  for (; exponent > 0 && value != 0; --exponent) {
    value = Saturate(value * 10);
    if (value == kSaturated || value == -kSaturated) return value;
  }
  for (; exponent < 0 && value != 0; ++exponent) {
    const bool exact = value % 10 == 0;
    value /= 10;
    if (!exact && value >= 0) ++value;
  }
  return value;
}

}  // namespace

std::vector<std::string> DnsLabelErrors(absl::string_view value) {
  std::vector<std::string> errors;
  if (value.size() > kDnsLabelMaxLength) {
    errors.push_back(MaxLengthError(kDnsLabelMaxLength));
  }
  if (!FullMatch(value, kDnsLabelFormat)) {
    errors.push_back(RegexError(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric "
        "characters or '-', and must start and end with an alphanumeric "
        "character",
        kDnsLabelFormat, {"my-name", "123-abc"}));
  }
  return errors;
}

std::vector<std::string> DnsSubdomainErrors(absl::string_view value) {
  std::vector<std::string> errors;
  if (value.size() > kDnsSubdomainMaxLength) {
    errors.push_back(MaxLengthError(kDnsSubdomainMaxLength));
  }
  if (!FullMatch(value, kDnsSubdomainFormat)) {
    errors.push_back(RegexError(
        "a lowercase RFC 1123 subdomain must consist of lower case "
        "alphanumeric characters, '-' or '.', and must start and end with an "
        "alphanumeric character",
        kDnsSubdomainFormat, {"example.com"}));
  }
  return errors;
}

std::vector<std::string> CIdentifierErrors(absl::string_view value) {
  if (FullMatch(value, kCIdentifierFormat)) return {};
  return {RegexError(
      "a valid C identifier must start with alphabetic character or '_', "
      "followed by a string of alphanumeric characters or '_'",
      kCIdentifierFormat, {"my_name", "MY_NAME", "MyName"})};
}

std::vector<std::string> QualifiedNameErrors(absl::string_view value) {
  std::vector<std::string> errors;
  std::vector<absl::string_view> parts = absl::StrSplit(value, '/');
  absl::string_view name;
  if (parts.size() == 1) {
    name = parts[0];
  } else if (parts.size() == 2) {
    name = parts[1];
    if (parts[0].empty()) {
      errors.push_back("prefix part must be non-empty");
    } else {
      for (const std::string& message : DnsSubdomainErrors(parts[0])) {
        errors.push_back(absl::StrCat("prefix part ", message));
      }
    }
  } else {
    errors.push_back(
        absl::StrCat("a qualified name ",
                     RegexError(kQualifiedNameMessage, kQualifiedNameFormat,
                                {"MyName", "my.name", "123-abc"}),
                     " with an optional DNS subdomain prefix and '/' (e.g. "
                     "'example.com/MyName')"));
    return errors;
  }
  if (name.empty()) {
    errors.push_back("name part must be non-empty");
  } else if (name.size() > kQualifiedNameMaxLength) {
    errors.push_back(
        absl::StrCat("name part ", MaxLengthError(kQualifiedNameMaxLength)));
  }
  if (!FullMatch(name, kQualifiedNameFormat)) {
    errors.push_back(absl::StrCat(
        "name part ", RegexError(kQualifiedNameMessage, kQualifiedNameFormat,
                                 {"MyName", "my.name", "123-abc"})));
  }
  return errors;
}

std::vector<std::string> LabelValueErrors(absl::string_view value) {
  std::vector<std::string> errors;
  if (value.size() > kLabelValueMaxLength) {
    errors.push_back(MaxLengthError(kLabelValueMaxLength));
  }
  if (!FullMatch(value, kLabelValueFormat)) {
    errors.push_back(RegexError(
        "a valid label must be an empty string or consist of alphanumeric "
        "characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character",
        kLabelValueFormat, {"MyValue", "my_value", "12345"}));
  }
  return errors;
}

bool IsSemVer(absl::string_view value) {
  static constexpr char kSemVer[] =
      R"((0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*))"
      R"((-(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))"
      R"((\.(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*)?)"
      R"((\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?)";
  return FullMatch(value, kSemVer);
}

int64_t Quantity::Value() const {
  __int128 units = nanos / kNanosPerUnit;
  if (nanos % kNanosPerUnit > 0) ++units;
  if (units > INT64_MAX) return INT64_MAX;
  if (units < INT64_MIN) return INT64_MIN;
  return static_cast<int64_t>(units);
}

int Quantity::Compare(const Quantity& other) const {
  return nanos < other.nanos ? -1 : nanos > other.nanos ? 1 : 0;
}

std::optional<Quantity> ParseQuantity(absl::string_view text,
                                      std::string* error) {
  // The grammar of resource.ParseQuantity: sign, integer digits, '.',
  // fraction digits, then a suffix.
  auto fail = [&](const char* message) -> std::optional<Quantity> {
    if (error != nullptr) *error = message;
    return std::nullopt;
  };
  if (text.empty()) return fail(kQuantityFormatError);
  size_t pos = 0;
  bool negative = false;
  if (text[pos] == '-' || text[pos] == '+') {
    negative = text[pos] == '-';
    ++pos;
  }
  const size_t int_start = pos;
  while (pos < text.size() && absl::ascii_isdigit(text[pos])) ++pos;
  absl::string_view int_digits = text.substr(int_start, pos - int_start);
  absl::string_view frac_digits;
  if (pos < text.size() && text[pos] == '.') {
    const size_t frac_start = ++pos;
    while (pos < text.size() && absl::ascii_isdigit(text[pos])) ++pos;
    frac_digits = text.substr(frac_start, pos - frac_start);
  }
  if (int_digits.empty() && frac_digits.empty()) {
    return fail(kQuantityFormatError);
  }
  absl::string_view suffix = text.substr(pos);

  // The suffix: letters from "eEinumkKMGTP", then an optional sign and
  // digits; anything else is malformed.
  size_t s = 0;
  while (s < suffix.size() &&
         absl::string_view("eEinumkKMGTP").find(suffix[s]) !=
             absl::string_view::npos) {
    ++s;
  }
  if (s < suffix.size() && (suffix[s] == '-' || suffix[s] == '+')) ++s;
  while (s < suffix.size() && absl::ascii_isdigit(suffix[s])) ++s;
  if (s != suffix.size()) return fail(kQuantityFormatError);

  int64_t exponent10 = 0;
  int exponent2 = 0;
  static const std::pair<absl::string_view, int> kDecimal[] = {
      {"n", -9}, {"u", -6}, {"m", -3}, {"", 0},   {"k", 3},
      {"M", 6},  {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18}};
  static const std::pair<absl::string_view, int> kBinary[] = {
      {"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}};
  bool known = false;
  for (const auto& [name, power] : kDecimal) {
    if (suffix == name) {
      exponent10 = power;
      known = true;
    }
  }
  for (const auto& [name, power] : kBinary) {
    if (suffix == name) {
      exponent2 = power;
      known = true;
    }
  }
  if (!known && suffix.size() > 1 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    known = absl::SimpleAtoi(suffix.substr(1), &exponent10) &&
            exponent10 > -1000 && exponent10 < 1000;
  }
  if (!known) return fail(kQuantitySuffixError);

  // The digits as an integer with `scale` digits after the point.
  __int128 mantissa = 0;
  int64_t scale = 0;
  bool saturated = false;
  for (char c : absl::StrCat(int_digits, frac_digits)) {
    if (mantissa > kSaturated / 10) {
      saturated = true;
      break;
    }
    mantissa = mantissa * 10 + (c - '0');
  }
  scale = static_cast<int64_t>(frac_digits.size());
  Quantity quantity;
  quantity.text = std::string(text);
  if (saturated) {
    quantity.nanos = kSaturated;
  } else {
    // nanos = mantissa * 10^(9 + exponent10 - scale) * 2^exponent2.
    __int128 nanos = ScaleByPowerOfTen(mantissa, 9 + exponent10 - scale);
    for (int i = 0; i < exponent2 && nanos != kSaturated; ++i) {
      nanos = Saturate(nanos * 2);
    }
    quantity.nanos = nanos;
  }
  if (negative) quantity.nanos = -quantity.nanos;
  return quantity;
}

}  // namespace deviceshare::testing
