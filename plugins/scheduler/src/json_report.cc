#include "deviceshare/simulate/json_report.h"

#include <string>

#include "deviceshare/dra/allocation_json.h"
#include "deviceshare/scheduler/decision_json.h"

namespace deviceshare::simulate {
namespace {

using OrderedJson = nlohmann::ordered_json;

// {name, claim, results}: each result as a ResourceClaim's
// status.allocation.devices.results entry.
OrderedJson ClaimJson(const ClaimDecision& claim) {
  const nlohmann::json allocation =
      dra::AllocationResultToJson(claim.allocation);
  OrderedJson results = OrderedJson::array();
  for (const nlohmann::json& result : allocation["devices"]["results"]) {
    OrderedJson out;
    for (const char* key : {"request", "driver", "pool", "device",
                            "consumedCapacity", "shareID", "adminAccess"}) {
      if (result.contains(key)) out[key] = result[key];
    }
    results.push_back(std::move(out));
  }
  OrderedJson out;
  out["name"] = claim.pod_claim;
  out["claim"] = claim.claim_key;
  out["results"] = std::move(results);
  return out;
}

OrderedJson PlacementJson(const PodPlacement& placement) {
  OrderedJson containers = OrderedJson::array();
  for (const ContainerPlacement& container : placement.containers) {
    containers.push_back(ContainerDecisionJson(
        container.name, container.devices, container.env));
  }
  OrderedJson out;
  out["pod"] = placement.pod;
  out["node"] = placement.node;
  out["containers"] = std::move(containers);
  if (!placement.claims.empty()) {
    OrderedJson claims = OrderedJson::array();
    for (const ClaimDecision& claim : placement.claims) {
      claims.push_back(ClaimJson(claim));
    }
    out["claims"] = std::move(claims);
  }
  out["score"] = placement.score;
  if (!placement.mode_choice.empty()) {
    out["mode_choice"] = placement.mode_choice;
  }
  return out;
}

OrderedJson UnschedulableJson(const PodUnschedulable& pod) {
  OrderedJson reasons = OrderedJson::object();
  for (const auto& [node, reason] : pod.reasons.examples) {
    reasons[node] = reason;
  }
  OrderedJson counts = OrderedJson::object();
  for (const auto& [code, count] : pod.reasons.counts) counts[code] = count;
  OrderedJson out;
  out["pod"] = pod.pod;
  out["reasons"] = std::move(reasons);
  out["reason_counts"] = std::move(counts);
  out["nodes_rejecting"] = pod.reasons.nodes;
  return out;
}

}  // namespace

OrderedJson SummaryJson(const Summary& s) {
  OrderedJson out;
  out["pods"] = s.pods;
  out["placed"] = s.placed;
  out["unschedulable"] = s.unschedulable;
  out["gpu_memory_allocated_pct"] = s.gpu_memory_allocated_pct;
  out["gpu_cores_allocated_pct"] = s.gpu_cores_allocated_pct;
  out["gpus_fully_idle"] = s.gpus_fully_idle;
  out["decisions_per_second"] = s.decisions_per_second;
  out["p99_decision_us"] = s.p99_decision_us;
  out["nodes"] = s.nodes;
  out["gpus"] = s.gpus;
  out["gpus_unhealthy"] = s.gpus_unhealthy;
  out["gpu_memory_capacity_mib"] = s.gpu_memory_capacity_mib;
  out["gpu_memory_allocated_mib"] = s.gpu_memory_allocated_mib;
  out["gpu_core_capacity"] = s.gpu_core_capacity;
  out["gpu_cores_allocated"] = s.gpu_cores_allocated;
  out["decision_seconds_total"] = s.decision_seconds_total;
  out["p50_decision_us"] = s.p50_decision_us;
  out["max_decision_us"] = s.max_decision_us;
  if (s.preemption) out["evicted"] = s.evicted;
  return out;
}

OrderedJson ReportJson(const SimulationReport& report) {
  OrderedJson placements = OrderedJson::array();
  for (const PodPlacement& placement : report.result.placements) {
    placements.push_back(PlacementJson(placement));
  }
  OrderedJson unschedulable = OrderedJson::array();
  for (const PodUnschedulable& pod : report.result.unschedulable) {
    unschedulable.push_back(UnschedulableJson(pod));
  }
  OrderedJson unaccounted = OrderedJson::array();
  for (const PodUnaccounted& pod : report.result.unaccounted) {
    unaccounted.push_back(
        {{"pod", pod.pod}, {"node", pod.node}, {"reason", pod.reason}});
  }
  OrderedJson notes = OrderedJson::array();
  for (const std::string& note : report.notes) notes.push_back(note);
  OrderedJson out;
  out["placements"] = std::move(placements);
  out["unschedulable"] = std::move(unschedulable);
  out["unaccounted"] = std::move(unaccounted);
  if (report.result.preemption) {
    OrderedJson evictions = OrderedJson::array();
    for (const PodEviction& eviction : report.result.evictions) {
      evictions.push_back({{"pod", eviction.pod},
                           {"node", eviction.node},
                           {"for", eviction.for_pod}});
    }
    out["evictions"] = std::move(evictions);
  }
  out["summary"] = SummaryJson(report.summary);
  out["notes"] = std::move(notes);
  return out;
}

}  // namespace deviceshare::simulate
