#include "deviceshare/config/policy_name.h"

#include <algorithm>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

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

absl::StatusOr<std::string> ParsePolicyList(absl::string_view text,
                                            absl::string_view field) {
  std::vector<std::string> names;
  for (absl::string_view entry : absl::StrSplit(text, ',')) {
    if (absl::StripAsciiWhitespace(entry).empty()) continue;
    absl::StatusOr<std::string> name = ParsePolicyName(entry, field);
    if (!name.ok()) return name.status();
    names.push_back(*std::move(name));
  }
  if (names.empty()) return ParsePolicyName(text, field);
  return absl::StrJoin(names, ",");
}

}  // namespace deviceshare
