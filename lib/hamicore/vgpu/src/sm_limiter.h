// File: lib/hamicore/vgpu/src/sm_limiter.h
//
// The SM limiter: holds a container to a share of each GPU's *time*.
// HAMi-core charges blocks per launch against an NVML-driven bucket refilled
// every 120 ms, so small grids pass for free, graphs are not limited, and the
// controller oscillates (25 % gave 72 % busy). Here every launch is measured
// on the GPU itself: a start/end event pair recorded on the launch stream,
// read back by a meter thread off the launch path.
//
// Per limited device a token bucket holds nanoseconds of GPU time:
//   - the meter refills it every tick with percent x wall time, minus the GPU
//     time the container's other processes published in the ledger over that
//     tick, capped at the bucket depth (<= 100 ms: an idle spell buys at most
//     that much burst);
//   - a launch is admitted while the bucket is positive and is charged the
//     device's recent mean launch duration up front, so a deep asynchronous
//     queue cannot run ahead of the budget; when its events complete the meter
//     settles estimate against measurement and publishes the measured time;
//   - at most depth / mean duration launches are in flight (two until the
//     first measurement), which bounds admitted-but-unmeasured work when
//     the estimate is still unknown;
//   - an exhausted bucket puts the launching thread to sleep for about
//     deficit / rate, not a fixed 10 ms spin.
// Over any stretch the GPU time admitted is percent x wall time (+ the
// depth), whatever the kernel length or grid size.
//
// Launch path when not throttled: relaxed atomics on process memory, a pool
// pop, cuCtxGetCurrent, cuStreamIsCapturing and two cuEventRecord. No lock,
// syscall, getenv or shared-region write. Failures fail open: a launch that
// cannot be measured is charged its estimate, a limiter that cannot run its
// meter thread stops limiting.
//
// Known limits: launches on concurrent streams are charged their summed
// durations, which over-counts overlapped kernels (the process then gets
// less than its share, never more); a kernel cannot be preempted, so one
// longer than the measuring window overshoots that window.
#ifndef DEVICESHARE_VGPU_SM_LIMITER_H_
#define DEVICESHARE_VGPU_SM_LIMITER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "gpu_abi/cuda_abi.h"
#include "sm_clock.h"
#include "sm_event_pools.h"
#include "sm_mpmc_ring.h"

namespace deviceshare::vgpu {

// The real driver entry points the limiter calls.
struct LimiterDriver {
  cuEventCreate_fn event_create = nullptr;
  cuEventRecord_fn event_record = nullptr;
  cuEventQuery_fn event_query = nullptr;
  cuEventElapsedTime_fn event_elapsed = nullptr;
  cuEventDestroy_v2_fn event_destroy = nullptr;
  cuStreamIsCapturing_fn stream_is_capturing = nullptr;
  cuCtxGetCurrent_fn ctx_get_current = nullptr;
  cuCtxSetCurrent_fn ctx_set_current = nullptr;
};

// Container-wide GPU time per device: every process of the container
// publishes what it measured; the limiter subtracts the others' share.
class GpuTimeLedger {
 public:
  virtual ~GpuTimeLedger() = default;
  // Called by the meter thread only.
  virtual void AddOwnGpuTime(int device, uint64_t ns) = 0;
  // Sum over all live processes of the container, this one included.
  virtual uint64_t ContainerGpuTime(int device) = 0;
};

struct SmLimiterOptions {
  // Indexed by CUDA ordinal: 1..99 limits; 0, >= 100 or negative do not.
  std::vector<int> percent_by_device;
  // Burst allowance in GPU time; clamped to [tick_ns, 100 ms].
  int64_t bucket_depth_ns = 50'000'000;
  // Meter period: refill, settlement and ledger publication.
  int64_t tick_ns = 2'000'000;
  // Tests drive the meter with MeterTickForTesting() instead of a thread.
  bool manual_meter = false;
};

enum class LaunchKind : uint8_t {
  kKernel,  // cuLaunchKernel, cuLaunchKernelEx, cooperative launches
  kGraph,   // cuGraphLaunch: one event pair around the whole graph
};

class SmLimiter {
 public:
  // Null when no device is limited, or when the meter thread cannot start.
  // `ledger` and `clock` must outlive the limiter; `ledger` may be null
  // (then the process is alone in its container).
  static std::unique_ptr<SmLimiter> Create(const LimiterDriver& driver,
                                           GpuTimeLedger* ledger,
                                           LimiterClock* clock,
                                           SmLimiterOptions options);
  ~SmLimiter();
  SmLimiter(const SmLimiter&) = delete;
  SmLimiter& operator=(const SmLimiter&) = delete;

