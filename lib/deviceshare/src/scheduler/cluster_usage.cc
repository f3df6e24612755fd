#include "deviceshare/scheduler/cluster_usage.h"

#include "deviceshare/dra/dra_cluster.h"
#include "deviceshare/scheduler/cluster_state.h"

namespace deviceshare {

ClusterUsage ReadClusterUsage(const Scheduler& scheduler) {
  ClusterUsage usage;
  scheduler.Inspect([&usage](const ClusterState& state) {
    usage.nodes = static_cast<int64_t>(state.nodes().size());
    usage.pods = static_cast<int64_t>(state.pod_count());
    for (const auto& [name, node] : state.nodes()) {
      for (size_t i = 0; i < node->gpu_count(); ++i) {
        const DeviceLedger& ledger = node->ledger(i);
        ++usage.gpus;
        if (ledger.idle()) ++usage.gpus_idle;
        if (!ledger.gpu().healthy) ++usage.gpus_unhealthy;
        usage.memory_capacity_mib += ledger.memory_capacity_mib();
        usage.memory_used_mib += ledger.used_memory_mib();
        usage.core_capacity += ledger.core_capacity();
        usage.cores_used += ledger.used_cores();
      }
    }
    // GPUs published as DRA devices (MIG partitions not counted).
    const dra::GpuTotals dra = state.dra().Totals();
    usage.gpus += dra.devices;
    usage.gpus_idle += dra.idle;
    usage.memory_capacity_mib += dra.memory_capacity >> 20;
    usage.memory_used_mib += dra.memory_used >> 20;
    usage.core_capacity += dra.core_capacity;
    usage.cores_used += dra.cores_used;
  });
  return usage;
}

}  // namespace deviceshare
