#include <limits>

#include "dra/cel_value.h"

namespace deviceshare::dra::cel_internal {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool AllDigits(absl::string_view s) {
  for (char c : s) {
    if (!IsDigit(c)) return false;
  }
  return !s.empty();
}

// A numeric part: digits, no leading zero unless it is "0".
std::optional<int64_t> ParseNumber(absl::string_view s) {
  if (!AllDigits(s) || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  int64_t value = 0;
  for (char c : s) {
    if (value > (std::numeric_limits<int64_t>::max() - (c - '0')) / 10) {
      return std::nullopt;
    }
    value = value * 10 + (c - '0');
  }
  return value;
}

// Dot-separated identifiers of [0-9A-Za-z-]; numeric ones without leading
// zeros (prerelease only: build identifiers may have them).
bool ValidIdentifiers(absl::string_view s, bool prerelease) {
  if (s.empty()) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    absl::string_view id =
        s.substr(start, dot == absl::string_view::npos ? dot : dot - start);
    if (id.empty()) return false;
    for (char c : id) {
      bool ok = IsDigit(c) || (c >= 'a' && c <= 'z') ||
                (c >= 'A' && c <= 'Z') || c == '-';
      if (!ok) return false;
    }
    if (prerelease && AllDigits(id) && id.size() > 1 && id[0] == '0') {
      return false;
    }
    if (dot == absl::string_view::npos) return true;
    start = dot + 1;
  }
}

int Sign(int64_t a, int64_t b) { return a < b ? -1 : (a > b ? 1 : 0); }

int CompareIdentifier(absl::string_view a, absl::string_view b) {
  bool an = AllDigits(a);
  bool bn = AllDigits(b);
  if (an && bn) {
    // Valid numeric identifiers have no leading zeros: longer is larger.
    if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
    int c = a.compare(b);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (an != bn) return an ? -1 : 1;  // numeric < alphanumeric
  int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

}  // namespace

std::optional<Semver> ParseSemver(absl::string_view text) {
  size_t plus = text.find('+');
  if (plus != absl::string_view::npos) {
    if (!ValidIdentifiers(text.substr(plus + 1), /*prerelease=*/false)) {
      return std::nullopt;
    }
    text = text.substr(0, plus);
  }
  Semver out;
  size_t dash = text.find('-');
  if (dash != absl::string_view::npos) {
    out.prerelease = text.substr(dash + 1);
    if (!ValidIdentifiers(out.prerelease, /*prerelease=*/true)) {
      return std::nullopt;
    }
    text = text.substr(0, dash);
  }
  size_t dot1 = text.find('.');
  if (dot1 == absl::string_view::npos) return std::nullopt;
  size_t dot2 = text.find('.', dot1 + 1);
  if (dot2 == absl::string_view::npos) return std::nullopt;
  auto major = ParseNumber(text.substr(0, dot1));
  auto minor = ParseNumber(text.substr(dot1 + 1, dot2 - dot1 - 1));
  auto patch = ParseNumber(text.substr(dot2 + 1));
  if (!major || !minor || !patch) return std::nullopt;
  out.major = *major;
  out.minor = *minor;
  out.patch = *patch;
  return out;
}

int CompareSemver(const Semver& a, const Semver& b) {
  if (int c = Sign(a.major, b.major); c != 0) return c;
  if (int c = Sign(a.minor, b.minor); c != 0) return c;
  if (int c = Sign(a.patch, b.patch); c != 0) return c;
  // A version without prerelease ranks above any prerelease of it.
  if (a.prerelease.empty() || b.prerelease.empty()) {
    if (a.prerelease.empty() && b.prerelease.empty()) return 0;
    return a.prerelease.empty() ? 1 : -1;
  }
  absl::string_view x = a.prerelease;
  absl::string_view y = b.prerelease;
  while (true) {
    size_t dx = x.find('.');
    size_t dy = y.find('.');
    int c = CompareIdentifier(x.substr(0, dx), y.substr(0, dy));
    if (c != 0) return c;
    bool x_more = dx != absl::string_view::npos;
    bool y_more = dy != absl::string_view::npos;
    if (!x_more || !y_more) {
      if (x_more == y_more) return 0;
      return x_more ? 1 : -1;  // more identifiers rank higher
    }
    x = x.substr(dx + 1);
    y = y.substr(dy + 1);
  }
}

}  // namespace deviceshare::dra::cel_internal
