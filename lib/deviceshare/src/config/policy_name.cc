#include "deviceshare/config/policy_name.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"

namespace deviceshare {

absl::StatusOr<std::string> ParsePolicyName(absl::string_view text,
                                            absl::string_view field) {
  std::string name = absl::AsciiStrToLower(absl::StripAsciiWhitespace(text));
  const bool valid =
      !name.empty() && absl::ascii_islower(name.front()) &&
      std::all_of(name.begin(), name.end(), [](char c) {
        return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '-';
      });
  if (!valid) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: \"%s\" is not a policy name (letters, digits and '-')", field,
        text));
  }
  return name;
}

}  // namespace deviceshare
