// File: policy/scoring_weights.h
//
// DeviceScoringWeights: how much each of a GPU's three fractions in use
// (tenant slots, SM cores, memory) counts in its utilisation when a pod's
// GPUs are ranked: HAMi's per-pod hami.io/device-scoring-weights
// ("slot=1,core=1,memory=3"). The default weighs the three equally, which
// is the plain utilisation of policy/scoring.h.
#ifndef DEVICESHARE_POLICY_SCORING_WEIGHTS_H_
#define DEVICESHARE_POLICY_SCORING_WEIGHTS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace deviceshare {

struct DeviceScoringWeights {
  int64_t slot = 1;
  int64_t core = 1;
  int64_t memory = 1;

  bool operator==(const DeviceScoringWeights& other) const = default;
};

// Reads the annotation as HAMi does (pkg/util/device_scoring_weights.go):
// exactly three comma-separated `key=integer` entries, keys slot, core and
// memory each once, blanks around keys and values ignored, no negative
// weight and not all zero. InvalidArgument naming `field` and the text
// otherwise.
absl::StatusOr<DeviceScoringWeights> ParseDeviceScoringWeights(
    absl::string_view text, absl::string_view field);

}  // namespace deviceshare

#endif  // DEVICESHARE_POLICY_SCORING_WEIGHTS_H_
