// Host-side cost of the hot paths the interposer sits on. One process prints
// three RESULT lines; run.sh runs it alternately native and preloaded and
// compares medians, since the added cost is far below process-to-process
// noise of any single run.
//   what=alloc live=0      cudaMalloc(1 MiB) + cudaFree pair, p50 ns
//   what=alloc live=10000  the same with 10,000 other allocations live
//   what=launch            host ns per async launch of an empty kernel,
//                          1000 launches between syncs (below queue depth)
//
//   overhead [--pairs 2000] [--live 10000] [--live-kib 1024]
//            [--rounds 300] [--per-round 1000] [--no-pin]
#include <pthread.h>
#include <sched.h>

#include "kit_common.cuh"

namespace {

using kit::kMiB;

__global__ void Empty() {}

// Pinning only the measuring thread keeps the driver's helper threads free
// while removing migrations from the timings.
void PinToCurrentCpu() {
  const int cpu = sched_getcpu();
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

std::vector<double> AllocFreePairs(int pairs, size_t bytes) {
  std::vector<double> ns;
  ns.reserve(pairs);
  for (int i = 0; i < pairs + pairs / 10; ++i) {
    void* p = nullptr;
    const int64_t t0 = kit::NowNs();
    KIT_CHECK(cudaMalloc(&p, bytes));
    KIT_CHECK(cudaFree(p));
    const int64_t t1 = kit::NowNs();
    if (i >= pairs / 10) ns.push_back(double(t1 - t0));  // first 10%: warmup
  }
  return ns;
}

void ReportAlloc(const std::vector<double>& ns, int live, size_t bytes) {
  kit::Result()
      .Add("what", "alloc")
      .Add("live", live)
      .Add("bytes", bytes)
      .Add("n", ns.size())
      .Fixed("p10_ns", kit::Percentile(ns, 0.10), 0)
      .Fixed("p50_ns", kit::Percentile(ns, 0.50), 0)
      .Fixed("p90_ns", kit::Percentile(ns, 0.90), 0)
      .Print();
}

}  // namespace

int main(int argc, char** argv) {
  kit::Args args(argc, argv);
  kit::RequireDevice();
  if (!args.Has("no-pin")) PinToCurrentCpu();
  const int pairs = static_cast<int>(args.Num("pairs", 2000));
  const int live = static_cast<int>(args.Num("live", 10000));
  const size_t live_bytes =
      static_cast<size_t>(args.Num("live-kib", 1024)) * 1024;
  const int rounds = static_cast<int>(args.Num("rounds", 300));
  const int per_round = static_cast<int>(args.Num("per-round", 1000));

  // (a) alloc/free with nothing else live, then with `live` allocations.
  ReportAlloc(AllocFreePairs(pairs, kMiB), 0, kMiB);
  std::vector<void*> held(live, nullptr);
  for (void*& p : held) KIT_CHECK(cudaMalloc(&p, live_bytes));
  ReportAlloc(AllocFreePairs(pairs, kMiB), live, kMiB);
  for (void* p : held) KIT_CHECK(cudaFree(p));

  // (b) launch cost. The kernel is empty, so the GPU drains the 1000
  // launches about as fast as they come and the host never blocks on a full
  // queue: the time is the launch call itself.
  cudaStream_t s;
  KIT_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int i = 0; i < per_round; ++i) Empty<<<1, 1, 0, s>>>();
  KIT_CHECK(cudaStreamSynchronize(s));
  std::vector<double> per_launch;
  per_launch.reserve(rounds);
  for (int r = 0; r < rounds; ++r) {
    const int64_t t0 = kit::NowNs();
    for (int i = 0; i < per_round; ++i) Empty<<<1, 1, 0, s>>>();
    const int64_t t1 = kit::NowNs();
    KIT_CHECK(cudaStreamSynchronize(s));
    per_launch.push_back(double(t1 - t0) / per_round);
  }
  KIT_CHECK(cudaGetLastError());
  kit::Result()
      .Add("what", "launch")
      .Add("rounds", rounds)
      .Add("per_round", per_round)
      .Fixed("p10_ns", kit::Percentile(per_launch, 0.10), 1)
      .Fixed("p50_ns", kit::Percentile(per_launch, 0.50), 1)
      .Fixed("p90_ns", kit::Percentile(per_launch, 0.90), 1)
      .Print();
  return 0;
}
