#include "backoff.h"

#include <algorithm>

namespace deviceshare::kube::internal {

Backoff::Backoff(absl::Duration initial, absl::Duration max, double jitter)
    : initial_(std::max(initial, absl::ZeroDuration())),
      max_(std::max(max, initial_)),
      jitter_(std::clamp(jitter, 0.0, 1.0)),
      current_(initial_),
      random_(std::random_device{}()) {}

absl::Duration Backoff::Next() {
  const absl::Duration base = current_;
  current_ = std::min(current_ * 2, max_);
  if (jitter_ == 0) return base;
  std::uniform_real_distribution<double> factor(1.0 - jitter_, 1.0 + jitter_);
  return base * factor(random_);
}

}  // namespace deviceshare::kube::internal
