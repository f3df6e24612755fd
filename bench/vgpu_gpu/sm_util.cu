// GPU busy time under an SM limit, measured on the GPU side.
//
// A fixed-work spin kernel (grid G, block 256) is launched asynchronously for
// T seconds, either one launch at a time or as a captured CUDA graph of K
// kernel nodes. Every block stamps %globaltimer at entry and exit and folds
// the stamps into its launch's slot (min start, max end) in a device ring, so
// the host's launch path carries nothing extra. Afterwards, per 1 s window:
//   busy = |union of kernel intervals within the window| / 1 s
//   work = sum over kernels of (uncontended kernel time x the fraction of
//          the kernel's interval within the window) / 1 s
// With one process both agree. With several processes time-sliced on one GPU
// a kernel's interval also covers the slices given to the others, so only
// `work` measures each process's share; that is why the kernel does a fixed
// amount of work instead of spinning until a deadline.
//
//   sm_util --kernel-us 1000 --grid 8xSM --seconds 7 [--graph 4]
//           [--iters N --ref-ns D] [--start-at-ms EPOCH_MS] [--calibrate-only]
#include <chrono>
#include <cmath>
#include <thread>

#include "kit_common.cuh"

namespace {

using u64 = unsigned long long;

__device__ __forceinline__ u64 GlobalTimer() {
  u64 t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Launches on one stream never overlap and all have the same grid, so the
// n-th block to start belongs to launch n / gridDim.x.
__global__ void Spin(unsigned iters, u64* starts, u64* ends, u64* ticket,
                     u64 ring, unsigned* sink) {
  __shared__ u64 t_start;
  __shared__ u64 launch;
  if (threadIdx.x == 0) {
    t_start = GlobalTimer();
    launch = atomicAdd(ticket, 1ull) / gridDim.x;
  }
  __syncthreads();
  unsigned x = threadIdx.x;
  const unsigned a = 1664525u, c = 1013904223u;
  for (unsigned i = 0; i < iters; ++i) {
    asm volatile("mad.lo.u32 %0, %0, %1, %2;" : "+r"(x) : "r"(a), "r"(c));
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const u64 t_end = GlobalTimer();
    const u64 slot = launch % ring;
    atomicMin(&starts[slot], t_start);
    atomicMax(&ends[slot], t_end);
    if (x == 0x9e3779b9u) *sink = x;  // keeps the loop's result alive
  }
}

struct Interval {
  u64 start, end;
};

class Bench {
 public:
  Bench(int grid, int block, size_t ring)
      : grid_(grid), block_(block), ring_(ring) {
    KIT_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    KIT_CHECK(cudaMalloc(&starts_, ring_ * sizeof(u64)));
    KIT_CHECK(cudaMalloc(&ends_, ring_ * sizeof(u64)));
    KIT_CHECK(cudaMalloc(&ticket_, sizeof(u64)));
    KIT_CHECK(cudaMalloc(&sink_, sizeof(unsigned)));
  }

  void Reset() {
    KIT_CHECK(cudaMemsetAsync(starts_, 0xff, ring_ * sizeof(u64), stream_));
    KIT_CHECK(cudaMemsetAsync(ends_, 0, ring_ * sizeof(u64), stream_));
    KIT_CHECK(cudaMemsetAsync(ticket_, 0, sizeof(u64), stream_));
    KIT_CHECK(cudaStreamSynchronize(stream_));
  }

  void Launch(unsigned iters) {
    Spin<<<grid_, block_, 0, stream_>>>(iters, starts_, ends_, ticket_, ring_,
                                        sink_);
  }

  // Captures `k` launches into one executable graph.
  cudaGraphExec_t Capture(unsigned iters, int k) {
    cudaGraph_t g = nullptr;
    cudaGraphExec_t exec = nullptr;
    KIT_CHECK(
        cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < k; ++i) Launch(iters);
    KIT_CHECK(cudaStreamEndCapture(stream_, &g));
    KIT_CHECK(cudaGraphInstantiate(&exec, g, 0));
    KIT_CHECK(cudaGraphDestroy(g));
    return exec;
  }

  // Intervals of the launches done since the last Reset, in launch order.
  std::vector<Interval> Collect() {
    KIT_CHECK(cudaStreamSynchronize(stream_));
    KIT_CHECK(cudaGetLastError());
    u64 blocks = 0;
    KIT_CHECK(
        cudaMemcpy(&blocks, ticket_, sizeof blocks, cudaMemcpyDeviceToHost));
    const u64 n = blocks / static_cast<u64>(grid_);
    if (n > ring_) {
      std::fprintf(stderr, "ring overflow: %llu launches, ring %zu\n", n,
                   ring_);
      std::exit(1);
    }
    std::vector<u64> s(n), e(n);
    if (n) {
      KIT_CHECK(cudaMemcpy(s.data(), starts_, n * sizeof(u64),
                           cudaMemcpyDeviceToHost));
      KIT_CHECK(
          cudaMemcpy(e.data(), ends_, n * sizeof(u64), cudaMemcpyDeviceToHost));
    }
    std::vector<Interval> out(n);
    for (u64 i = 0; i < n; ++i) out[i] = {s[i], e[i]};
    return out;
  }

  // Minimum kernel time over `reps` single launches (the uncontended time;
  // another process's time slice can only make a launch longer).
  double TimeOne(unsigned iters, int reps) {
    Reset();
    for (int i = 0; i < reps; ++i) {
      Launch(iters);
      KIT_CHECK(cudaStreamSynchronize(stream_));
    }
    double best = 1e30;
    for (const Interval& iv : Collect())
      best = std::min(best, double(iv.end - iv.start));
    return best;
  }

  cudaStream_t stream() const { return stream_; }

 private:
  int grid_, block_;
  size_t ring_;
  cudaStream_t stream_ = nullptr;
  u64 *starts_ = nullptr, *ends_ = nullptr, *ticket_ = nullptr;
  unsigned* sink_ = nullptr;
};

// Iterations for a kernel of about target_ns at this grid (the time per
// iteration depends on how many warps share a scheduler).
unsigned Calibrate(Bench& b, double target_ns) {
  b.TimeOne(1000, 2);  // module load and clocks up
  double iters = 20000;
  for (int round = 0; round < 4; ++round) {
    const double t = b.TimeOne(static_cast<unsigned>(iters), 3);
    const double next = iters * target_ns / std::max(t, 1.0);
    iters = std::min(next, 4.0e9);
    if (std::abs(t - target_ns) < 0.01 * target_ns) break;
  }
  return static_cast<unsigned>(std::max(1.0, iters));
}

int ResolveGrid(const std::string& g, int dev) {
  int sms = 0;
  KIT_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const size_t x = g.find("xSM");
  if (x != std::string::npos)
    return std::max(1, std::atoi(g.substr(0, x).c_str())) * sms;
  return std::max(1, std::atoi(g.c_str()));
}

std::string Join(const std::vector<double>& v) {
  std::string s;
  char buf[32];
  for (size_t i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%.1f", i ? "," : "", v[i]);
    s += buf;
  }
  return s.empty() ? "-" : s;
}

struct Stats {
  double mean = 0, min = 0, max = 0;
  int n = 0;
};

Stats From(const std::vector<double>& v, size_t skip) {
  Stats s;
  s.min = 1e30;
  s.max = -1e30;
  for (size_t i = skip; i < v.size(); ++i) {
    s.mean += v[i];
    s.min = std::min(s.min, v[i]);
    s.max = std::max(s.max, v[i]);
    ++s.n;
  }
  if (s.n == 0) return Stats{};
  s.mean /= s.n;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  kit::Args args(argc, argv);
  const int dev = kit::RequireDevice();
  const double kernel_us = args.Num("kernel-us", 1000);
  const std::string grid_arg = args.Str("grid", "8xSM");
  const int grid = ResolveGrid(grid_arg, dev);
  const int block = static_cast<int>(args.Num("block", 256));
  const double seconds = args.Num("seconds", 7);
  const int graph_k = static_cast<int>(args.Num("graph", 0));
  const double window_ns = args.Num("window-ms", 1000) * 1e6;
  const int skip_windows =
      static_cast<int>(args.Num("skip-s", 2) * 1e9 / window_ns);

  // Room for every launch the run could possibly make, plus the queue.
  const size_t ring =
      static_cast<size_t>(seconds * 1e6 / kernel_us * 1.1) + 20000;
  Bench bench(grid, block, ring);

  unsigned iters = static_cast<unsigned>(args.Num("iters", 0));
  if (iters == 0) iters = Calibrate(bench, kernel_us * 1e3);
  const double measured_ns = bench.TimeOne(iters, 3);
  if (args.Has("calibrate-only")) {
    kit::Result()
        .Add("iters", iters)
        .Fixed("kernel_ns", measured_ns, 0)
        .Print();
    return 0;
  }
  const double ref_ns = args.Num("ref-ns", 0);

  cudaGraphExec_t exec = graph_k > 0 ? bench.Capture(iters, graph_k) : nullptr;
  const int per_submit = graph_k > 0 ? graph_k : 1;
  // Keep about 200 ms of work queued: enough that the GPU never idles for
  // lack of work, little enough that the run ends soon after T.
  int batch = std::max(1, static_cast<int>(50000 / kernel_us));
  batch = (batch + per_submit - 1) / per_submit * per_submit;
  constexpr int kOutstanding = 4;
  cudaEvent_t events[kOutstanding];
  for (cudaEvent_t& e : events) {
    KIT_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }

  bench.Reset();
  if (args.Has("start-at-ms")) {
    // Two processes started together begin their timed loops together.
    const int64_t at = static_cast<int64_t>(args.Num("start-at-ms", 0));
    while (kit::RealtimeMs() < at)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const int64_t host_t0 = kit::NowNs();
  const int64_t host_end = host_t0 + static_cast<int64_t>(seconds * 1e9);
  size_t launched = 0;
  int since_event = 0, pending = 0, next_event = 0;
  while (kit::NowNs() < host_end && launched + per_submit + 1 < ring) {
    if (exec) {
      KIT_CHECK(cudaGraphLaunch(exec, bench.stream()));
    } else {
      bench.Launch(iters);
    }
    launched += per_submit;
    since_event += per_submit;
    if (since_event >= batch) {
      since_event = 0;
      if (pending == kOutstanding) {
        // The oldest event is the one about to be reused.
        KIT_CHECK(cudaEventSynchronize(events[next_event]));
        --pending;
      }
      KIT_CHECK(cudaEventRecord(events[next_event], bench.stream()));
      next_event = (next_event + 1) % kOutstanding;
      ++pending;
    }
  }
  const int64_t host_stop = kit::NowNs();
  std::vector<Interval> iv = bench.Collect();
  const int64_t host_drained = kit::NowNs();
  if (iv.size() != launched) {
    std::fprintf(stderr, "recorded %zu launches, issued %zu\n", iv.size(),
                 launched);
    return 1;
  }
  if (iv.empty()) return 1;

  std::vector<double> durations;
  durations.reserve(iv.size());
  for (const Interval& i : iv) durations.push_back(double(i.end - i.start));
  const double min_ns = *std::min_element(durations.begin(), durations.end());
  // Work per kernel: the caller's native figure when given (two processes
  // share the GPU), else the shortest kernel seen in this run.
  const double work_ns = ref_ns > 0 ? ref_ns : min_ns;

  // Windows count from the first kernel's start and end where the GPU last
  // got new work (the last kernel's start): later windows were not fed.
  u64 t0 = iv.front().start;
  for (const Interval& i : iv) t0 = std::min(t0, i.start);
  u64 fed_end = 0;
  for (const Interval& i : iv) fed_end = std::max(fed_end, i.start);
  const int windows = static_cast<int>(double(fed_end - t0) / window_ns);
  std::vector<double> busy(windows, 0), work(windows, 0);
  // Union of intervals: sort by start, merge, then cut into windows.
  std::vector<Interval> sorted = iv;
  std::sort(
      sorted.begin(), sorted.end(),
      [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> merged;
  for (const Interval& i : sorted) {
    if (!merged.empty() && i.start <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, i.end);
    } else {
      merged.push_back(i);
    }
  }
  auto overlap = [](double a0, double a1, double b0, double b1) {
    return std::max(0.0, std::min(a1, b1) - std::max(a0, b0));
  };
  for (int w = 0; w < windows; ++w) {
    const double w0 = double(t0) + w * window_ns, w1 = w0 + window_ns;
    for (const Interval& m : merged)
      busy[w] += overlap(w0, w1, double(m.start), double(m.end));
    for (const Interval& i : iv) {
      const double len = std::max(1.0, double(i.end - i.start));
      work[w] +=
          work_ns * overlap(w0, w1, double(i.start), double(i.end)) / len;
    }
    busy[w] *= 100.0 / window_ns;
    work[w] *= 100.0 / window_ns;
  }
  const Stats b = From(busy, skip_windows), k = From(work, skip_windows);

  kit::Result r;
  r.Add("label", args.Str("label", "-"))
      .Fixed("kernel_us", kernel_us, 0)
      .Add("grid", grid)
      .Add("grid_arg", grid_arg)
      .Add("block", block)
      .Add("graph", graph_k)
      .Add("iters", iters)
      .Fixed("calib_ns", measured_ns, 0)
      .Fixed("min_kernel_ns", min_ns, 0)
      .Fixed("p50_kernel_ns", kit::Percentile(durations, 0.5), 0)
      .Fixed("work_ns", work_ns, 0)
      .Add("launches", iv.size())
      .Fixed("host_s", double(host_stop - host_t0) / 1e9, 2)
      .Fixed("drain_s", double(host_drained - host_stop) / 1e9, 2)
      .Add("windows", windows)
      .Add("eval_windows", b.n)
      .Fixed("busy_mean", b.mean, 1)
      .Fixed("busy_min", b.min, 1)
      .Fixed("busy_max", b.max, 1)
      .Fixed("work_mean", k.mean, 1)
      .Fixed("work_min", k.min, 1)
      .Fixed("work_max", k.max, 1)
      .Add("busy_windows", Join(busy))
      .Add("work_windows", Join(work));
  r.Print();
  return 0;
}
