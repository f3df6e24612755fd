// File: clock.h
//
// The one door through which deviceshare reads time. The core never calls
// absl::Now(): everything that needs the time (bind bookkeeping annotations,
// reservation expiry) takes a Clock, so tests can use a fake one.
//
// Thread safety: implementations must be safe to call from any thread.
#ifndef DEVICESHARE_CLOCK_H_
#define DEVICESHARE_CLOCK_H_

#include "absl/time/time.h"

namespace deviceshare {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
};

// The process clock. Never deleted.
Clock& RealClock();

}  // namespace deviceshare

#endif  // DEVICESHARE_CLOCK_H_
