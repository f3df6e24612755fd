#include "testing/simulated_gpu.h"

#include <algorithm>
#include <thread>

namespace deviceshare::testing {
namespace {

thread_local int tls_agent = -1;

// The one context of the simulated process(es).
CUcontext const kContext = reinterpret_cast<CUcontext>(0x1000);

}  // namespace

// ---- VirtualTime --------------------------------------------------------

void VirtualTime::SleepNs(int64_t ns) {
  ns = std::max<int64_t>(ns, 0);
  if (tls_agent < 0) {
    AdvanceTo(NowNs() + ns);
    return;
  }
  std::unique_lock<std::mutex> lock(mu_);
  agents_[tls_agent].wake = NowNs() + ns;
  DispatchLocked();
  WaitTurnLocked(lock, tls_agent);
}

void VirtualTime::AdvanceTo(int64_t target) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    Timer* due = nullptr;
    for (Timer& timer : timers_) {
      if (timer.next <= target && (due == nullptr || timer.next < due->next)) {
        due = &timer;
      }
    }
    if (due == nullptr) break;
    now_.store(due->next, std::memory_order_release);
    due->next += due->period;
    due->fire();
  }
  now_.store(target, std::memory_order_release);
}

void VirtualTime::AddTimer(int64_t period_ns, std::function<void()> fire) {
  std::lock_guard<std::mutex> lock(mu_);
  timers_.push_back(Timer{NowNs() + period_ns, period_ns, std::move(fire)});
}

void VirtualTime::ClearTimers() {
  std::lock_guard<std::mutex> lock(mu_);
  timers_.clear();
}

void VirtualTime::Run(std::vector<std::function<void()>> bodies) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    agents_.assign(bodies.size(), Agent{NowNs(), false});
    entered_ = 0;
    running_ = -1;
  }
  std::vector<std::thread> threads;
  for (size_t i = 0; i < bodies.size(); ++i) {
    threads.emplace_back([this, i, &bodies] {
      tls_agent = static_cast<int>(i);
      {
        std::unique_lock<std::mutex> lock(mu_);
        // The first dispatch waits for every agent, so the order of thread
        // start-up cannot change the schedule.
        if (++entered_ == static_cast<int>(agents_.size())) DispatchLocked();
        WaitTurnLocked(lock, tls_agent);
      }
      bodies[i]();
      std::unique_lock<std::mutex> lock(mu_);
      agents_[tls_agent].done = true;
      DispatchLocked();
      tls_agent = -1;
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::lock_guard<std::mutex> lock(mu_);
  agents_.clear();
}

void VirtualTime::DispatchLocked() {
  for (;;) {
    int next = -1;
    for (size_t i = 0; i < agents_.size(); ++i) {
      if (agents_[i].done) continue;
      if (next < 0 || agents_[i].wake < agents_[next].wake) {
        next = static_cast<int>(i);
      }
    }
    if (next < 0) {
      running_ = -1;
      turn_.notify_all();
      return;
    }
    Timer* due = nullptr;
    for (Timer& timer : timers_) {
      if (timer.next <= agents_[next].wake &&
          (due == nullptr || timer.next < due->next)) {
        due = &timer;
      }
    }
    if (due != nullptr) {
      now_.store(due->next, std::memory_order_release);
      due->next += due->period;
      due->fire();
      continue;
    }
    now_.store(std::max(NowNs(), agents_[next].wake),
               std::memory_order_release);
    running_ = next;
    turn_.notify_all();
    return;
  }
}

void VirtualTime::WaitTurnLocked(std::unique_lock<std::mutex>& lock,
                                 int agent) {
  turn_.wait(lock, [&] { return running_ == agent; });
}

// ---- SimulatedGpu -------------------------------------------------------

SimulatedGpu* SimulatedGpu::current = nullptr;

int64_t SimulatedGpu::Launch(int owner, int64_t duration_ns) {
  const int64_t start = std::max(time_->NowNs(), busy_until_);
  busy_until_ = start + duration_ns;
  intervals_.push_back(Interval{owner, start, busy_until_});
  return busy_until_;
}

int64_t SimulatedGpu::BusyNs(int owner, int64_t from, int64_t to) const {
  int64_t busy = 0;
  for (const Interval& interval : intervals_) {
    if (owner >= 0 && interval.owner != owner) continue;
    const int64_t start = std::max(interval.start, from);
    const int64_t end = std::min(interval.end, to);
    if (end > start) busy += end - start;
  }
  return busy;
}

void SimulatedGpu::SetCapturing(CUstream stream, bool capturing) {
  if (capturing) {
    capturing_.insert(stream);
  } else {
    capturing_.erase(stream);
  }
}

SimulatedGpu::Event* SimulatedGpu::Find(CUevent event) {
  const uintptr_t index = reinterpret_cast<uintptr_t>(event);
  if (index == 0 || index > events_.size() || !events_[index - 1].live) {
    return nullptr;
  }
  return &events_[index - 1];
}

CUresult SimulatedGpu::EventCreate(CUevent* event, unsigned int flags) {
  SimulatedGpu* gpu = current;
  if (gpu->fail_creates_ > 0) {
    --gpu->fail_creates_;
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  gpu->events_.push_back(Event{});
  ++gpu->events_created_;
  *event = reinterpret_cast<CUevent>(gpu->events_.size());
  return CUDA_SUCCESS;
}

CUresult SimulatedGpu::EventRecord(CUevent event, CUstream stream) {
  SimulatedGpu* gpu = current;
  Event* e = gpu->Find(event);
  if (e == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  e->recorded = true;
  e->at = std::max(gpu->time_->NowNs(), gpu->busy_until_);
  ++gpu->records_;
  return CUDA_SUCCESS;
}

CUresult SimulatedGpu::EventQuery(CUevent event) {
  SimulatedGpu* gpu = current;
  Event* e = gpu->Find(event);
  if (e == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (e->recorded && e->at > gpu->time_->NowNs()) return CUDA_ERROR_NOT_READY;
  return CUDA_SUCCESS;
}

CUresult SimulatedGpu::EventElapsedTime(float* ms, CUevent start, CUevent end) {
  SimulatedGpu* gpu = current;
  Event* s = gpu->Find(start);
  Event* e = gpu->Find(end);
  if (s == nullptr || e == nullptr || !s->recorded || !e->recorded) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  const int64_t now = gpu->time_->NowNs();
  if (s->at > now || e->at > now) return CUDA_ERROR_NOT_READY;
  // The driver's float milliseconds, with their rounding.
  *ms = static_cast<float>(static_cast<double>(e->at - s->at) / 1e6);
  return CUDA_SUCCESS;
}

CUresult SimulatedGpu::EventDestroy(CUevent event) {
  SimulatedGpu* gpu = current;
  Event* e = gpu->Find(event);
  if (e == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  e->live = false;
  ++gpu->events_destroyed_;
  return CUDA_SUCCESS;
}

CUresult SimulatedGpu::StreamIsCapturing(CUstream stream,
                                         CUstreamCaptureStatus* status) {
  *status = current->capturing_.count(stream) != 0
                ? CU_STREAM_CAPTURE_STATUS_ACTIVE
                : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}

CUresult SimulatedGpu::CtxGetCurrent(CUcontext* ctx) {
  *ctx = kContext;
  return CUDA_SUCCESS;
}

CUresult SimulatedGpu::CtxSetCurrent(CUcontext ctx) {
  return ctx == kContext ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

}  // namespace deviceshare::testing
