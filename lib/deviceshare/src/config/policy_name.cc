#include "deviceshare/config/policy_name.h"

#include <algorithm>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
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

std::string ReadPolicyWords(absl::string_view text) {
  std::vector<std::string> names;
  for (absl::string_view entry : absl::StrSplit(text, ',')) {
    absl::StatusOr<std::string> name = ParsePolicyName(entry, "");
    if (name.ok()) names.push_back(*std::move(name));
  }
  std::string words = absl::StrJoin(names, ",");
  if (names.size() == 1 && absl::StrContains(text, ',')) words += ",";
  return words;
}

}  // namespace deviceshare