  // Hot path: a bounds check and one relaxed load.
  bool limits(int device) const {
    return device >= 0 && device < device_count_ &&
           devices_[device].limited.load(std::memory_order_relaxed);
  }

  // What BeforeLaunch charged; AfterLaunch settles it. Plain data.
  struct Ticket {
    int device = -1;  // -1: nothing charged, AfterLaunch does nothing
    int pool = -1;    // event pool of start/end; -1: unmeasured
    LaunchKind kind = LaunchKind::kKernel;
    int64_t charged_ns = 0;
    CUevent start = nullptr;
    CUevent end = nullptr;
  };

  // In the launching thread, with the launch's context current, before the
  // real launch. Sleeps while the device's budget is exhausted, then charges
  // the estimate and records the start event. Launches into a capturing
  // stream are neither charged nor measured: they run later, as a graph.
  Ticket BeforeLaunch(int device, CUstream stream,
                      LaunchKind kind = LaunchKind::kKernel);
  // After the real launch: records the end event and queues the pair for the
  // meter, or refunds everything when the launch failed.
  void AfterLaunch(const Ticket& ticket, CUstream stream, bool launched);

  // pthread_atfork handlers. The child gets a fresh meter thread and forgets
  // the parent's events (CUDA objects do not survive fork).
  void BeforeFork();
  void AfterForkInParent();
  void AfterForkInChild();

  // GPU time the device may still start now (negative: in debt).
  int64_t BalanceNs(int device) const;
  // Launches admitted and not yet measured.
  int InFlight(int device) const;
  // The charge a launch of `kind` gets now.
  int64_t EstimateNs(int device, LaunchKind kind) const;

  // One meter period, synchronously (only with options.manual_meter).
  void MeterTickForTesting();

 private:
  // A launch handed to the meter.
  struct Pending {
    int device;
    int pool;
    LaunchKind kind;
    int64_t charged_ns;
    CUevent start;
    CUevent end;
    CUstream stream;
  };
  struct alignas(64) Device {
    std::atomic<bool> limited{false};
    int percent = 0;
    std::atomic<int64_t> tokens_ns{0};
    std::atomic<int32_t> in_flight{0};
    std::atomic<int32_t> max_in_flight{2};
    // Per LaunchKind: recent mean duration; 0 until the first measurement.
    std::atomic<int64_t> estimate_ns[2] = {};
    // Charged by estimate, not measured; the meter publishes it.
    std::atomic<int64_t> unmeasured_ns{0};
    // Meter-thread state: mean duration over all kinds (sets max_in_flight),
    // own time published and container total seen since the last refill.
    int64_t mean_ns = 0;
    int64_t published_since_tick = 0;
    int64_t container_seen = 0;
    bool container_synced = false;
  };
  static constexpr size_t kPendingCapacity = 8192;
  static constexpr int kInitialMaxInFlight = 2;
  static constexpr int kMaxInFlight = 1024;
  static constexpr int64_t kMaxSleepNs = 100'000'000;

  SmLimiter(const LimiterDriver& driver, GpuTimeLedger* ledger,
            LimiterClock* clock, const SmLimiterOptions& options);
  bool StartMeter();
  void MeterLoop();
  void Tick();
  void Settle(const Pending& pending, int64_t measured_ns);
  void Refill(int device, int64_t wall_ns);
  void AddCapped(Device& device, int64_t delta, bool floor_debt);
  void Recycle(int pool, CUevent event);
  void SetMeterContext(CUcontext ctx);
  void DestroyAllEvents();
  int64_t ChargeFor(const Device& device, LaunchKind kind) const;
  void FailOpen();

  const LimiterDriver driver_;
  GpuTimeLedger* const ledger_;
  LimiterClock* const clock_;
  const int64_t depth_ns_;
  const int64_t tick_ns_;
  const bool manual_meter_;
  const int device_count_;
  std::unique_ptr<Device[]> devices_;
  std::unique_ptr<EventPools> pools_;
  std::unique_ptr<MpmcRing<Pending, kPendingCapacity>> handoff_;

  // Meter thread only (and fork handlers while it is parked).
  std::vector<Pending> pending_;
  std::vector<std::pair<int, CUstream>> blocked_streams_;
  CUcontext meter_ctx_ = nullptr;
  int64_t last_tick_ns_ = 0;

  // Held by the meter during a tick and by fork() around the fork, so the
  // child never starts from a half-done tick.
  std::mutex meter_mu_;
  std::atomic<bool> stop_{false};
  // Raw: after fork() the child's copy names a thread that does not exist,
  // and destroying a joinable std::thread would terminate the process.
  std::thread* meter_ = nullptr;
};

}  // namespace deviceshare::vgpu

#endif  // DEVICESHARE_VGPU_SM_LIMITER_H_
