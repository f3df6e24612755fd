// File: simulate/workload.h
//
// Workload: what one simulation replays: the nodes (as registered), the
// pods (in the order they are scheduled) and notes about how the input was
// read (assumptions, skipped objects), which the report prints.
#ifndef DEVICESHARE_SIMULATE_WORKLOAD_H_
#define DEVICESHARE_SIMULATE_WORKLOAD_H_

#include <string>
#include <vector>

#include "deviceshare/model/node_inventory.h"
#include "deviceshare/model/pod_request.h"

namespace deviceshare::simulate {

struct Workload {
  std::vector<NodeInventory> nodes;
  std::vector<PodRequest> pods;
  std::vector<std::string> notes;
};

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_WORKLOAD_H_
