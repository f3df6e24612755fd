// Micro benchmarks of the hot path: filter + score of one pod on one 8-GPU
// node, and a whole Schedule() over N nodes. Report ratios measured in one
// run (these machines are shared), e.g. Schedule/5000 vs Schedule/1000.
#include <memory>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/hamicore/hamicore_backend.h"
#include "deviceshare/scheduler/scheduler.h"

namespace deviceshare {
namespace {

NodeInventory EightGpuNode(const std::string& name) {
  NodeInventory node;
  node.name = name;
  for (int i = 0; i < 8; ++i) {
    Gpu gpu;
    gpu.uuid = absl::StrCat("GPU-", name, "-", i);
    gpu.index = i;
    gpu.model = "NVIDIA-NVIDIA A100-SXM4-80GB";
    gpu.memory_mib = 81920;
    gpu.numa_node = i / 4;
    node.gpus.push_back(gpu);
  }
  return node;
}

PodRequest SmallPod(int n) {
  PodRequest pod;
  pod.uid = absl::StrCat("uid-", n);
  pod.name = absl::StrCat("p", n);
  ContainerRequest c;
  c.name = "main";
  c.gpu_count = 1 + n % 2;
  c.memory_mib = 4096 + 1024 * (n % 8);
  c.cores = 10 * (n % 4);
  pod.containers.push_back(c);
  return pod;
}

void BM_FilterAndScoreOneNode(benchmark::State& state) {
  auto backend = *hamicore::NewHamiCoreBackend(DeviceConfig{});
  NodeState node(EightGpuNode("n"));
  for (int i = 0; i < 20; ++i) (void)backend->Allocate(SmallPod(i), node, {});
  PodRequest pod = SmallPod(1000);
  for (auto _ : state) {
    NodeFit fit = backend->Filter(pod, node, {});
    benchmark::DoNotOptimize(backend->Score(node, fit.allocation, {}));
  }
}
BENCHMARK(BM_FilterAndScoreOneNode);

void BM_AllocateReleaseOneNode(benchmark::State& state) {
  auto backend = *hamicore::NewHamiCoreBackend(DeviceConfig{});
  NodeState node(EightGpuNode("n"));
  for (int i = 0; i < 20; ++i) (void)backend->Allocate(SmallPod(i), node, {});
  PodRequest pod = SmallPod(1000);
  for (auto _ : state) {
    benchmark::DoNotOptimize(backend->Allocate(pod, node, {}));
    backend->Release(pod.uid, node);
  }
}
BENCHMARK(BM_AllocateReleaseOneNode);

// One decision (consider every node, score, commit) on a cluster of
// state.range(0) nodes with two pods per node. Compare the node counts'
// times within one run.
void BM_ScheduleOnCluster(benchmark::State& state) {
  BackendRegistry registry;
  (void)RegisterBuiltinBackends(registry);
  auto scheduler = *Scheduler::Create(Config{}, registry);
  const int nodes = static_cast<int>(state.range(0));
  for (int n = 0; n < nodes; ++n) {
    (void)scheduler->UpsertNode(EightGpuNode(absl::StrCat("node-", n)));
  }
  int next = 0;
  for (; next < nodes * 2; ++next) (void)scheduler->Schedule(SmallPod(next));
  for (auto _ : state) {
    PodRequest pod = SmallPod(next++);
    benchmark::DoNotOptimize(scheduler->Schedule(pod));
    state.PauseTiming();
    scheduler->Release(pod.uid);
    state.ResumeTiming();
  }
}
BENCHMARK(BM_ScheduleOnCluster)
    ->Arg(1000)
    ->Arg(5000)
    ->Arg(20000)
    ->Unit(benchmark::kMicrosecond);

// A pod that fits nowhere, with its reasons counted on every node and ten
// explained (as simulate does), on state.range(0) nodes with two pods each.
// state.range(1) == 1: a workload's replicas, one shape again and again
// (the bucket tallies answer unchanged buckets); 0: a new shape each time.
void BM_ScheduleFailedPod(benchmark::State& state) {
  BackendRegistry registry;
  (void)RegisterBuiltinBackends(registry);
  auto scheduler = *Scheduler::Create(Config{}, registry);
  const int nodes = static_cast<int>(state.range(0));
  const bool replicas = state.range(1) == 1;
  for (int n = 0; n < nodes; ++n) {
    (void)scheduler->UpsertNode(EightGpuNode(absl::StrCat("node-", n)));
  }
  for (int next = 0; next < nodes * 2; ++next) {
    (void)scheduler->Schedule(SmallPod(next));
  }
  ScheduleOptions options;
  options.max_explained_nodes = 10;
  int n = 0;
  for (auto _ : state) {
    PodRequest pod = SmallPod(0);
    pod.uid = absl::StrCat("failing-", n);
    pod.containers[0].gpu_count = 1;
    // More than any GPU has.
    pod.containers[0].memory_mib = 90000 + (replicas ? 0 : n % 4096);
    ++n;
    benchmark::DoNotOptimize(scheduler->Schedule(pod, options));
  }
}
BENCHMARK(BM_ScheduleFailedPod)
    ->Args({1000, 1})
    ->Args({5000, 1})
    ->Args({20000, 1})
    ->Args({1000, 0})
    ->Args({5000, 0})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace deviceshare
