// The SM limiter of libvgpu.so on a simulated FIFO GPU and virtual time:
// busy share per 1 s window against the limit, the split between two
// containers and inside one, the burst after idle, refunds, capture and
// graphs, fork.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "sm_limiter.h"
#include "sm_mpmc_ring.h"
#include "testing/simulated_gpu.h"

namespace deviceshare::vgpu {
namespace {

using ::deviceshare::testing::SimulatedGpu;
using ::deviceshare::testing::VirtualTime;

constexpr int64_t kUs = 1'000;
constexpr int64_t kMs = 1'000'000;
constexpr int64_t kS = 1'000'000'000;

class VirtualClock final : public LimiterClock {
 public:
  explicit VirtualClock(VirtualTime* time) : time_(time) {}
  int64_t NowNs() override { return time_->NowNs(); }
  void SleepNs(int64_t ns) override { time_->SleepNs(ns); }

 private:
  VirtualTime* time_;
};

// The shared region's per-process GPU time counters, as the lead's ledger
// keeps them: one row per process, summed for the container.
class ContainerLedger {
 public:
  class View final : public GpuTimeLedger {
   public:
    View(ContainerLedger* container, int process)
        : container_(container), process_(process) {}
    void AddOwnGpuTime(int device, uint64_t ns) override {
      container_->used_[process_] += ns;
    }
    uint64_t ContainerGpuTime(int device) override {
      uint64_t sum = 0;
      for (uint64_t used : container_->used_) sum += used;
      return sum;
    }

   private:
    ContainerLedger* container_;
    int process_;
  };
  explicit ContainerLedger(int processes) : used_(processes, 0) {}
  View ViewFor(int process) { return View(this, process); }
  uint64_t used(int process) const { return used_[process]; }

 private:
  std::vector<uint64_t> used_;
};

LimiterDriver SimulatedDriver() {
  LimiterDriver driver;
  driver.event_create = &SimulatedGpu::EventCreate;
  driver.event_record = &SimulatedGpu::EventRecord;
  driver.event_query = &SimulatedGpu::EventQuery;
  driver.event_elapsed = &SimulatedGpu::EventElapsedTime;
  driver.event_destroy = &SimulatedGpu::EventDestroy;
  driver.stream_is_capturing = &SimulatedGpu::StreamIsCapturing;
  driver.ctx_get_current = &SimulatedGpu::CtxGetCurrent;
  driver.ctx_set_current = &SimulatedGpu::CtxSetCurrent;
  return driver;
}

// An application thread launching back to back on one stream.
struct Workload {
  int owner = 0;  // process tag in the simulated GPU
  int64_t kernel_ns = kMs;
  int64_t until_ns = 8 * kS;
  // Host time of the real launch call, between BeforeLaunch's start event
  // and the work reaching the GPU.
  int64_t launch_cost_ns = 3 * kUs;
  // Launches the application leaves outstanding before it waits for the
  // oldest (the driver's launch queue is about 1024 deep; 1 = synchronize
  // after every launch).
  size_t max_outstanding = 1024;
  LaunchKind kind = LaunchKind::kKernel;
  CUstream stream = reinterpret_cast<CUstream>(0x10);
};

void RunWorkload(SmLimiter* limiter, SimulatedGpu* gpu, VirtualTime* time,
                 const Workload& w) {
  std::deque<int64_t> outstanding;
  while (time->NowNs() < w.until_ns) {
    while (!outstanding.empty() && outstanding.front() <= time->NowNs()) {
      outstanding.pop_front();
    }
    if (outstanding.size() >= w.max_outstanding) {
      time->SleepNs(outstanding.front() - time->NowNs());
      continue;
    }
    const SmLimiter::Ticket ticket = limiter->BeforeLaunch(0, w.stream, w.kind);
    time->SleepNs(w.launch_cost_ns);
    outstanding.push_back(gpu->Launch(w.owner, w.kernel_ns));
    limiter->AfterLaunch(ticket, w.stream, true);
  }
}

class SmLimiterTest : public ::testing::Test {
 protected:
  SmLimiterTest() : gpu_(&time_), clock_(&time_) {
    SimulatedGpu::current = &gpu_;
  }
  ~SmLimiterTest() override {
    time_.ClearTimers();
    SimulatedGpu::current = nullptr;
  }

