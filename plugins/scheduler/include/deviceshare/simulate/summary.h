// File: simulate/summary.h
//
// The figures a simulation is judged by, from a RunResult:
//   gpu_memory_allocated_pct = sum of used MiB / sum of capacity MiB x 100,
//     over all GPUs (healthy or not);
//   gpu_cores_allocated_pct  = the same for the SM share (cores);
//   gpus_fully_idle          = GPUs with no tenant;
//   decisions_per_second     = pods / the summed time of the Schedule calls;
//   p50/p99/max_decision_us  = nearest-rank percentiles of one call's time.
// Percentages are rounded to 3 decimals, rates to 1, microseconds to 3.
#ifndef DEVICESHARE_SIMULATE_SUMMARY_H_
#define DEVICESHARE_SIMULATE_SUMMARY_H_

#include <cstdint>
#include <vector>

#include "deviceshare/simulate/simulation.h"

namespace deviceshare::simulate {

struct Summary {
  int64_t pods = 0;
  int64_t placed = 0;
  int64_t unschedulable = 0;
  double gpu_memory_allocated_pct = 0;
  double gpu_cores_allocated_pct = 0;
  int64_t gpus_fully_idle = 0;
  double decisions_per_second = 0;
  double p99_decision_us = 0;
  // More, for comparing runs.
  int64_t nodes = 0;
  int64_t gpus = 0;
  int64_t gpus_unhealthy = 0;
  int64_t gpu_memory_capacity_mib = 0;
  int64_t gpu_memory_allocated_mib = 0;
  int64_t gpu_core_capacity = 0;
  int64_t gpu_cores_allocated = 0;
  double decision_seconds_total = 0;
  double p50_decision_us = 0;
  double max_decision_us = 0;
  // With --preemption: pods evicted (workload and running pods); the
  // evicted workload pods count in `pods` but in neither `placed` nor
  // `unschedulable`.
  bool preemption = false;
  int64_t evicted = 0;
};

Summary Summarize(const RunResult& result);

// Nearest-rank percentile (q in (0, 1]) of `values`, 0 when empty.
int64_t NearestRankPercentile(std::vector<int64_t> values, double q);

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_SUMMARY_H_
