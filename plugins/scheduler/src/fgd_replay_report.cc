#include "deviceshare/simulate/fgd_replay_report.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "deviceshare/policy/fgd/fgd_policy.h"
#include "deviceshare/simulate/text_table.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::simulate {
namespace {

double ValueAt(const ReplayRun& run, int arrived) {
  if (arrived < 0 ||
      static_cast<size_t>(arrived) >= run.allocated_percent.size()) {
    return std::nan("");
  }
  return run.allocated_percent[static_cast<size_t>(arrived)];
}

int LastArrived(const ReplayResult& result) {
  int last = 0;
  for (const ReplaySeries& series : result.series) {
    for (const ReplayRun& run : series.runs) {
      last = std::max(last, static_cast<int>(run.allocated_percent.size()) - 1);
    }
  }
  return last;
}

}  // namespace

absl::StatusOr<ReplayResult> RunReplays(
    absl::Span<const NodeInventory> nodes, absl::Span<const ReplayTrace> traces,
    absl::Span<const ReplayPolicy> policies, absl::Span<const uint64_t> seeds,
    double inflate, const std::function<void(size_t, size_t)>& progress) {
  const auto start = std::chrono::steady_clock::now();
  // One config per (trace, policy): FGD is given the trace's workload, as
  // in its paper; fragaware learns its own from the pods it sees unless
  // the config fixes one.
  std::vector<Config> configs;
  for (const ReplayTrace& trace : traces) {
    const std::vector<WorkloadShape> typical = TraceTypicalWorkload(trace.pods);
    for (const ReplayPolicy& policy : policies) {
      Config config = policy.config;
      const bool uses_fgd = config.scheduler.node_policy == kFgdPolicyName ||
                            config.scheduler.gpu_policy == kFgdPolicyName;
      if (uses_fgd && config.scheduler.typical_workload.empty()) {
        config.scheduler.typical_workload = typical;
      }
      configs.push_back(std::move(config));
    }
  }
  // Every run is independent (its own scheduler and seed): they run on
  // every core, each into its own slot, so the result does not depend on
  // the order they finish in.
  const size_t per_series = seeds.size();
  const size_t total = configs.size() * per_series;
  std::vector<absl::StatusOr<ReplayRun>> runs(total,
                                              absl::UnknownError("not run"));
  std::atomic<size_t> next{0};
  absl::Mutex progress_mu;
  size_t done = 0;
  auto work = [&] {
    for (size_t job = next++; job < total; job = next++) {
      const size_t series = job / per_series;
      const ReplayTrace& trace = traces[series / policies.size()];
      runs[job] = ReplayOnce(configs[series], nodes, trace.pods,
                             seeds[job % per_series], inflate);
      absl::MutexLock lock(&progress_mu);
      ++done;
      if (progress) progress(done, total);
    }
  };
  const size_t workers = std::clamp<size_t>(std::thread::hardware_concurrency(),
                                            1, std::max<size_t>(total, 1));
  std::vector<std::thread> threads;
  for (size_t i = 1; i < workers; ++i) threads.emplace_back(work);
  work();
  for (std::thread& thread : threads) thread.join();

  ReplayResult result;
  for (size_t series = 0; series < configs.size(); ++series) {
    const ReplayTrace& trace = traces[series / policies.size()];
    const ReplayPolicy& policy = policies[series % policies.size()];
    ReplaySeries out{trace.name, policy.name, {}};
    for (size_t i = 0; i < per_series; ++i) {
      absl::StatusOr<ReplayRun>& run = runs[series * per_series + i];
      if (!run.ok()) {
        return absl::Status(
            run.status().code(),
            absl::StrFormat("replay of %s with %s, seed %d: %s", trace.name,
                            policy.name, seeds[i], run.status().message()));
      }
      out.runs.push_back(*std::move(run));
    }
    result.series.push_back(std::move(out));
  }
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return result;
}

MeanSd UnallocatedAt(const ReplaySeries& series, int arrived) {
  std::vector<double> values;
  for (const ReplayRun& run : series.runs) {
    const double allocated = ValueAt(run, arrived);
    if (!std::isnan(allocated)) values.push_back(100.0 - allocated);
  }
  MeanSd stat;
  stat.runs = static_cast<int>(values.size());
  if (values.empty()) return stat;
  for (double v : values) stat.mean += v;
  stat.mean /= static_cast<double>(values.size());
  if (values.size() > 1) {
    double squares = 0;
    for (double v : values) squares += (v - stat.mean) * (v - stat.mean);
    stat.sd = std::sqrt(squares / static_cast<double>(values.size() - 1));
  }
  return stat;
}

std::string ReplayTable(const ReplayResult& result,
                        absl::Span<const int> arrived_points) {
  TextTable table;
  std::vector<std::string> header = {"trace", "policy"};
  for (int point : arrived_points) {
    header.push_back(absl::StrFormat("unalloc@%d%%", point));
  }
  header.push_back("placed");
  table.AddRow(std::move(header));
  for (const ReplaySeries& series : result.series) {
    std::vector<std::string> row = {series.trace, series.policy};
    for (int point : arrived_points) {
      const MeanSd stat = UnallocatedAt(series, point);
      row.push_back(stat.runs == 0
                        ? "-"
                        : absl::StrFormat("%.2f ± %.2f", stat.mean, stat.sd));
    }
    double placed = 0;
    double pods = 0;
    for (const ReplayRun& run : series.runs) {
      placed += static_cast<double>(run.placed);
      pods += static_cast<double>(run.pods);
    }
    const double n =
        std::max<double>(1, static_cast<double>(series.runs.size()));
    row.push_back(absl::StrFormat("%.0f/%.0f", placed / n, pods / n));
    table.AddRow(std::move(row));
  }
  return table.Render();
}

