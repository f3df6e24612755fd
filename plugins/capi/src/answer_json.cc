#include "answer_json.h"

#include <utility>

#include "deviceshare/dra/allocation_json.h"
#include "deviceshare/json_text.h"
#include "deviceshare/model/sharing_mode.h"
#include "deviceshare/scheduler/cluster_usage.h"
#include "deviceshare/scheduler/decision_json.h"
#include "deviceshare/status_macros.h"
#include "nlohmann/json.hpp"

namespace deviceshare::capi {
namespace {

using OrderedJson = nlohmann::ordered_json;

OrderedJson ClaimsJson(const std::vector<ClaimDecision>& claims) {
  OrderedJson out = OrderedJson::array();
  for (const ClaimDecision& claim : claims) {
    OrderedJson entry;
    entry["name"] = claim.pod_claim;
    entry["claim"] = claim.claim_key;
    entry["new"] = claim.newly_allocated;
    entry["allocation"] = dra::AllocationResultToJson(claim.allocation);
    out.push_back(std::move(entry));
  }
  return out;
}

OrderedJson UnplacedJson(const PodRequest& request, const Decision& decision) {
  OrderedJson reasons = OrderedJson::object();
  for (const auto& [node, reason] : decision.reasons) reasons[node] = reason;
  OrderedJson counts = OrderedJson::object();
  for (const auto& [code, nodes] : decision.reason_counts) {
    counts[code] = nodes;
  }
  OrderedJson out;
  out["placed"] = false;
  out["pod"] = request.Key();
  out["reasons"] = std::move(reasons);
  out["reason_counts"] = std::move(counts);
  return out;
}

}  // namespace

absl::StatusOr<std::string> DecisionJson(const Scheduler& scheduler,
                                         const PodRequest& request,
                                         const Decision& decision) {
  if (!decision.allocation) return JsonText(UnplacedJson(request, decision));
  const PodAllocation& allocation = *decision.allocation;
  // The pod's uid names its containers' cache files (the env), as the
  // node agent will derive them.
  DS_ASSIGN_OR_RETURN(OrderedJson containers,
                      PlacedContainersJson(scheduler, request, allocation));
  OrderedJson annotations = OrderedJson::object();
  for (const auto& [key, value] : decision.annotations) {
    annotations[key] = value;
  }
  OrderedJson out;
  out["placed"] = true;
  out["pod"] = request.Key();
  out["node"] = allocation.node_name;
  out["score"] = decision.score;
  out["mode"] = std::string(SharingModeName(decision.mode));
  out["mode_choice"] = decision.mode_choice;
  out["containers"] = std::move(containers);
  out["annotations"] = std::move(annotations);
  out["claims"] = ClaimsJson(decision.claims);
  return JsonText(out);
}

std::string VerdictsJson(const std::vector<NodeVerdict>& verdicts) {
  OrderedJson out = OrderedJson::array();
  for (const NodeVerdict& verdict : verdicts) {
    const bool fits = verdict.fit.fits();
    OrderedJson entry;
    entry["node"] = verdict.node;
    entry["fits"] = fits;
    entry["code"] = std::string(ReasonCodeName(verdict.fit.code));
    entry["unresolvable"] = !fits && verdict.fit.code.unresolvable();
    entry["reason"] = fits ? std::string() : verdict.fit.Reason();
    entry["score"] = fits ? verdict.score : 0;
    out.push_back(std::move(entry));
  }
  return JsonText(out);
}

std::string UsageJson(const Scheduler& scheduler) {
  const ClusterUsage usage = ReadClusterUsage(scheduler);
  OrderedJson out;
  out["nodes"] = usage.nodes;
  out["pods"] = usage.pods;
  out["gpus"] = usage.gpus;
  out["gpus_idle"] = usage.gpus_idle;
  out["memory_capacity_mib"] = usage.memory_capacity_mib;
  out["memory_used_mib"] = usage.memory_used_mib;
  out["core_capacity"] = usage.core_capacity;
  out["cores_used"] = usage.cores_used;
  return JsonText(out);
}

}  // namespace deviceshare::capi
