// File: scheduler/cluster_usage.h
//
// ClusterUsage: the cluster's GPU totals at one moment, GPUs registered by
// annotation (their ledgers) and GPUs published as DRA devices together.
// What every host reports as "usage": simulate's summary and the C API's
// deviceshare_usage.
//
// Thread safety: ReadClusterUsage reads through Scheduler::Inspect, so it
// sees one consistent state and may run beside decisions.
#ifndef DEVICESHARE_SCHEDULER_CLUSTER_USAGE_H_
#define DEVICESHARE_SCHEDULER_CLUSTER_USAGE_H_

#include <cstdint>

#include "deviceshare/scheduler/scheduler.h"

namespace deviceshare {

struct ClusterUsage {
  int64_t nodes = 0;
  int64_t pods = 0;  // pods holding GPUs, reserved or bound
  int64_t gpus = 0;
  int64_t gpus_idle = 0;       // no tenant at all
  int64_t gpus_unhealthy = 0;  // registered GPUs only
  int64_t memory_capacity_mib = 0;
  int64_t memory_used_mib = 0;
  int64_t core_capacity = 0;  // percent, summed over GPUs
  int64_t cores_used = 0;
};

ClusterUsage ReadClusterUsage(const Scheduler& scheduler);

}  // namespace deviceshare

#endif  // DEVICESHARE_SCHEDULER_CLUSTER_USAGE_H_
