#include "deviceshare/model/units.h"

#include <cctype>
#include <limits>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace deviceshare {
namespace {

using int128 = __int128;

constexpr int128 kInt64Max = std::numeric_limits<int64_t>::max();

absl::Status BadQuantity(absl::string_view field, absl::string_view text,
                         absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: \"%s\" %s", field, text, why));
}

// A decimal number split into an integer mantissa and a power of ten:
// "1.25" -> {125, -2}.
struct Decimal {
  int128 mantissa = 0;
  int exponent10 = 0;
};

// Parses the leading number of `text` ("12", "1.5", ".5"); advances `pos`.
std::optional<Decimal> ParseDecimal(absl::string_view text, size_t& pos) {
  Decimal d;
  bool digits = false;
  bool fraction = false;
  for (; pos < text.size(); ++pos) {
    char c = text[pos];
    if (c == '.' && !fraction) {
      fraction = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    digits = true;
    if (d.mantissa > kInt64Max * 100) return std::nullopt;  // hopeless
    d.mantissa = d.mantissa * 10 + (c - '0');
    if (fraction) --d.exponent10;
  }
  if (!digits) return std::nullopt;
  return d;
}

// Multiplier of a Kubernetes suffix as (binary factor, decimal power).
struct Suffix {
  int128 binary = 1;
  int exponent10 = 0;
};

std::optional<Suffix> ParseSuffix(absl::string_view s) {
  if (s.empty()) return Suffix{};
  if (s.size() == 2 && s[1] == 'i') {
    int shift = 0;
    switch (s[0]) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      case 'T':
        shift = 40;
        break;
      case 'P':
        shift = 50;
        break;
      case 'E':
        shift = 60;
        break;
      default:
        return std::nullopt;
    }
    return Suffix{int128{1} << shift, 0};
  }
  if (s.size() == 1) {
    switch (s[0]) {
      case 'n':
        return Suffix{1, -9};
      case 'u':
        return Suffix{1, -6};
      case 'm':
        return Suffix{1, -3};
      case 'k':
        return Suffix{1, 3};
      case 'M':
        return Suffix{1, 6};
      case 'G':
        return Suffix{1, 9};
      case 'T':
        return Suffix{1, 12};
      case 'P':
        return Suffix{1, 15};
      case 'E':
        return Suffix{1, 18};
      default:
        return std::nullopt;
    }
  }
  if ((s[0] == 'e' || s[0] == 'E') && s.size() > 1) {
    size_t i = 1;
    bool negative = false;
    if (s[i] == '+' || s[i] == '-') negative = s[i++] == '-';
    if (i >= s.size() || s.size() - i > 3) return std::nullopt;
    int exp = 0;
    for (; i < s.size(); ++i) {
      if (!std::isdigit(static_cast<unsigned char>(s[i]))) return std::nullopt;
      exp = exp * 10 + (s[i] - '0');
    }
    return Suffix{1, negative ? -exp : exp};
  }
  return std::nullopt;
}

// value = mantissa * binary * 10^exponent10 * scale, exact or an error.
absl::StatusOr<int64_t> ScaleExact(absl::string_view field,
                                   absl::string_view text, int128 mantissa,
                                   int128 binary, int exponent10,
                                   bool round_up) {
  int128 value = mantissa;
  if (value > kInt64Max) return BadQuantity(field, text, "overflows int64");
  value *= binary;
  if (value / binary != mantissa || value > kInt64Max * int128{1000000000}) {
    return BadQuantity(field, text, "overflows int64");
  }
  for (; exponent10 > 0; --exponent10) {
    value *= 10;
    if (value > kInt64Max) return BadQuantity(field, text, "overflows int64");
  }
  for (; exponent10 < 0; ++exponent10) {
    int128 q = value / 10;
    if (q * 10 != value) {
      if (!round_up) return BadQuantity(field, text, "is finer than allowed");
      ++q;
    }
    value = q;
  }
  if (value > kInt64Max) return BadQuantity(field, text, "overflows int64");
  return static_cast<int64_t>(value);
}

struct ParsedQuantity {
  Decimal number;
  Suffix suffix;
};

