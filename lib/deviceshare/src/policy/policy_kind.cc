#include "deviceshare/policy/policy_kind.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"

namespace deviceshare {

absl::string_view PolicyKindName(PolicyKind kind) {
  switch (kind) {
    case PolicyKind::kBinpack:
      return "binpack";
    case PolicyKind::kSpread:
      return "spread";
  }
  return "unknown";
}

absl::StatusOr<PolicyKind> ParsePolicyKind(absl::string_view text,
                                           absl::string_view field) {
  std::string lower = absl::AsciiStrToLower(absl::StripAsciiWhitespace(text));
  for (PolicyKind kind : {PolicyKind::kBinpack, PolicyKind::kSpread}) {
    if (lower == PolicyKindName(kind)) return kind;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: unknown policy \"%s\" (want binpack or spread)", field, text));
}

}  // namespace deviceshare
