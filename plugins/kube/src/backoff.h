// File: backoff.h (internal)
//
// Exponential backoff with jitter: initial, 2x, 4x ... capped at max, each
// scaled by a random factor in [1 - jitter, 1 + jitter].
//
// Thread safety: none; one per retry loop.
#ifndef DEVICESHARE_KUBE_SRC_BACKOFF_H_
#define DEVICESHARE_KUBE_SRC_BACKOFF_H_

#include <random>

#include "absl/time/time.h"

namespace deviceshare::kube::internal {

class Backoff {
 public:
  Backoff(absl::Duration initial, absl::Duration max, double jitter);

  // The next wait; each call doubles the base up to max.
  absl::Duration Next();
  // Back to `initial` (after a success).
  void Reset() { current_ = initial_; }

 private:
  const absl::Duration initial_;
  const absl::Duration max_;
  const double jitter_;
  absl::Duration current_;
  std::mt19937_64 random_;
};

}  // namespace deviceshare::kube::internal

#endif  // DEVICESHARE_KUBE_SRC_BACKOFF_H_
