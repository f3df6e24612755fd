// File: testing/fakes.h
//
// Test doubles for the test seams of docs/architecture.md that the core uses.
#ifndef DEVICESHARE_TESTS_TESTING_FAKES_H_
#define DEVICESHARE_TESTS_TESTING_FAKES_H_

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "deviceshare/clock.h"

namespace deviceshare::testing {

// A clock that only moves when told to. Thread-safe.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1700000000))
      : now_(start) {}
  absl::Time Now() const override;
  void Advance(absl::Duration d);

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_FAKES_H_
