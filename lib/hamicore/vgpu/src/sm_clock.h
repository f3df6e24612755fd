// File: lib/hamicore/vgpu/src/sm_clock.h
//
// The SM limiter's notion of wall time, behind an interface so that tests can
// run it on virtual time (sleeping advances a simulated clock) and check
// seconds of throttling in milliseconds.
#ifndef DEVICESHARE_VGPU_SM_CLOCK_H_
#define DEVICESHARE_VGPU_SM_CLOCK_H_

#include <cstdint>

namespace deviceshare::vgpu {

class LimiterClock {
 public:
  virtual ~LimiterClock() = default;
  virtual int64_t NowNs() = 0;
  // Sleeps at least `ns` (<= 0: returns at once).
  virtual void SleepNs(int64_t ns) = 0;
};

// CLOCK_MONOTONIC and nanosleep; one process-wide instance, never destroyed
// (the limiter may still sleep on it while static destructors run).
LimiterClock* MonotonicClock();

}  // namespace deviceshare::vgpu

#endif  // DEVICESHARE_VGPU_SM_CLOCK_H_
