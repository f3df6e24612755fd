// File: policy/scoring.h
//
// Utilisation, the measure the built-in policies score by and the key of
// the scheduler's node index: the mean of three fractions of a GPU (or of
// a node: summed over its GPUs) in use, memory, SM cores and tenant
// slots, in percent, clamped to [0, 100]. Computed from the state *after*
// a tentative placement without touching the ledger.
#ifndef DEVICESHARE_POLICY_SCORING_H_
#define DEVICESHARE_POLICY_SCORING_H_

#include <cstdint>

#include "deviceshare/model/device_ledger.h"
#include "deviceshare/model/node_state.h"
#include "deviceshare/model/pod_allocation.h"
#include "deviceshare/policy/scoring_weights.h"

namespace deviceshare {

struct Usage {
  int64_t memory_mib = 0;
  int64_t cores = 0;
  int64_t slots = 0;
};

struct Capacity {
  int64_t memory_mib = 0;
  int64_t cores = 0;
  int64_t slots = 0;
};

// Mean of the three fractions in percent, clamped to [0, 100].
int UtilisationPercent(const Usage& used, const Capacity& capacity);
// The same mean, each fraction counted `weights` times (HAMi's
// device-scoring-weights); equal weights give UtilisationPercent.
int UtilisationPercent(const Usage& used, const Capacity& capacity,
                       const DeviceScoringWeights& weights);

// A node's usage and capacity now, summed over its GPUs.
Usage NodeUsage(const NodeState& node);
Capacity NodeCapacity(const NodeState& node);

// A node's utilisation now, over all its GPUs.
int NodeUtilisationPercent(const NodeState& node);

// One GPU's utilisation if `extra` more were charged to it.
int GpuUtilisationAfter(const DeviceLedger& ledger, const PodCharge& extra);
int GpuUtilisationAfter(const DeviceLedger& ledger, const PodCharge& extra,
                        const DeviceScoringWeights& weights);

// A node's utilisation after `placement` (not yet committed) lands on it;
// grants on GPUs the node lacks are ignored.
int NodeUtilisationAfter(const NodeState& node, const PodAllocation& placement);

}  // namespace deviceshare

#endif  // DEVICESHARE_POLICY_SCORING_H_
