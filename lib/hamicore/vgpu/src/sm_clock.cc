#include "sm_clock.h"

#include <errno.h>
#include <time.h>

#include <new>

namespace deviceshare::vgpu {
namespace {

class Monotonic final : public LimiterClock {
 public:
  int64_t NowNs() override {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  }
  void SleepNs(int64_t ns) override {
    if (ns <= 0) return;
    timespec left{static_cast<time_t>(ns / 1'000'000'000),
                  static_cast<long>(ns % 1'000'000'000)};
    // Signals interrupt nanosleep; finish the sleep so throttling holds.
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
  }
};

}  // namespace

LimiterClock* MonotonicClock() {
  // Placement into static storage: no destructor runs at exit, no heap.
  alignas(Monotonic) static unsigned char storage[sizeof(Monotonic)];
  static LimiterClock* const clock = new (storage) Monotonic();
  return clock;
}

}  // namespace deviceshare::vgpu
