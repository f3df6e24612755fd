#include "deviceshare/policy/scoring_weights.h"

#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace deviceshare {

absl::StatusOr<DeviceScoringWeights> ParseDeviceScoringWeights(
    absl::string_view text, absl::string_view field) {
  auto refuse = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: \"%s\": %s", field, text, why));
  };
  const std::vector<absl::string_view> parts = absl::StrSplit(text, ',');
  if (parts.size() != 3) {
    return refuse("expected slot, core and memory weights");
  }
  DeviceScoringWeights weights{0, 0, 0};
  std::set<std::string, std::less<>> seen;
  for (absl::string_view part : parts) {
    std::vector<absl::string_view> key_value = absl::StrSplit(
        absl::StripAsciiWhitespace(part), absl::MaxSplits('=', 1));
    if (key_value.size() != 2) return refuse("expected key=value entries");
    const absl::string_view key = absl::StripAsciiWhitespace(key_value[0]);
    if (!seen.emplace(key).second) {
      return refuse(absl::StrFormat("duplicate \"%s\" weight", key));
    }
    int64_t weight = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(key_value[1]), &weight)) {
      return refuse(absl::StrFormat("\"%s\" weight must be an integer", key));
    }
    if (weight < 0) {
      return refuse(absl::StrFormat("\"%s\" weight must not be negative", key));
    }
    if (key == "slot") {
      weights.slot = weight;
    } else if (key == "core") {
      weights.core = weight;
    } else if (key == "memory") {
      weights.memory = weight;
    } else {
      return refuse(absl::StrFormat("unknown weight \"%s\"", key));
    }
  }
  if (weights.slot == 0 && weights.core == 0 && weights.memory == 0) {
    return refuse("at least one weight must be positive");
  }
  return weights;
}

}  // namespace deviceshare