std::string ReplayCsv(const ReplayResult& result) {
  std::string csv =
      "trace,policy,seed,arrived_pct,allocated_pct,unallocated_pct\n";
  for (const ReplaySeries& series : result.series) {
    for (const ReplayRun& run : series.runs) {
      for (size_t x = 0; x < run.allocated_percent.size(); ++x) {
        const double allocated = run.allocated_percent[x];
        if (std::isnan(allocated)) continue;
        absl::StrAppendFormat(&csv, "%s,%s,%d,%d,%.4f,%.4f\n", series.trace,
                              series.policy, run.seed, x, allocated,
                              100.0 - allocated);
      }
    }
  }
  return csv;
}

namespace {

// Plot geometry: one panel per trace, side by side.
constexpr int kPanelWidth = 420;
constexpr int kPanelHeight = 300;
constexpr int kMargin = 45;
constexpr int kFirstArrived = 60;
constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c",
                                   "#9467bd", "#ff7f0e", "#8c564b"};

struct Axes {
  double left, top, width, height;
  int last_arrived;
  double top_unallocated;
  double X(double arrived) const {
    return left +
           (arrived - kFirstArrived) / (last_arrived - kFirstArrived) * width;
  }
  double Y(double unallocated) const {
    return top + height -
           std::clamp(unallocated, 0.0, top_unallocated) / top_unallocated *
               height;
  }
};

void DrawAxes(const Axes& axes, const std::string& title, std::string& svg) {
  absl::StrAppendFormat(
      &svg,
      "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
      "fill=\"none\" stroke=\"#888\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
      "text-anchor=\"middle\" font-weight=\"bold\">%s</text>\n",
      axes.left, axes.top, axes.width, axes.height, axes.left + axes.width / 2,
      axes.top - 8, title);
  for (int x = kFirstArrived; x <= axes.last_arrived; x += 10) {
    absl::StrAppendFormat(&svg,
                          "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                          "font-size=\"10\">%d</text>\n",
                          axes.X(x), axes.top + axes.height + 14, x);
  }
  for (int y = 0; y <= axes.top_unallocated; y += 5) {
    absl::StrAppendFormat(&svg,
                          "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
                          "font-size=\"10\">%d</text>\n",
                          axes.left - 4, axes.Y(y) + 3, y);
  }
  // The ideal: every arrived GPU allocated until the cluster is full.
  absl::StrAppendFormat(
      &svg,
      "<polyline fill=\"none\" stroke=\"#aaa\" stroke-dasharray=\"4 3\" "
      "points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>\n",
      axes.X(kFirstArrived), axes.Y(100 - kFirstArrived), axes.X(100),
      axes.Y(0), axes.X(axes.last_arrived), axes.Y(0));
}

void DrawSeries(const Axes& axes, const ReplaySeries& series, const char* color,
                std::string& svg) {
  std::string points;
  for (int x = kFirstArrived; x <= axes.last_arrived; ++x) {
    const MeanSd stat = UnallocatedAt(series, x);
    if (stat.runs == 0) continue;
    absl::StrAppendFormat(&points, "%.1f,%.1f ", axes.X(x), axes.Y(stat.mean));
  }
  absl::StrAppendFormat(&svg,
                        "<polyline fill=\"none\" stroke=\"%s\" "
                        "stroke-width=\"1.5\" points=\"%s\"/>\n",
                        color, points);
}

}  // namespace

std::string ReplaySvg(const ReplayResult& result) {
  std::vector<std::string> traces;
  std::vector<std::string> policies;
  double top_unallocated = 5;
  const int last_arrived = LastArrived(result);
  for (const ReplaySeries& series : result.series) {
    if (std::find(traces.begin(), traces.end(), series.trace) == traces.end())
      traces.push_back(series.trace);
    if (std::find(policies.begin(), policies.end(), series.policy) ==
        policies.end())
      policies.push_back(series.policy);
    for (int x = kFirstArrived; x <= last_arrived; ++x) {
      const MeanSd stat = UnallocatedAt(series, x);
      if (stat.runs > 0) top_unallocated = std::max(top_unallocated, stat.mean);
    }
  }
  top_unallocated = std::min(100.0, std::ceil(top_unallocated / 5) * 5);
  const int last = std::max(last_arrived, kFirstArrived + 10);
  const int width = static_cast<int>(traces.size()) * kPanelWidth;
  const int height = kPanelHeight + 40;
  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
      width, height);
  for (size_t t = 0; t < traces.size(); ++t) {
    const Axes axes{static_cast<double>(t * kPanelWidth + kMargin),
                    30.0,
                    kPanelWidth - 1.5 * kMargin,
                    kPanelHeight - 1.5 * kMargin,
                    last,
                    top_unallocated};
    DrawAxes(axes, traces[t], svg);
    for (const ReplaySeries& series : result.series) {
      if (series.trace != traces[t]) continue;
      const size_t at =
          std::find(policies.begin(), policies.end(), series.policy) -
          policies.begin();
      DrawSeries(axes, series, kColors[at % std::size(kColors)], svg);
    }
  }
  for (size_t p = 0; p < policies.size(); ++p) {
    absl::StrAppendFormat(
        &svg, "<text x=\"%d\" y=\"%d\" fill=\"%s\">&#9632; %s</text>\n",
        kMargin + static_cast<int>(p) * 110, height - 8,
        kColors[p % std::size(kColors)], policies[p]);
  }
  absl::StrAppendFormat(
      &svg,
      "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"10\">"
      "x: arrived GPU %%, y: unallocated GPU %% (mean over seeds); dashed: "
      "ideal</text>\n</svg>\n",
      width - 10, height - 8);
  return svg;
}

}  // namespace deviceshare::simulate
