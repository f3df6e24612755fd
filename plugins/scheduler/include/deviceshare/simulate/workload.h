// File: simulate/workload.h
//
// Workload: what one simulation replays: the nodes (as registered), the
// pods (in the order they are scheduled) and notes about how the input was
// read (assumptions, skipped objects), which the report prints.
#ifndef DEVICESHARE_SIMULATE_WORKLOAD_H_
#define DEVICESHARE_SIMULATE_WORKLOAD_H_

#include <string>
#include <vector>

#include "deviceshare/dra/claim_spec.h"
#include "deviceshare/dra/device_class.h"
#include "deviceshare/dra/resource_slice.h"
#include "deviceshare/input/pod_loader.h"
#include "deviceshare/model/gpu_quota.h"
#include "deviceshare/model/node_inventory.h"
#include "deviceshare/model/pod_request.h"
#include "deviceshare/simulate/disruption_budgets.h"

namespace deviceshare::simulate {

struct Workload {
  std::vector<NodeInventory> nodes;
  std::vector<PodRequest> pods;
  // Pods that already carry an allocation record: charged as they stand
  // before `pods` are scheduled.
  std::vector<input::RecordedPod> running;
  std::vector<std::string> notes;
  // DRA: the devices nodes publish, the classes and the claims pods use.
  std::vector<dra::ResourceSlice> slices;
  std::vector<dra::DeviceClass> classes;
  std::vector<dra::ResourceClaim> claims;
  // Namespaces' GPU quotas (ResourceQuota objects of the pods file).
  std::vector<GpuQuota> quotas;
  // Pods' priorities by uid (PriorityClass objects and spec.priority of
  // the pods file); read only with --preemption.
  input::PodPriorityMap priorities;
  // PodDisruptionBudgets of the pods file (with --preemption).
  BudgetGroups budgets;
};

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_WORKLOAD_H_
