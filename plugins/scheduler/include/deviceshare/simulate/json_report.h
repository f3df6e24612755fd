// File: simulate/json_report.h
//
// `simulate --output json`: one object, keys in this fixed order:
//   {"placements": [{"pod", "node", "containers": [{"name", "devices":
//        [{"uuid", "mode", "memory_mib", "cores"}], "env": {...}}],
//      "score"}],
//    "unschedulable": [{"pod", "reasons": {node: reason},
//      "reason_counts": {code: nodes}, "nodes_rejecting"}],
//    "unaccounted": [{"pod", "node", "reason"}],
//    "summary": {"pods", "placed", "unschedulable",
//      "gpu_memory_allocated_pct", "gpu_cores_allocated_pct",
//      "gpus_fully_idle", "decisions_per_second", "p99_decision_us",
//      then the other Summary fields},
//    "notes": [...]}
// Every container of a placed pod is listed (init containers too); one
// without GPUs has empty devices and env. `reasons` holds at most
// --max-reason-examples entries (ReasonDigest); `reason_counts` covers every
// node.
#ifndef DEVICESHARE_SIMULATE_JSON_REPORT_H_
#define DEVICESHARE_SIMULATE_JSON_REPORT_H_

#include "deviceshare/simulate/simulate.h"
#include "nlohmann/json.hpp"

namespace deviceshare::simulate {

nlohmann::ordered_json SummaryJson(const Summary& summary);
nlohmann::ordered_json ReportJson(const SimulationReport& report);

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_JSON_REPORT_H_
