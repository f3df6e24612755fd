#include "deviceshare/simulate/summary.h"

#include <algorithm>
#include <cmath>

namespace deviceshare::simulate {
namespace {

double Round(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

double Percent(int64_t part, int64_t whole) {
  return whole > 0 ? Round(100.0 * static_cast<double>(part) / whole, 3) : 0.0;
}

}  // namespace

int64_t NearestRankPercentile(std::vector<int64_t> values, double q) {
  if (values.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(q * values.size()));
  rank = std::clamp<size_t>(rank, 1, values.size());
  std::nth_element(values.begin(), values.begin() + (rank - 1), values.end());
  return values[rank - 1];
}

Summary Summarize(const RunResult& result) {
  Summary s;
  s.pods = static_cast<int64_t>(result.decision_ns.size());
  s.placed = static_cast<int64_t>(result.placements.size());
  s.unschedulable = static_cast<int64_t>(result.unschedulable.size());
  const ClusterUsage& usage = result.usage;
  s.gpu_memory_allocated_pct =
      Percent(usage.memory_used_mib, usage.memory_capacity_mib);
  s.gpu_cores_allocated_pct = Percent(usage.cores_used, usage.core_capacity);
  s.gpus_fully_idle = usage.gpus_idle;
  int64_t total_ns = 0;
  for (int64_t ns : result.decision_ns) total_ns += ns;
  s.decision_seconds_total = Round(total_ns / 1e9, 9);
  s.decisions_per_second =
      total_ns > 0 ? Round(s.pods / (total_ns / 1e9), 1) : 0.0;
  s.p99_decision_us =
      Round(NearestRankPercentile(result.decision_ns, 0.99) / 1e3, 3);
  s.p50_decision_us =
      Round(NearestRankPercentile(result.decision_ns, 0.50) / 1e3, 3);
  s.max_decision_us =
      Round(NearestRankPercentile(result.decision_ns, 1.0) / 1e3, 3);
  s.nodes = usage.nodes;
  s.gpus = usage.gpus;
  s.gpus_unhealthy = usage.gpus_unhealthy;
  s.gpu_memory_capacity_mib = usage.memory_capacity_mib;
  s.gpu_memory_allocated_mib = usage.memory_used_mib;
  s.gpu_core_capacity = usage.core_capacity;
  s.gpu_cores_allocated = usage.cores_used;
  s.preemption = result.preemption;
  s.evicted = static_cast<int64_t>(result.evictions.size());
  return s;
}

}  // namespace deviceshare::simulate
