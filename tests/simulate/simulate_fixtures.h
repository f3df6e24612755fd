// File: simulate_fixtures.h
//
// Helpers for the simulate tests: run the whole `simulate` pipeline
// (Simulate + ReportJson) on inputs given as text, and build short-form
// clusters tersely. Pod manifests and temp files: testing/input_text.h.
#ifndef DEVICESHARE_TESTS_SIMULATE_FIXTURES_H_
#define DEVICESHARE_TESTS_SIMULATE_FIXTURES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "deviceshare/simulate/json_report.h"
#include "deviceshare/simulate/simulate.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/input_text.h"

namespace deviceshare::testing {

// A short-form GPU entry list for node `node`: `count` GPUs of `model` with
// explicit uuids "GPU-<node>-<i>" (i from `first`), so tests read them.
inline std::string Gpus(const std::string& node, int count,
                        int64_t memory_mib = 81920,
                        const std::string& model = "NVIDIA A100-SXM4-80GB",
                        const std::string& extra = "", int first = 0) {
  std::string out;
  for (int i = first; i < first + count; ++i) {
    absl::StrAppend(&out, "  - {model: \"", model,
                    "\", memory_mib: ", memory_mib, ", uuid: GPU-", node, "-",
                    i, extra.empty() ? "" : ", ", extra, "}\n");
  }
  return out;
}

// A short-form node with the GPU entries `gpus` (from Gpus()).
inline std::string ShortNode(const std::string& name, const std::string& gpus) {
  return absl::StrCat("- name: ", name, "\n  gpus:\n", gpus);
}

inline std::string ShortCluster(const std::vector<std::string>& nodes) {
  return absl::StrCat("nodes:\n", absl::StrJoin(nodes, ""));
}

// Runs simulate on a cluster and pods given as text.
inline absl::StatusOr<nlohmann::ordered_json> SimulateJson(
    const std::string& cluster, const std::string& pods,
    const std::string& config = "",
    simulate::SimulateOptions options = simulate::SimulateOptions()) {
  options.cluster_path = WriteTempFile("cluster.yaml", cluster);
  options.pods_path = WriteTempFile("pods.yaml", pods);
  if (!config.empty()) {
    options.config_path = WriteTempFile("config.yaml", config);
  }
  absl::StatusOr<simulate::SimulationReport> report =
      simulate::Simulate(options);
  if (!report.ok()) return report.status();
  return simulate::ReportJson(*report);
}

// The placement of `pod` ("default/<name>" when no '/'), or null.
inline nlohmann::ordered_json PlacementOf(const nlohmann::ordered_json& report,
                                          std::string pod) {
  if (pod.find('/') == std::string::npos) pod = "default/" + pod;
  for (const auto& placement : report["placements"]) {
    if (placement["pod"] == pod) return placement;
  }
  return nullptr;
}

inline nlohmann::ordered_json UnschedulableOf(
    const nlohmann::ordered_json& report, std::string pod) {
  if (pod.find('/') == std::string::npos) pod = "default/" + pod;
  for (const auto& entry : report["unschedulable"]) {
    if (entry["pod"] == pod) return entry;
  }
  return nullptr;
}

// The uuids of container `container` of `pod`'s placement, in grant order.
inline std::vector<std::string> UuidsOf(const nlohmann::ordered_json& report,
                                        const std::string& pod,
                                        size_t container = 0) {
  std::vector<std::string> uuids;
  nlohmann::ordered_json placement = PlacementOf(report, pod);
  if (placement.is_null()) return uuids;
  for (const auto& device : placement["containers"][container]["devices"]) {
    uuids.push_back(device["uuid"].get<std::string>());
  }
  return uuids;
}

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_SIMULATE_FIXTURES_H_