absl::StatusOr<ParsedQuantity> ParseQuantity(absl::string_view raw,
                                             absl::string_view field) {
  absl::string_view text = absl::StripAsciiWhitespace(raw);
  if (text.empty()) return BadQuantity(field, raw, "is empty");
  size_t pos = 0;
  if (text[0] == '+') {
    pos = 1;
  } else if (text[0] == '-') {
    return BadQuantity(field, raw, "is negative");
  }
  std::optional<Decimal> number = ParseDecimal(text, pos);
  if (!number) return BadQuantity(field, raw, "is not a quantity");
  std::optional<Suffix> suffix = ParseSuffix(text.substr(pos));
  if (!suffix) return BadQuantity(field, raw, "has an unknown unit suffix");
  return ParsedQuantity{*number, *suffix};
}

}  // namespace

absl::StatusOr<int64_t> ParseQuantityMilli(absl::string_view text,
                                           absl::string_view field) {
  auto q = ParseQuantity(text, field);
  if (!q.ok()) return q.status();
  return ScaleExact(field, text, q->number.mantissa, q->suffix.binary,
                    q->number.exponent10 + q->suffix.exponent10 + 3,
                    /*round_up=*/false);
}

absl::StatusOr<int64_t> ParseWholeQuantity(absl::string_view text,
                                           absl::string_view field) {
  auto q = ParseQuantity(text, field);
  if (!q.ok()) return q.status();
  auto value = ScaleExact(field, text, q->number.mantissa, q->suffix.binary,
                          q->number.exponent10 + q->suffix.exponent10,
                          /*round_up=*/false);
  if (!value.ok() && absl::IsInvalidArgument(value.status()) &&
      absl::StrContains(value.status().message(), "finer")) {
    return BadQuantity(field, text, "is not a whole number");
  }
  return value;
}

absl::StatusOr<int64_t> ParseMemoryQuantityMiB(absl::string_view text,
                                               absl::string_view field) {
  auto q = ParseQuantity(text, field);
  if (!q.ok()) return q.status();
  auto bytes = ScaleExact(field, text, q->number.mantissa, q->suffix.binary,
                          q->number.exponent10 + q->suffix.exponent10,
                          /*round_up=*/true);
  if (!bytes.ok()) return bytes.status();
  constexpr int64_t kMiB = int64_t{1} << 20;
  return (*bytes + kMiB - 1) / kMiB;
}

absl::StatusOr<int64_t> ParseSizeMiB(absl::string_view raw,
                                     absl::string_view field) {
  absl::string_view text = absl::StripAsciiWhitespace(raw);
  if (text.empty()) return BadQuantity(field, raw, "is empty");
  int shift = 0;  // bytes
  char last = text.back();
  switch (last) {
    case 'k':
    case 'K':
      shift = 10;
      break;
    case 'm':
    case 'M':
      shift = 20;
      break;
    case 'g':
    case 'G':
      shift = 30;
      break;
    default:
      break;
  }
  absl::string_view digits =
      shift == 0 ? text : text.substr(0, text.size() - 1);
  if (digits.empty()) return BadQuantity(field, raw, "is not a size");
  int128 value = 0;
  for (char c : digits) {
    if (c == '-') return BadQuantity(field, raw, "is negative");
    if (!std::isdigit(static_cast<unsigned char>(c))) {
      return BadQuantity(field, raw, "is not a size (want 1024m, 3g or bytes)");
    }
    value = value * 10 + (c - '0');
    if (value > kInt64Max) return BadQuantity(field, raw, "overflows int64");
  }
  int128 bytes = value << shift;
  if (bytes > kInt64Max) return BadQuantity(field, raw, "overflows int64");
  constexpr int128 kMiB = int128{1} << 20;
  return static_cast<int64_t>((bytes + kMiB - 1) / kMiB);
}

absl::StatusOr<int32_t> ParsePercent(absl::string_view text,
                                     absl::string_view field) {
  auto value = ParseWholeQuantity(text, field);
  if (!value.ok()) return value.status();
  if (*value > 100) return BadQuantity(field, text, "is above 100 percent");
  return static_cast<int32_t>(*value);
}

std::string FormatMiBLimit(int64_t mib) { return absl::StrCat(mib, "m"); }

}  // namespace deviceshare
