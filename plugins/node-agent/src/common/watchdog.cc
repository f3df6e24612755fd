#include "common/watchdog.h"

#include <utility>

namespace deviceshare::agent {

void Watchdog::Start(std::function<absl::Duration()> next_wait,
                     std::function<void()> tick) {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = false;
  }
  thread_ = std::thread([this, next_wait = std::move(next_wait),
                         tick = std::move(tick)] { Loop(next_wait, tick); });
}

void Watchdog::Stop() {
  if (!thread_.joinable()) return;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

void Watchdog::Loop(const std::function<absl::Duration()>& next_wait,
                    const std::function<void()>& tick) {
  while (true) {
    const absl::Duration wait = next_wait();
    {
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), wait)) return;
    }
    tick();
  }
}

}  // namespace deviceshare::agent
