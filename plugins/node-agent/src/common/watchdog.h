// File: common/watchdog.h
//
// Watchdog: the thread a kubelet-facing server keeps beside its gRPC server
// to look after its socket files. Start() runs `tick` after every wait of
// `next_wait()` (asked again each round, so a server can shorten it for a
// retry) until Stop(), which wakes the thread at once and joins it.
//
// Thread safety: Start and Stop are called by the owner's serialized
// lifecycle; `tick` and `next_wait` run on the watchdog's thread.
#ifndef DEVICESHARE_AGENT_COMMON_WATCHDOG_H_
#define DEVICESHARE_AGENT_COMMON_WATCHDOG_H_

#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace deviceshare::agent {

class Watchdog {
 public:
  Watchdog() = default;
  ~Watchdog() { Stop(); }

  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // REQUIRES: not running.
  void Start(std::function<absl::Duration()> next_wait,
             std::function<void()> tick);
  // Idempotent.
  void Stop();

 private:
  void Loop(const std::function<absl::Duration()>& next_wait,
            const std::function<void()>& tick);

  std::thread thread_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_COMMON_WATCHDOG_H_
