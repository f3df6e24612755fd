#include "profile_name.h"

#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"

namespace deviceshare::mig::internal {
namespace {

// Reads a positive decimal without a leading zero from the front of `s`.
std::optional<int64_t> ConsumePositive(absl::string_view& s) {
  if (s.empty() || s[0] < '1' || s[0] > '9') return std::nullopt;
  int64_t value = 0;
  size_t n = 0;
  while (n < s.size() &&
         absl::ascii_isdigit(static_cast<unsigned char>(s[n]))) {
    if (value > (std::numeric_limits<int32_t>::max() - 9) / 10) {
      return std::nullopt;
    }
    value = value * 10 + (s[n] - '0');
    ++n;
  }
  s.remove_prefix(n);
  return value;
}

bool IsSuffixChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' ||
         c == '+' || c == '-';
}

}  // namespace

absl::string_view StripMigPrefix(absl::string_view name) {
  name = absl::StripAsciiWhitespace(name);
  if (name.size() > 4 && absl::StartsWithIgnoreCase(name, "mig ")) {
    name.remove_prefix(4);
    name = absl::StripLeadingAsciiWhitespace(name);
  }
  return name;
}

std::string CanonicalProfileName(absl::string_view name) {
  return absl::AsciiStrToLower(StripMigPrefix(name));
}

std::optional<ProfileName> ParseProfileName(absl::string_view name) {
  const std::string canonical = CanonicalProfileName(name);
  absl::string_view s = canonical;
  ProfileName out;
  std::optional<int64_t> n = ConsumePositive(s);
  if (!n || !absl::ConsumePrefix(&s, "g.")) return std::nullopt;
  std::optional<int64_t> m = ConsumePositive(s);
  if (!m || !absl::ConsumePrefix(&s, "gb")) return std::nullopt;
  if (!s.empty()) {
    if (s.size() < 2 || (s[0] != '+' && s[0] != '-')) return std::nullopt;
    for (char c : s) {
      if (!IsSuffixChar(c)) return std::nullopt;
    }
  }
  out.compute_slices = static_cast<int32_t>(*n);
  out.gigabytes = *m;
  out.suffix = std::string(s);
  return out;
}

bool SameProfileName(absl::string_view a, absl::string_view b) {
  return absl::EqualsIgnoreCase(StripMigPrefix(a), StripMigPrefix(b));
}

}  // namespace deviceshare::mig::internal
