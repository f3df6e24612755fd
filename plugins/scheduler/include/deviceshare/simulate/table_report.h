// File: simulate/table_report.h
//
// `simulate --output table`, for people: one aligned line per placed
// container that has GPUs (pod, node, score, container, GPU count, memory
// and cores per GPU, device uuids), an "Unschedulable" section with each
// pod's reason counts and example node reasons, then the summary and the
// notes.
#ifndef DEVICESHARE_SIMULATE_TABLE_REPORT_H_
#define DEVICESHARE_SIMULATE_TABLE_REPORT_H_

#include <string>

#include "deviceshare/simulate/simulate.h"

namespace deviceshare::simulate {

struct TableOptions {
  // False: only the summary and the notes (for large replays).
  bool details = true;
};

std::string ReportTable(const SimulationReport& report,
                        const TableOptions& options = {});

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_TABLE_REPORT_H_
