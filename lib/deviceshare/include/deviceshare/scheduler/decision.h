// File: scheduler/decision.h
//
// The value types of the decision path (scheduler/decision_path.h): the
// verdict of the filter step for one node, and what a whole decision
// returns. Value types; no behaviour beyond the node order.
#ifndef DEVICESHARE_SCHEDULER_DECISION_H_
#define DEVICESHARE_SCHEDULER_DECISION_H_

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "deviceshare/backend/fit.h"
#include "deviceshare/dra/allocation_json.h"
#include "deviceshare/model/pod_allocation.h"
#include "deviceshare/model/sharing_mode.h"

namespace deviceshare {

// The filter step's verdict for one pod on one node, scored when it fits.
struct NodeVerdict {
  std::string node;
  // Fits, or the reason code and message. A verdict handed out by the
  // Scheduler's Filter() carries no allocation: the scheduler keeps it for
  // the reserve step.
  NodeFit fit;
  int score = 0;             // the node policy's, in [0, 100]; when fit.fits()
  SharingMode mode;          // of the backend that fits
  int stranded_percent = 0;  // policy/stranded_capacity.h
  // For a pod that names no mode, when more than one backend was asked and
  // explaining: why this mode, e.g. "mode mig chosen (least stranded
  // capacity) from hami-core: InsufficientMemory ...; mig: fits, ...".
  std::string mode_choice;
  // DRA: the allocations for the pod's claims that are not allocated yet
  // (claim key -> allocation), when it fits. Like the device allocation,
  // a verdict the Scheduler hands out carries none.
  std::map<std::string, dra::AllocationResult> claims;
};

// One of a placed pod's claims, as the host writes it back.
struct ClaimDecision {
  std::string pod_claim;  // the pod's name for it
  std::string claim_key;  // "namespace/name" of the ResourceClaim
  // status.allocation, whether this decision made it or it was there.
  dra::AllocationResult allocation;
  bool newly_allocated = false;  // made by this decision: write it
};

// The node order of every decision: less stranded capacity, then the
// higher score, then the smaller node name. Deterministic, so a tight
// placement beats a wasteful one and equal nodes go by name. A host that
// ranks by score alone makes the same choice whenever nothing strands
// capacity (every hami-core and mps placement).
bool BetterVerdict(const NodeVerdict& a, const NodeVerdict& b);

struct ScheduleOptions {
  // The nodes to choose from, in any order; empty: every node.
  std::vector<std::string> candidates;
  // When nothing fits, how many nodes get a full reason in
  // Decision::reasons: every reason code once (its first node by name),
  // then further nodes by name. reason_counts always covers every node.
  // Explaining is the costly part of a failed decision.
  size_t max_explained_nodes = std::numeric_limits<size_t>::max();
  // When nothing fits, count every node's reason code (O(nodes x GPUs));
  // false leaves reason_counts empty and makes a failed decision about as
  // cheap as a successful one.
  bool count_reasons = true;
  // Fill Decision::annotations (the allocation record to write on the pod).
  bool annotations = false;
};

// A whole decision: where the pod went (and was reserved), or why it fits
// nowhere.
struct Decision {
  // Set when the pod was placed (and reserved): node and devices per
  // container.
  std::optional<PodAllocation> allocation;
  int score = 0;
  SharingMode mode;
  std::string mode_choice;  // NodeVerdict::mode_choice of the chosen node
  // When placed and asked for: the annotations to write on the pod, in its
  // dialect (k8s/pod_annotations.h AllocationAnnotations).
  std::map<std::string, std::string> annotations;
  // When placed: each of the pod's claims with its allocation, in the
  // pod's order.
  std::vector<ClaimDecision> claims;
  // When nothing fits: why, per node (node name -> reason starting with its
  // code), for up to ScheduleOptions::max_explained_nodes nodes ...
  std::map<std::string, std::string> reasons;
  // ... and how many nodes gave each reason code ("InsufficientMemory").
  std::map<std::string, int64_t> reason_counts;
};

// What Scheduler::Reserve() did.
struct ReserveOutcome {
  // The verdict of the node that took the pod (fit.allocation is what was
  // reserved); unset when no candidate fits.
  std::optional<NodeVerdict> placed;
  // The verdicts of the candidates tried before the one that took the pod
  // (all of them when none did), in the given order: a caller that
  // filtered earlier learns which nodes stopped fitting meanwhile.
  std::vector<NodeVerdict> rejected;
  // The pod's placement that `replace` released (and, when nothing fit,
  // put back), if it had one.
  std::optional<PodAllocation> replaced;
  // When placed: the pod's claims with their allocations.
  std::vector<ClaimDecision> claims;
};

}  // namespace deviceshare

#endif  // DEVICESHARE_SCHEDULER_DECISION_H_
