#include "deviceshare/model/sharing_mode.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"

namespace deviceshare {

bool IsModeName(absl::string_view text) {
  return !text.empty() && text.size() <= SharingMode::kMaxLength &&
         absl::ascii_islower(text.front()) &&
         std::all_of(text.begin(), text.end(), [](char c) {
           return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '-';
         });
}

absl::StatusOr<SharingMode> ParseSharingMode(absl::string_view text,
                                             absl::string_view field) {
  if (!IsModeName(text)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: \"%s\" is not a sharing mode name (e.g. hami-core, mig, mps)",
        field, text));
  }
  return SharingMode(text);
}

}  // namespace deviceshare
