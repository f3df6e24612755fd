// File: policy/scoring.h
//
// Scores for the binpack and spread policies, always in [0, 100] and always
// computed from the state *after* the tentative placement without touching
// the ledger (upstream Volcano scored a half-updated ledger, which made its
// spread score constant).
//
// Utilisation of a GPU (or a node: the sum over its GPUs) is the mean of
// three fractions: memory, SM cores and tenant slots, in percent.
//   binpack score = utilisation after the placement  (fuller is better)
//   spread score  = 100 - utilisation after          (emptier is better)
// Ties are broken by the caller with a stable key (GPU index, node name).
#ifndef DEVICESHARE_POLICY_SCORING_H_
#define DEVICESHARE_POLICY_SCORING_H_

#include <cstdint>

#include "deviceshare/model/device_ledger.h"
#include "deviceshare/model/node_state.h"
#include "deviceshare/model/pod_allocation.h"
#include "deviceshare/policy/policy_kind.h"

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

// A node's usage and capacity now, summed over its GPUs.
Usage NodeUsage(const NodeState& node);
Capacity NodeCapacity(const NodeState& node);

// A node's utilisation now, over all its GPUs.
int NodeUtilisationPercent(const NodeState& node);

int PolicyScore(PolicyKind policy, const Usage& after,
                const Capacity& capacity);

// Score of one GPU if `extra` more were charged to it.
int GpuScore(PolicyKind policy, const DeviceLedger& ledger,
             const PodCharge& extra);

// Score of a node after `placement` (not yet committed) lands on it.
int NodeScore(PolicyKind policy, const NodeState& node,
              const PodAllocation& placement);

}  // namespace deviceshare

#endif  // DEVICESHARE_POLICY_SCORING_H_
