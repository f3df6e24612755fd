#include "deviceshare/simulate/table_report.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "deviceshare/dra/slice_json.h"
#include "deviceshare/mig/mig_backend.h"
#include "deviceshare/model/sharing_mode.h"
#include "deviceshare/simulate/text_table.h"

namespace deviceshare::simulate {
namespace {

// "20480MiB" when every device has the same amount, else a list.
template <typename Getter>
std::string PerDevice(const std::vector<DeviceGrant>& devices, Getter get,
                      absl::string_view unit) {
  std::vector<std::string> values;
  for (const DeviceGrant& grant : devices) {
    values.push_back(absl::StrCat(get(grant), unit));
  }
  bool same = std::all_of(values.begin(), values.end(),
                          [&](const std::string& v) { return v == values[0]; });
  return same ? values[0] : absl::StrJoin(values, ",");
}

// "cores=30 memory=4Gi shares=1".
std::string Consumed(const dra::DeviceResult& result) {
  std::vector<std::string> parts;
  for (const auto& [name, amount] : result.consumed) {
    parts.push_back(absl::StrCat(
        name, "=", dra::FormatQuantity(amount.value, amount.format)));
  }
  return parts.empty() ? "whole device" : absl::StrJoin(parts, " ");
}

// One row per device allocated to a placed pod's DRA claims.
std::string Claims(const SimulationReport& report) {
  TextTable table;
  table.AddRow(
      {"POD", "CLAIM", "REQUEST", "NODE", "DEVICE", "CONSUMED", "SHARE"});
  bool any = false;
  for (const PodPlacement& pod : report.result.placements) {
    for (const ClaimDecision& claim : pod.claims) {
      for (const dra::DeviceResult& result : claim.allocation.results) {
        any = true;
        table.AddRow(
            {pod.pod, claim.pod_claim, result.request, pod.node,
             absl::StrCat(result.driver, "/", result.pool, "/", result.device),
             Consumed(result),
             result.share_id.empty() ? "-" : result.share_id});
      }
    }
  }
  return any ? absl::StrCat("\nDRA claims\n", table.Render()) : "";
}

std::string Placements(const SimulationReport& report) {
  TextTable table;
  table.AddRow({"POD", "NODE", "SCORE", "CONTAINER", "GPUS", "MEMORY", "CORES",
                "MODE", "DEVICES"});
  for (const PodPlacement& pod : report.result.placements) {
    for (const ContainerPlacement& c : pod.containers) {
      if (c.devices.empty()) continue;
      std::vector<std::string> uuids;
      for (const DeviceGrant& grant : c.devices) {
        uuids.push_back(grant.mode == mig::kMode
                            ? absl::StrFormat("%s[%s@%d]", grant.uuid,
                                              grant.mig.profile,
                                              grant.mig.start)
                            : grant.uuid);
      }
      table.AddRow(
          {pod.pod, pod.node, absl::StrCat(pod.score),
           c.is_init ? absl::StrCat(c.name, " (init)") : c.name,
           absl::StrCat(c.devices.size()),
           PerDevice(
               c.devices, [](const DeviceGrant& g) { return g.memory_mib; },
               "MiB"),
           PerDevice(
               c.devices, [](const DeviceGrant& g) { return g.cores; }, "%"),
           PerDevice(
               c.devices,
               [](const DeviceGrant& g) { return SharingModeName(g.mode); },
               ""),
           absl::StrJoin(uuids, ",")});
    }
  }
  std::string out = table.Render();
  out += Claims(report);
  bool any_choice = false;
  for (const PodPlacement& pod : report.result.placements) {
    if (pod.mode_choice.empty()) continue;
    if (!any_choice) out += "\nMode choices\n";
    any_choice = true;
    absl::StrAppendFormat(&out, "  %s: %s\n", pod.pod, pod.mode_choice);
  }
  return out;
}

std::string Unschedulable(const SimulationReport& report) {
  std::string out = absl::StrFormat("\nUnschedulable (%d pods)\n",
                                    report.result.unschedulable.size());
  for (const PodUnschedulable& pod : report.result.unschedulable) {
    std::vector<std::string> counts;
    for (const auto& [code, count] : pod.reasons.counts) {
      counts.push_back(absl::StrCat(code, " x", count));
    }
    absl::StrAppendFormat(&out, "  %s: %s\n", pod.pod,
                          pod.reasons.nodes == 0 ? "no node registered"
                                                 : absl::StrJoin(counts, ", "));
    TextTable reasons;
    for (const auto& [node, reason] : pod.reasons.examples) {
      reasons.AddRow({node, reason});
    }
    out += reasons.Render("      ");
    const int64_t more =
        pod.reasons.nodes - static_cast<int64_t>(pod.reasons.examples.size());
    if (more > 0) absl::StrAppendFormat(&out, "      (%d more nodes)\n", more);
  }
  return out;
}

// Pods deleted to make room (--preemption), shown even without details:
// they are in neither list above.
std::string Evictions(const SimulationReport& report) {
  std::string out =
      absl::StrFormat("Evicted (%d pods)\n", report.result.evictions.size());
  TextTable table;
  for (const PodEviction& eviction : report.result.evictions) {
    table.AddRow({eviction.pod, absl::StrCat("on ", eviction.node),
                  absl::StrCat("for ", eviction.for_pod)});
  }
  return out + table.Render("  ") + "\n";
}

// Running pods left out are shown even without details: the usage above
// them is short by what they hold.
std::string Unaccounted(const SimulationReport& report) {
  std::string out = absl::StrFormat("Running pods not charged (%d)\n",
                                    report.result.unaccounted.size());
  for (const PodUnaccounted& pod : report.result.unaccounted) {
    absl::StrAppendFormat(&out, "  %s on %s: %s\n", pod.pod, pod.node,
                          pod.reason);
  }
  return out + "\n";
}

std::string SummaryLines(const Summary& s) {
  TextTable table;
  auto add = [&table](absl::string_view name, std::string value) {
    table.AddRow({std::string(name), std::move(value)});
  };
  add("pods", absl::StrCat(s.pods));
  add("placed", absl::StrCat(s.placed));
  add("unschedulable", absl::StrCat(s.unschedulable));
  if (s.preemption) add("evicted", absl::StrCat(s.evicted));
  add("nodes / GPUs", absl::StrFormat("%d / %d (%d unhealthy)", s.nodes, s.gpus,
                                      s.gpus_unhealthy));
  add("GPU memory allocated",
      absl::StrFormat("%.3f%% (%d of %d MiB)", s.gpu_memory_allocated_pct,
                      s.gpu_memory_allocated_mib, s.gpu_memory_capacity_mib));
  add("GPU cores allocated",
      absl::StrFormat("%.3f%% (%d of %d)", s.gpu_cores_allocated_pct,
                      s.gpu_cores_allocated, s.gpu_core_capacity));
  add("GPUs fully idle", absl::StrCat(s.gpus_fully_idle));
  add("decisions/s",
      absl::StrFormat("%.1f (%.3f ms in Schedule)", s.decisions_per_second,
                      s.decision_seconds_total * 1e3));
  add("decision latency",
      absl::StrFormat("p50 %.1f us, p99 %.1f us, max "
                      "%.1f us",
                      s.p50_decision_us, s.p99_decision_us, s.max_decision_us));
  return table.Render("  ");
}

}  // namespace

std::string ReportTable(const SimulationReport& report,
                        const TableOptions& options) {
  std::string out;
  if (options.details) {
    out += Placements(report);
    if (!report.result.unschedulable.empty()) out += Unschedulable(report);
    out += "\n";
  }
  if (!report.result.evictions.empty()) out += Evictions(report);
  if (!report.result.unaccounted.empty()) out += Unaccounted(report);
  out += "Summary\n";
  out += SummaryLines(report.summary);
  if (!report.notes.empty()) {
    out += "\nNotes\n";
    for (const std::string& note : report.notes) {
      absl::StrAppend(&out, "  - ", note, "\n");
    }
  }
  return out;
}

}  // namespace deviceshare::simulate
