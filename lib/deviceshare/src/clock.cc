#include "deviceshare/clock.h"

#include "absl/time/clock.h"

namespace deviceshare {
namespace {

class SystemClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
};

}  // namespace

Clock& RealClock() {
  static Clock* const clock = new SystemClock();
  return *clock;
}

}  // namespace deviceshare
