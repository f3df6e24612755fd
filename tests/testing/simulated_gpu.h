// File: tests/testing/simulated_gpu.h
//
// A GPU on virtual time for testing launch-side code (the SM limiter)
// in-process and deterministically:
//   - VirtualTime runs N "agent" threads one at a time; an agent gives the
//     baton away only by sleeping, and the earliest waker runs next (ties:
//     lowest index), so a run is the same every time. Periodic timers (a
//     meter tick) fire in between, at their exact virtual instants.
//   - SimulatedGpu is one FIFO engine shared by every stream and process:
//     work starts when all work enqueued before it has finished; an event
//     completes at that instant. Its static functions have the driver's
//     signatures (cuEventRecord_fn, ...) and act on SimulatedGpu::current.
#ifndef DEVICESHARE_TESTING_SIMULATED_GPU_H_
#define DEVICESHARE_TESTING_SIMULATED_GPU_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <vector>

#include "gpu_abi/cuda_abi.h"

namespace deviceshare::testing {

class VirtualTime {
 public:
  VirtualTime() = default;
  VirtualTime(const VirtualTime&) = delete;
  VirtualTime& operator=(const VirtualTime&) = delete;

  int64_t NowNs() const { return now_.load(std::memory_order_acquire); }
  // In an agent: yields until `now + ns`. Outside Run(): advances the clock
  // by `ns`, firing the timers due on the way.
  void SleepNs(int64_t ns);
  // `fire` runs every `period_ns` from now + period_ns, with no agent
  // running (inside whichever thread advanced the clock).
  void AddTimer(int64_t period_ns, std::function<void()> fire);
  void ClearTimers();
  // Runs each body in its own agent thread, from now, until all return.
  void Run(std::vector<std::function<void()>> bodies);

 private:
  struct Agent {
    int64_t wake = 0;
    bool done = false;
  };
  struct Timer {
    int64_t next;
    int64_t period;
    std::function<void()> fire;
  };
  // Fires due timers and hands the baton to the earliest agent.
  void DispatchLocked();
  void WaitTurnLocked(std::unique_lock<std::mutex>& lock, int agent);
  void AdvanceTo(int64_t target);

  std::atomic<int64_t> now_{0};
  std::mutex mu_;
  std::condition_variable turn_;
  std::vector<Agent> agents_;
  std::vector<Timer> timers_;
  int entered_ = 0;
  int running_ = -1;
};

class SimulatedGpu {
 public:
  explicit SimulatedGpu(VirtualTime* time) : time_(time) {}
  SimulatedGpu(const SimulatedGpu&) = delete;
  SimulatedGpu& operator=(const SimulatedGpu&) = delete;

  // The instance the static driver functions act on.
  static SimulatedGpu* current;

  // Enqueues `duration_ns` of work for `owner`; returns when it will finish.
  int64_t Launch(int owner, int64_t duration_ns);
  // GPU time `owner` (-1: anyone) ran within [from, to).
  int64_t BusyNs(int owner, int64_t from, int64_t to) const;
  void SetCapturing(CUstream stream, bool capturing);

  int events_created() const { return events_created_; }
  int events_destroyed() const { return events_destroyed_; }
  int64_t records() const { return records_; }
  // When `n` > 0, the next `n` cuEventCreate calls fail.
  void FailEventCreates(int n) { fail_creates_ = n; }

  // Driver entry points (LimiterDriver's members).
  static CUresult EventCreate(CUevent* event, unsigned int flags);
  static CUresult EventRecord(CUevent event, CUstream stream);
  static CUresult EventQuery(CUevent event);
  static CUresult EventElapsedTime(float* ms, CUevent start, CUevent end);
  static CUresult EventDestroy(CUevent event);
  static CUresult StreamIsCapturing(CUstream stream,
                                    CUstreamCaptureStatus* status);
  static CUresult CtxGetCurrent(CUcontext* ctx);
  static CUresult CtxSetCurrent(CUcontext ctx);

 private:
  struct Event {
    bool live = true;
    bool recorded = false;
    int64_t at = 0;
  };
  struct Interval {
    int owner;
    int64_t start;
    int64_t end;
  };
  Event* Find(CUevent event);

  VirtualTime* const time_;
  int64_t busy_until_ = 0;
  std::vector<Event> events_;
  std::vector<Interval> intervals_;
  std::set<CUstream> capturing_;
  int events_created_ = 0;
  int events_destroyed_ = 0;
  int64_t records_ = 0;
  int fail_creates_ = 0;
};

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTING_SIMULATED_GPU_H_
