#include "dra/api_names.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"

namespace deviceshare::dra {
namespace {

constexpr size_t kMaxDnsLabel = 63;
constexpr size_t kMaxIdentifier = 32;
constexpr size_t kMaxDomain = 63;

}  // namespace

bool IsDnsLabel(absl::string_view name) {
  if (name.empty() || name.size() > kMaxDnsLabel) return false;
  for (char c : name) {
    if (!absl::ascii_islower(c) && !absl::ascii_isdigit(c) && c != '-') {
      return false;
    }
  }
  return name.front() != '-' && name.back() != '-';
}

bool IsIdentifier(absl::string_view name) {
  if (name.empty() || name.size() > kMaxIdentifier) return false;
  if (absl::ascii_isdigit(name.front())) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

bool IsDomain(absl::string_view domain) {
  if (domain.empty() || domain.size() > kMaxDomain) return false;
  for (absl::string_view label : absl::StrSplit(domain, '.')) {
    if (!IsDnsLabel(label)) return false;
  }
  return true;
}

bool IsQualifiedName(absl::string_view name, bool fully) {
  const size_t slash = name.rfind('/');
  if (slash == absl::string_view::npos) return !fully && IsIdentifier(name);
  return IsDomain(name.substr(0, slash)) &&
         IsIdentifier(name.substr(slash + 1));
}

}  // namespace deviceshare::dra
