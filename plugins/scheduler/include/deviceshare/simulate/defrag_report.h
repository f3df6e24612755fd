// File: simulate/defrag_report.h
//
// A defrag plan as `deviceshare-scheduler defrag` prints it: JSON
//   {"moves": [{"pod", "from", "to"}], "placements": [{"pod", "node",
//    "after_moves"}], "unplaceable": [{"pod", "reason"}], "targets",
//    "complete", "exact", "movable_pods", "notes": [...]}
// or a table: a headline, the moves in order, where each target goes,
// the unplaceable targets with their reasons, the notes.
//
// Thread safety: pure functions.
#ifndef DEVICESHARE_SIMULATE_DEFRAG_REPORT_H_
#define DEVICESHARE_SIMULATE_DEFRAG_REPORT_H_

#include <string>
#include <vector>

#include "deviceshare/simulate/defrag_run.h"
#include "nlohmann/json.hpp"

namespace deviceshare::simulate {

nlohmann::json DefragJson(const DefragRun& run,
                          const std::vector<std::string>& notes);
std::string DefragTable(const DefragRun& run,
                        const std::vector<std::string>& notes);

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_DEFRAG_REPORT_H_