  // A limiter whose meter ticks on virtual time.
  std::unique_ptr<SmLimiter> Limiter(std::vector<int> percent,
                                     GpuTimeLedger* ledger,
                                     int64_t depth_ns = 50 * kMs) {
    SmLimiterOptions options;
    options.percent_by_device = std::move(percent);
    options.bucket_depth_ns = depth_ns;
    options.manual_meter = true;
    std::unique_ptr<SmLimiter> limiter =
        SmLimiter::Create(SimulatedDriver(), ledger, &clock_, options);
    if (limiter != nullptr) {
      SmLimiter* raw = limiter.get();
      time_.AddTimer(options.tick_ns, [raw] { raw->MeterTickForTesting(); });
    }
    return limiter;
  }

  // Busy share of `owner` (percent) in every 1 s window sliding by 100 ms
  // from `from` to `to`.
  std::vector<double> WindowShares(int owner, int64_t from, int64_t to) {
    std::vector<double> shares;
    for (int64_t t = from; t + kS <= to; t += 100 * kMs) {
      shares.push_back(100.0 * gpu_.BusyNs(owner, t, t + kS) / kS);
    }
    return shares;
  }

  VirtualTime time_;
  SimulatedGpu gpu_;
  VirtualClock clock_;
};

// ---- Accuracy: limit x kernel length ---------------------------------------

class SmLimiterAccuracyTest
    : public SmLimiterTest,
      public ::testing::WithParamInterface<std::tuple<int, int64_t, size_t>> {};

TEST_P(SmLimiterAccuracyTest, BusyWithinFivePointsInEverySecondAfterTwo) {
  const auto [percent, kernel_ns, max_outstanding] = GetParam();
  std::unique_ptr<SmLimiter> limiter = Limiter({percent}, nullptr);
  ASSERT_NE(limiter, nullptr);
  Workload w;
  w.kernel_ns = kernel_ns;
  w.max_outstanding = max_outstanding;
  w.until_ns = 8 * kS;
  time_.Run({[&] { RunWorkload(limiter.get(), &gpu_, &time_, w); }});

  const std::vector<double> shares = WindowShares(0, 2 * kS, 8 * kS);
  ASSERT_FALSE(shares.empty());
  for (size_t i = 0; i < shares.size(); ++i) {
    EXPECT_NEAR(shares[i], percent, 5.0)
        << "window starting at " << 2.0 + 0.1 * i << " s";
  }
  // And the estimate learnt the kernel length (within the 3 us of launch
  // latency an idle stream adds between start event and kernel).
  EXPECT_NEAR(limiter->EstimateNs(0, LaunchKind::kKernel), kernel_ns,
              kernel_ns / 10 + 5 * kUs);
}

INSTANTIATE_TEST_SUITE_P(
    LimitsByKernelLength, SmLimiterAccuracyTest,
    ::testing::Combine(::testing::Values(10, 25, 50, 75),
                       ::testing::Values(50 * kUs, 1 * kMs, 20 * kMs),
                       // Deep asynchronous queue, and sync after each launch.
                       ::testing::Values(size_t{1024}, size_t{1})),
    [](const auto& info) {
      return "Limit" + std::to_string(std::get<0>(info.param)) + "Kernel" +
             std::to_string(std::get<1>(info.param) / kUs) + "us" +
             (std::get<2>(info.param) == 1 ? "Sync" : "Async");
    });

// ---- Several processes -----------------------------------------------------

TEST_F(SmLimiterTest, TwoContainersAt20And80SplitTheGpu20To80) {
  // Each container has its own region, so its own ledger.
  ContainerLedger first(1), second(1);
  ContainerLedger::View first_view = first.ViewFor(0);
  ContainerLedger::View second_view = second.ViewFor(0);
  std::unique_ptr<SmLimiter> low = Limiter({20}, &first_view);
  std::unique_ptr<SmLimiter> high = Limiter({80}, &second_view);
  Workload a, b;
  a.owner = 0;
  b.owner = 1;
  a.kernel_ns = b.kernel_ns = kMs;
  a.stream = reinterpret_cast<CUstream>(0x10);
  b.stream = reinterpret_cast<CUstream>(0x20);
  time_.Run({[&] { RunWorkload(low.get(), &gpu_, &time_, a); },
             [&] { RunWorkload(high.get(), &gpu_, &time_, b); }});

  for (double share : WindowShares(0, 2 * kS, 8 * kS))
    EXPECT_NEAR(share, 20, 5);
  for (double share : WindowShares(1, 2 * kS, 8 * kS))
    EXPECT_NEAR(share, 80, 5);
  // What each published is what it ran.
  EXPECT_NEAR(static_cast<double>(first.used(0)),
              static_cast<double>(gpu_.BusyNs(0, 0, 8 * kS)), 0.02 * kS);
}

TEST_F(SmLimiterTest, TwoProcessesOfOneContainerShareItsLimit) {
  ContainerLedger container(2);
  ContainerLedger::View view0 = container.ViewFor(0);
  ContainerLedger::View view1 = container.ViewFor(1);
  std::unique_ptr<SmLimiter> p0 = Limiter({50}, &view0);
  std::unique_ptr<SmLimiter> p1 = Limiter({50}, &view1);
  Workload a, b;
  a.owner = 0;
  b.owner = 1;
  a.kernel_ns = 200 * kUs;
  b.kernel_ns = 5 * kMs;
  b.stream = reinterpret_cast<CUstream>(0x20);
  time_.Run({[&] { RunWorkload(p0.get(), &gpu_, &time_, a); },
             [&] { RunWorkload(p1.get(), &gpu_, &time_, b); }});

  for (double share : WindowShares(-1, 2 * kS, 8 * kS)) {
    EXPECT_NEAR(share, 50, 5);
  }
  // Neither is starved.
  EXPECT_GT(gpu_.BusyNs(0, 2 * kS, 8 * kS), kS / 2);
  EXPECT_GT(gpu_.BusyNs(1, 2 * kS, 8 * kS), kS / 2);
}

// ---- Bucket depth
// ------------------------------------------------------------

TEST_F(SmLimiterTest, IdleSecondBuysAtMostTheDepthOfBurst) {
  const int64_t depth = 50 * kMs;
  std::unique_ptr<SmLimiter> limiter = Limiter({50}, nullptr, depth);
  Workload w;
  w.kernel_ns = kMs;
  w.until_ns = 2 * kS;
  time_.Run({[&] {
    RunWorkload(limiter.get(), &gpu_, &time_, w);
    time_.SleepNs(kS);  // idle: 3 s
    w.until_ns = 5 * kS;
    RunWorkload(limiter.get(), &gpu_, &time_, w);
  }});
  EXPECT_LE(limiter->BalanceNs(0), depth);
  // In every stretch of the burst, at most rate x time + depth (+ one
  // kernel admitted on the last nanosecond of budget).
  const int64_t burst = 3 * kS;
  EXPECT_EQ(gpu_.BusyNs(0, 2 * kS + 10 * kMs, burst), 0);
  for (int64_t span = 10 * kMs; span <= kS; span += 10 * kMs) {
    EXPECT_LE(gpu_.BusyNs(0, burst, burst + span), span / 2 + depth + kMs)
        << "first " << span / kMs << " ms of the burst";
  }
  // The burst did use the saved budget: the first 100 ms ran well above
  // the 50 % rate.
  EXPECT_GT(gpu_.BusyNs(0, burst, burst + 100 * kMs), 50 * kMs + depth / 2);
}

TEST_F(SmLimiterTest, DepthIsCappedAt100Ms) {
  std::unique_ptr<SmLimiter> limiter = Limiter({50}, nullptr, 10 * kS);
  ASSERT_NE(limiter, nullptr);
  time_.SleepNs(2 * kS);
  EXPECT_EQ(limiter->BalanceNs(0), 100 * kMs);
}

// ---- Refunds, unlimited devices, capture, graphs -----------------------

TEST_F(SmLimiterTest, FailedLaunchRefundsItsCharge) {
  std::unique_ptr<SmLimiter> limiter = Limiter({10}, nullptr);
  const CUstream stream = reinterpret_cast<CUstream>(0x10);
  const int64_t before = limiter->BalanceNs(0);
  // Far more failed launches than the bucket holds: none may block (time
  // would move) or leave a charge behind.
  for (int i = 0; i < 1000; ++i) {
    SmLimiter::Ticket ticket = limiter->BeforeLaunch(0, stream);
    EXPECT_GT(ticket.charged_ns, 0);
    limiter->AfterLaunch(ticket, stream, /*launched=*/false);
  }
  EXPECT_EQ(time_.NowNs(), 0);
  EXPECT_EQ(limiter->BalanceNs(0), before);
  EXPECT_EQ(limiter->InFlight(0), 0);
  // The events went back to the pool: two were ever created.
  EXPECT_EQ(gpu_.events_created(), 2);

  // A launch that ran is charged.
  SmLimiter::Ticket ticket = limiter->BeforeLaunch(0, stream);
  gpu_.Launch(0, 5 * kMs);
  limiter->AfterLaunch(ticket, stream, true);
  EXPECT_EQ(limiter->BalanceNs(0), before - ticket.charged_ns);
}

TEST_F(SmLimiterTest, MeasuredTimeReplacesTheEstimate) {
  std::unique_ptr<SmLimiter> limiter = Limiter({50}, nullptr);
  const CUstream stream = reinterpret_cast<CUstream>(0x10);
  const int64_t before = limiter->BalanceNs(0);
  SmLimiter::Ticket ticket = limiter->BeforeLaunch(0, stream);
  gpu_.Launch(0, 7 * kMs);
  limiter->AfterLaunch(ticket, stream, true);
  EXPECT_EQ(limiter->InFlight(0), 1);
  time_.SleepNs(8 * kMs);  // done at 7 ms; ticks at 2, 4, 6, 8 ms
  EXPECT_EQ(limiter->InFlight(0), 0);
  EXPECT_NEAR(limiter->EstimateNs(0, LaunchKind::kKernel), 7 * kMs, 1 * kUs);
  // The bucket was full again by 2 ms (refills are capped at the depth);
  // the 8 ms tick settles 7 ms measured against the 1 ms charged, then
  // refills 50 % of 2 ms.
  EXPECT_NEAR(limiter->BalanceNs(0), before - 6 * kMs + 1 * kMs, 1 * kUs);
}

TEST_F(SmLimiterTest, UnlimitedDevicesAreNotLimited) {
  EXPECT_EQ(Limiter({0, 100, 150, -5}, nullptr), nullptr);
  EXPECT_EQ(Limiter({}, nullptr), nullptr);
  std::unique_ptr<SmLimiter> limiter = Limiter({0, 30, 100, 99, 1}, nullptr);
  ASSERT_NE(limiter, nullptr);
  EXPECT_FALSE(limiter->limits(0));
  EXPECT_TRUE(limiter->limits(1));
  EXPECT_FALSE(limiter->limits(2));
  EXPECT_TRUE(limiter->limits(3));
  EXPECT_TRUE(limiter->limits(4));
  EXPECT_FALSE(limiter->limits(5));
  EXPECT_FALSE(limiter->limits(-1));
  // An unlimited device's launch is not charged or measured.
  SmLimiter::Ticket ticket = limiter->BeforeLaunch(0, nullptr);
  EXPECT_EQ(ticket.device, -1);
  limiter->AfterLaunch(ticket, nullptr, true);
  EXPECT_EQ(gpu_.records(), 0);
}

TEST_F(SmLimiterTest, MissingDriverEntryPointsFailOpen) {
  SmLimiterOptions options;
  options.percent_by_device = {50};
  options.manual_meter = true;
  LimiterDriver driver = SimulatedDriver();
  driver.stream_is_capturing = nullptr;
  EXPECT_EQ(SmLimiter::Create(driver, nullptr, &clock_, options), nullptr);
}

TEST_F(SmLimiterTest, CapturedLaunchesAreNeitherChargedNorRecorded) {
  std::unique_ptr<SmLimiter> limiter = Limiter({10}, nullptr);
  const CUstream stream = reinterpret_cast<CUstream>(0x10);
  gpu_.SetCapturing(stream, true);
  const int64_t before = limiter->BalanceNs(0);
  for (int i = 0; i < 100; ++i) {
    SmLimiter::Ticket ticket = limiter->BeforeLaunch(0, stream);
    limiter->AfterLaunch(ticket, stream, true);
  }
  EXPECT_EQ(gpu_.records(), 0);  // an event would have joined the graph
  EXPECT_EQ(limiter->BalanceNs(0), before);
  EXPECT_EQ(time_.NowNs(), 0);
}

TEST_F(SmLimiterTest, GraphLaunchIsOneMeasuredPair) {
  std::unique_ptr<SmLimiter> limiter = Limiter({25}, nullptr);
  Workload w;
  w.kind = LaunchKind::kGraph;
  w.kernel_ns = 4 * kMs;  // a graph of, say, four 1 ms kernels
  time_.Run({[&] { RunWorkload(limiter.get(), &gpu_, &time_, w); }});
  for (double share : WindowShares(0, 2 * kS, 8 * kS))
    EXPECT_NEAR(share, 25, 5);
  const int64_t graphs = gpu_.BusyNs(0, 0, 8 * kS) / (4 * kMs);
  EXPECT_NEAR(static_cast<double>(gpu_.records()), 2.0 * graphs, 4);
  EXPECT_NEAR(limiter->EstimateNs(0, LaunchKind::kGraph), 4 * kMs, 10 * kUs);
}

TEST_F(SmLimiterTest, UnmeasurableLaunchesAreChargedTheirEstimate) {
  ContainerLedger container(1);
  ContainerLedger::View view = container.ViewFor(0);
  std::unique_ptr<SmLimiter> limiter = Limiter({50}, &view);
  const CUstream stream = reinterpret_cast<CUstream>(0x10);
  gpu_.FailEventCreates(1000);
  const int64_t before = limiter->BalanceNs(0);
  SmLimiter::Ticket ticket = limiter->BeforeLaunch(0, stream);
  EXPECT_EQ(ticket.pool, -1);
  gpu_.Launch(0, kMs);
  limiter->AfterLaunch(ticket, stream, true);
  EXPECT_EQ(limiter->InFlight(0), 0);
  EXPECT_EQ(limiter->BalanceNs(0), before - ticket.charged_ns);
  time_.SleepNs(2 * kMs);  // one tick publishes it
  EXPECT_EQ(container.used(0), static_cast<uint64_t>(ticket.charged_ns));
}

TEST_F(SmLimiterTest, DestructionDestroysEveryEvent) {
  {
    std::unique_ptr<SmLimiter> limiter = Limiter({50}, nullptr);
    Workload w;
    w.kernel_ns = 300 * kUs;
    w.until_ns = 500 * kMs;
    time_.Run({[&] { RunWorkload(limiter.get(), &gpu_, &time_, w); }});
    EXPECT_GT(limiter->InFlight(0), 0);  // some still pending
    time_.ClearTimers();
  }
  EXPECT_GT(gpu_.events_created(), 2);
  EXPECT_EQ(gpu_.events_destroyed(), gpu_.events_created());
}

// ---- fork --------------------------------------------------------------

TEST_F(SmLimiterTest, ForkedChildGetsAWorkingMeter) {
  SmLimiterOptions options;
  options.percent_by_device = {50};
  options.tick_ns = 1 * kMs;
  // A real meter thread on the real clock; the simulated GPU stays at
  // virtual time 0, so zero-length work completes at once.
  std::unique_ptr<SmLimiter> limiter =
      SmLimiter::Create(SimulatedDriver(), nullptr, MonotonicClock(), options);
  ASSERT_NE(limiter, nullptr);
  const CUstream stream = reinterpret_cast<CUstream>(0x10);

  limiter->BeforeFork();
  const pid_t child = fork();
  if (child == 0) {
    limiter->AfterForkInChild();
    // The child's own meter settles the child's launch.
    SmLimiter::Ticket ticket = limiter->BeforeLaunch(0, stream);
    gpu_.Launch(0, 0);
    limiter->AfterLaunch(ticket, stream, true);
    for (int i = 0; i < 2000 && limiter->InFlight(0) != 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    _exit(ticket.pool >= 0 && limiter->InFlight(0) == 0 ? 0 : 1);
  }
  limiter->AfterForkInParent();
  ASSERT_GT(child, 0);
  // The parent's meter still runs too.
  SmLimiter::Ticket ticket = limiter->BeforeLaunch(0, stream);
  gpu_.Launch(0, 0);
  limiter->AfterLaunch(ticket, stream, true);
  for (int i = 0; i < 2000 && limiter->InFlight(0) != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(limiter->InFlight(0), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// ---- The hand-off ring --------------------------------------------------

TEST(SmLimiterRingTest, DeliversEveryValueExactlyOnceUnderContention) {
  // Small, so producers keep running into a full ring and consumers into an
  // empty one.
  MpmcRing<uint64_t, 64> ring;
  constexpr int kProducers = 4, kConsumers = 3;
  constexpr uint64_t kPerProducer = 200'000;
  std::atomic<uint64_t> sum{0}, count{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&ring, p] {
      for (uint64_t i = 1; i <= kPerProducer; ++i) {
        while (!ring.TryPush(p * kPerProducer + i)) std::this_thread::yield();
      }
    });
  }
  for (int c = 0; c < kConsumers; ++c) {
    threads.emplace_back([&] {
      uint64_t value;
      while (count.load() < kProducers * kPerProducer) {
        if (ring.TryPop(&value)) {
          sum.fetch_add(value);
          count.fetch_add(1);
        } else {
          std::this_thread::yield();
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const uint64_t n = kProducers * kPerProducer;
  EXPECT_EQ(count.load(), n);
  EXPECT_EQ(sum.load(), n * (n + 1) / 2);
  uint64_t value;
  EXPECT_FALSE(ring.TryPop(&value));
}

}  // namespace
}  // namespace deviceshare::vgpu
