// File: simulate/fgd_replay_report.h
//
// The FGD replay over several traces and policies (fgd_replay.h), and its
// three renderings: a table of unallocated GPU % (100 - allocated) at
// chosen arrived points, mean ± sd over the seeds; a CSV of every run's
// whole curve; an SVG plot of unallocated % against arrived % per policy
// (the mean over seeds), one panel per trace, with the ideal line
// max(0, 100 - arrived).
//
// Thread safety: plain functions.
#ifndef DEVICESHARE_SIMULATE_FGD_REPLAY_REPORT_H_
#define DEVICESHARE_SIMULATE_FGD_REPLAY_REPORT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "deviceshare/config/scheduler_config.h"
#include "deviceshare/simulate/fgd_replay.h"

namespace deviceshare::simulate {

// One trace's pods, as loaded, and the name shown for it ("default").
struct ReplayTrace {
  std::string name;
  std::vector<TracePod> pods;
};

// A policy as the replay runs it: both levels (node and GPU) by `name`.
struct ReplayPolicy {
  std::string name;
  Config config;
};

struct ReplaySeries {
  std::string trace;
  std::string policy;
  std::vector<ReplayRun> runs;  // one per seed, in seed order
};

struct ReplayResult {
  std::vector<ReplaySeries> series;  // trace-major, policies in given order
  double wall_seconds = 0;
};

// Every trace x policy x seed, the runs spread over every core (each run
// is independent and deterministic, so the result is the same on any
// machine). A policy config naming fgd without a typical workload gets the
// trace's (TraceTypicalWorkload), as FGD's runs do; fragaware learns its
// own. `progress(done, total)` after each run, from one thread at a time.
absl::StatusOr<ReplayResult> RunReplays(
    absl::Span<const NodeInventory> nodes, absl::Span<const ReplayTrace> traces,
    absl::Span<const ReplayPolicy> policies, absl::Span<const uint64_t> seeds,
    double inflate, const std::function<void(size_t, size_t)>& progress = {});

struct MeanSd {
  double mean = 0;
  double sd = 0;  // sample standard deviation; 0 for one run
  int runs = 0;   // runs with a value at that point
};

// Unallocated % at `arrived` over the series' runs (runs without a value
// there are left out).
MeanSd UnallocatedAt(const ReplaySeries& series, int arrived);

// Rows: trace, policy, then "mean ± sd" per point, placed pods (mean).
std::string ReplayTable(const ReplayResult& result,
                        absl::Span<const int> arrived_points);
// trace,policy,seed,arrived_pct,allocated_pct,unallocated_pct per point.
std::string ReplayCsv(const ReplayResult& result);
std::string ReplaySvg(const ReplayResult& result);

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_FGD_REPLAY_REPORT_H_
