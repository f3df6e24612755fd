#include "sm_limiter.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <new>
#include <utility>

namespace deviceshare::vgpu {
namespace {

// The charge of a launch before anything of its kind was measured. Small
// enough not to stall tiny kernels for long, and the in-flight cap of two
// keeps long ones from queueing far past it.
constexpr int64_t kDefaultEstimateNs = 1'000'000;
constexpr int64_t kMaxDepthNs = 100'000'000;

int64_t ClampTick(int64_t tick_ns) {
  return std::clamp<int64_t>(tick_ns, 100'000, kMaxDepthNs);
}

int KindIndex(LaunchKind kind) { return kind == LaunchKind::kGraph ? 1 : 0; }

bool IsLimit(int percent) { return percent > 0 && percent < 100; }

// Rises at once to a long launch (a queue of them must not run ahead on a
// stale small estimate), falls smoothly.
int64_t NextEstimate(int64_t current, int64_t measured) {
  if (current <= 0 || measured > 2 * current)
    return std::max<int64_t>(measured, 1);
  return std::max<int64_t>(current + (measured - current) / 4, 1);
}

}  // namespace

std::unique_ptr<SmLimiter> SmLimiter::Create(const LimiterDriver& driver,
                                             GpuTimeLedger* ledger,
                                             LimiterClock* clock,
                                             SmLimiterOptions options) {
  try {
    if (clock == nullptr) return nullptr;
    if (std::none_of(options.percent_by_device.begin(),
                     options.percent_by_device.end(), IsLimit)) {
      return nullptr;
    }
    // Without events nothing can be measured, and without the capture query
    // an event would be recorded into a graph under capture: don't limit.
    if (driver.event_create == nullptr || driver.event_record == nullptr ||
        driver.event_query == nullptr || driver.event_elapsed == nullptr ||
        driver.stream_is_capturing == nullptr ||
        driver.ctx_get_current == nullptr) {
      return nullptr;
    }
    std::unique_ptr<SmLimiter> limiter(
        new SmLimiter(driver, ledger, clock, options));
    if (!options.manual_meter && !limiter->StartMeter()) return nullptr;
    return limiter;
  } catch (...) {
    return nullptr;  // bad_alloc: fail open
  }
}

SmLimiter::SmLimiter(const LimiterDriver& driver, GpuTimeLedger* ledger,
                     LimiterClock* clock, const SmLimiterOptions& options)
    : driver_(driver),
      ledger_(ledger),
      clock_(clock),
      depth_ns_(std::clamp<int64_t>(options.bucket_depth_ns,
                                    ClampTick(options.tick_ns), kMaxDepthNs)),
      tick_ns_(ClampTick(options.tick_ns)),
      manual_meter_(options.manual_meter),
      device_count_(static_cast<int>(options.percent_by_device.size())),
      devices_(new Device[options.percent_by_device.size()]),
      pools_(new EventPools()),
      handoff_(new MpmcRing<Pending, kPendingCapacity>()) {
  pending_.reserve(1024);
  for (int d = 0; d < device_count_; ++d) {
    Device& dev = devices_[d];
    dev.percent = options.percent_by_device[d];
    dev.limited.store(IsLimit(dev.percent), std::memory_order_relaxed);
    dev.tokens_ns.store(depth_ns_, std::memory_order_relaxed);
  }
  last_tick_ns_ = clock_->NowNs();
}

SmLimiter::~SmLimiter() {
  stop_.store(true, std::memory_order_release);
  if (meter_ != nullptr) {
    if (meter_->joinable()) meter_->join();
    delete meter_;
  }
  DestroyAllEvents();
}

bool SmLimiter::StartMeter() {
  // The meter must not run the application's signal handlers: start it with
  // every signal blocked (it inherits the mask).
  sigset_t all, saved;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  bool started = false;
  try {
    meter_ = new std::thread([this] { MeterLoop(); });
    started = true;
  } catch (...) {
    meter_ = nullptr;
  }
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  if (started) pthread_setname_np(meter_->native_handle(), "vgpu-sm-meter");
  return started;
}

void SmLimiter::MeterLoop() {
  while (!stop_.load(std::memory_order_acquire)) {
    {
      std::lock_guard<std::mutex> guard(meter_mu_);
      if (stop_.load(std::memory_order_acquire)) break;
      try {
        Tick();
      } catch (...) {
        // An exception must not reach the thread's top (std::terminate
        // would kill the application): stop limiting instead.
        FailOpen();
        return;
      }
    }
    clock_->SleepNs(tick_ns_);
  }
}

void SmLimiter::MeterTickForTesting() {
  std::lock_guard<std::mutex> guard(meter_mu_);
  Tick();
}

SmLimiter::Ticket SmLimiter::BeforeLaunch(int device, CUstream stream,
                                          LaunchKind kind) {
  Ticket ticket;
  if (!limits(device)) return ticket;
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  if (driver_.stream_is_capturing(stream, &capture) == CUDA_SUCCESS &&
      capture != CU_STREAM_CAPTURE_STATUS_NONE) {
    return ticket;  // runs (and is measured) when the graph is launched
  }
  Device& dev = devices_[device];
  for (;;) {
    const int64_t tokens = dev.tokens_ns.load(std::memory_order_relaxed);
    if (tokens > 0 && dev.in_flight.load(std::memory_order_relaxed) <
                          dev.max_in_flight.load(std::memory_order_relaxed)) {
      break;
    }
    if (!dev.limited.load(std::memory_order_relaxed)) return ticket;
    // Refills come every tick: waking sooner only spins. A deficit takes
    // deficit / rate to refill (the others' use can make it longer; then
    // the loop sleeps again).
    int64_t wait = tick_ns_ / 2;
    if (tokens <= 0) wait = std::max(wait, (1 - tokens) * 100 / dev.percent);
    clock_->SleepNs(std::min(wait, kMaxSleepNs));
  }
  ticket.device = device;
  ticket.kind = kind;
  ticket.charged_ns = ChargeFor(dev, kind);
  dev.tokens_ns.fetch_sub(ticket.charged_ns, std::memory_order_relaxed);
  dev.in_flight.fetch_add(1, std::memory_order_relaxed);

  CUcontext ctx = nullptr;
  if (driver_.ctx_get_current(&ctx) != CUDA_SUCCESS) return ticket;
  const int pool = pools_->PoolFor(ctx);
  if (pool < 0) return ticket;
  CUevent events[2] = {nullptr, nullptr};
  int taken = 0;
  for (; taken < 2; ++taken) {
    if (pools_->Take(pool, &events[taken])) continue;
    if (driver_.event_create(&events[taken], CU_EVENT_DEFAULT) != CUDA_SUCCESS)
      break;
  }
  if (taken == 2 && driver_.event_record(events[0], stream) == CUDA_SUCCESS) {
    ticket.pool = pool;
    ticket.start = events[0];
    ticket.end = events[1];
    return ticket;
  }
  for (int i = 0; i < taken; ++i) Recycle(pool, events[i]);
  return ticket;  // unmeasured: settled at the estimate
}

void SmLimiter::AfterLaunch(const Ticket& ticket, CUstream stream,
                            bool launched) {
  if (ticket.device < 0 || ticket.device >= device_count_) return;
  Device& dev = devices_[ticket.device];
  if (!launched) {
    dev.tokens_ns.fetch_add(ticket.charged_ns, std::memory_order_relaxed);
    dev.in_flight.fetch_sub(1, std::memory_order_relaxed);
    if (ticket.pool >= 0) {
      Recycle(ticket.pool, ticket.start);
      Recycle(ticket.pool, ticket.end);
    }
    return;
  }
  if (ticket.pool >= 0) {
    if (driver_.event_record(ticket.end, stream) == CUDA_SUCCESS &&
        handoff_->TryPush(Pending{ticket.device, ticket.pool, ticket.kind,
                                  ticket.charged_ns, ticket.start, ticket.end,
                                  stream})) {
      return;
    }
    Recycle(ticket.pool, ticket.start);
    Recycle(ticket.pool, ticket.end);
  }
  dev.unmeasured_ns.fetch_add(ticket.charged_ns, std::memory_order_relaxed);
  dev.in_flight.fetch_sub(1, std::memory_order_relaxed);
}

void SmLimiter::Tick() {
  const int64_t now = clock_->NowNs();
  const int64_t wall = std::max<int64_t>(0, now - last_tick_ns_);
  last_tick_ns_ = now;

  Pending handed;
  while (handoff_->TryPop(&handed)) {
    try {
      pending_.push_back(handed);
    } catch (...) {
      Settle(handed, handed.charged_ns);  // out of memory: take the estimate
    }
  }
  // Completions in stream order: once a stream's oldest launch is still
  // running, its later ones are too, and are not queried.
  blocked_streams_.clear();
  size_t kept = 0;
  for (size_t i = 0; i < pending_.size(); ++i) {
    const Pending p = pending_[i];
    const std::pair<int, CUstream> key(p.device, p.stream);
    if (std::find(blocked_streams_.begin(), blocked_streams_.end(), key) !=
        blocked_streams_.end()) {
      pending_[kept++] = p;
      continue;
    }
    SetMeterContext(pools_->context(p.pool));
    const CUresult done = driver_.event_query(p.end);
    if (done == CUDA_ERROR_NOT_READY) {
      try {
        blocked_streams_.push_back(key);
      } catch (...) {
      }
      pending_[kept++] = p;
      continue;
    }
    // An error (context destroyed, say) settles at the estimate.
    int64_t measured = -1;
    float ms = 0;
    if (done == CUDA_SUCCESS &&
        driver_.event_elapsed(&ms, p.start, p.end) == CUDA_SUCCESS &&
        std::isfinite(ms) && ms >= 0) {
      measured = std::llround(static_cast<double>(ms) * 1e6);
    }
    Settle(p, measured);
  }
  pending_.resize(kept);

  for (int d = 0; d < device_count_; ++d) {
    if (devices_[d].limited.load(std::memory_order_relaxed)) Refill(d, wall);
  }
}

void SmLimiter::Settle(const Pending& p, int64_t measured_ns) {
  Device& dev = devices_[p.device];
  const bool was_measured = measured_ns >= 0;
  if (!was_measured) measured_ns = p.charged_ns;
  AddCapped(dev, p.charged_ns - measured_ns, /*floor_debt=*/false);
  dev.in_flight.fetch_sub(1, std::memory_order_relaxed);
  if (was_measured) {
    std::atomic<int64_t>& estimate = dev.estimate_ns[KindIndex(p.kind)];
    estimate.store(
        NextEstimate(estimate.load(std::memory_order_relaxed), measured_ns),
        std::memory_order_relaxed);
    dev.mean_ns = NextEstimate(dev.mean_ns, measured_ns);
    // Enough launches in flight to cover the bucket, so the GPU never runs
    // dry while admitted, and no more.
    dev.max_in_flight.store(
        static_cast<int32_t>(std::clamp<int64_t>(
            depth_ns_ / dev.mean_ns, kInitialMaxInFlight, kMaxInFlight)),
        std::memory_order_relaxed);
  }
  if (ledger_ != nullptr && measured_ns > 0) {
    ledger_->AddOwnGpuTime(p.device, static_cast<uint64_t>(measured_ns));
    dev.published_since_tick += measured_ns;
  }
  Recycle(p.pool, p.start);
  Recycle(p.pool, p.end);
}

void SmLimiter::Refill(int device, int64_t wall_ns) {
  Device& dev = devices_[device];
  const int64_t unmeasured =
      dev.unmeasured_ns.exchange(0, std::memory_order_relaxed);
  if (ledger_ != nullptr && unmeasured > 0) {
    ledger_->AddOwnGpuTime(device, static_cast<uint64_t>(unmeasured));
    dev.published_since_tick += unmeasured;
  }
  int64_t others = 0;
  if (ledger_ != nullptr) {
    const int64_t total =
        static_cast<int64_t>(ledger_->ContainerGpuTime(device));
    if (dev.container_synced) {
      // A process that exits may take its time out of the sum: never credit.
      others = std::max<int64_t>(
          0, total - dev.container_seen - dev.published_since_tick);
    }
    dev.container_seen = total;
    dev.container_synced = true;
  }
  dev.published_since_tick = 0;
  AddCapped(dev, wall_ns * dev.percent / 100 - others, /*floor_debt=*/true);
}

void SmLimiter::AddCapped(Device& dev, int64_t delta, bool floor_debt) {
  int64_t tokens = dev.tokens_ns.load(std::memory_order_relaxed);
  for (;;) {
    int64_t next = tokens + delta;
    if (next > depth_ns_) next = std::max(tokens, depth_ns_);
    // Other processes' use lowers the refill, but must not bury this one in
    // debt it did not run up (its own measured debt is always repaid).
    if (floor_debt && delta < 0 && next < -depth_ns_) {
      next = std::min(tokens, -depth_ns_);
    }
    if (dev.tokens_ns.compare_exchange_weak(tokens, next,
                                            std::memory_order_relaxed)) {
      return;
    }
  }
}

void SmLimiter::Recycle(int pool, CUevent event) {
  if (event == nullptr) return;
  if (!pools_->Give(pool, event) && driver_.event_destroy != nullptr) {
    driver_.event_destroy(event);
  }
}

void SmLimiter::SetMeterContext(CUcontext ctx) {
  if (ctx == nullptr || ctx == meter_ctx_ || driver_.ctx_set_current == nullptr)
    return;
  if (driver_.ctx_set_current(ctx) == CUDA_SUCCESS) meter_ctx_ = ctx;
}

void SmLimiter::DestroyAllEvents() {
  if (driver_.event_destroy == nullptr) return;
  CUcontext saved = nullptr;
  driver_.ctx_get_current(&saved);
  meter_ctx_ = saved;
  Pending handed;
  while (handoff_->TryPop(&handed)) {
    SetMeterContext(pools_->context(handed.pool));
    driver_.event_destroy(handed.start);
    driver_.event_destroy(handed.end);
  }
  for (const Pending& p : pending_) {
    SetMeterContext(pools_->context(p.pool));
    driver_.event_destroy(p.start);
    driver_.event_destroy(p.end);
  }
  pending_.clear();
  pools_->DrainAll([this](CUcontext ctx, CUevent event) {
    SetMeterContext(ctx);
    driver_.event_destroy(event);
  });
  if (meter_ctx_ != saved && driver_.ctx_set_current != nullptr) {
    driver_.ctx_set_current(saved);
  }
}

int64_t SmLimiter::ChargeFor(const Device& dev, LaunchKind kind) const {
  const int64_t estimate =
      dev.estimate_ns[KindIndex(kind)].load(std::memory_order_relaxed);
  return estimate > 0 ? estimate : kDefaultEstimateNs;
}

void SmLimiter::FailOpen() {
  for (int d = 0; d < device_count_; ++d) {
    devices_[d].limited.store(false, std::memory_order_relaxed);
  }
}

void SmLimiter::BeforeFork() { meter_mu_.lock(); }

void SmLimiter::AfterForkInParent() { meter_mu_.unlock(); }

void SmLimiter::AfterForkInChild() {
  // This thread locked it before fork(), so it may unlock it here.
  meter_mu_.unlock();
  meter_ = nullptr;  // the parent's meter does not exist here: leak its handle
  handoff_->Reset();
  pending_.clear();
  blocked_streams_.clear();
  pools_->ForgetAll();
  meter_ctx_ = nullptr;
  for (int d = 0; d < device_count_; ++d) {
    Device& dev = devices_[d];
    dev.in_flight.store(0, std::memory_order_relaxed);
    dev.unmeasured_ns.store(0, std::memory_order_relaxed);
    dev.published_since_tick = 0;
    dev.container_synced = false;  // the child may get its own ledger slot
  }
  last_tick_ns_ = clock_->NowNs();
  stop_.store(false, std::memory_order_relaxed);
  if (!manual_meter_ && !StartMeter()) FailOpen();
}

int64_t SmLimiter::BalanceNs(int device) const {
  if (device < 0 || device >= device_count_) return 0;
  return devices_[device].tokens_ns.load(std::memory_order_relaxed);
}

int SmLimiter::InFlight(int device) const {
  if (device < 0 || device >= device_count_) return 0;
  return devices_[device].in_flight.load(std::memory_order_relaxed);
}

int64_t SmLimiter::EstimateNs(int device, LaunchKind kind) const {
  if (device < 0 || device >= device_count_) return 0;
  return ChargeFor(devices_[device], kind);
}

}  // namespace deviceshare::vgpu
