// File: preemption/victim_order.h
//
// The order in which victim sets compete (preemption/victim_search.h), and
// the unit of "share" it weighs. A set is better when, in turn:
//   1. it evicts fewer pods;
//   2. its highest victim priority is lower (a lower-priority pod goes
//      before a higher one, as kube-scheduler's preemption prefers);
//   3. it frees less GPU share (a victim's whole footprint on the node, in
//      milli-GPUs, see ShareMilli): the less it frees, the less it frees
//      beyond what the pending pod takes, since that need is the same for
//      every set;
//   4. its victims' uids, sorted, compare smaller: only so that the answer
//      is one set, deterministic, when everything else ties.
//
// Thread safety: value types and pure functions.
#ifndef DEVICESHARE_PREEMPTION_VICTIM_ORDER_H_
#define DEVICESHARE_PREEMPTION_VICTIM_ORDER_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "deviceshare/model/device_ledger.h"
#include "deviceshare/model/gpu.h"
#include "deviceshare/model/node_state.h"

namespace deviceshare::preemption {

// Share of one GPU in milli-GPUs: memory and SM time weigh half each, so a
// whole GPU (all its MiB and all its core capacity) is 1000. Memory alone
// and cores alone would each ignore the other half of what a pod holds;
// MiB and percent cannot be added as they are. Integer, rounded down per
// term, so that sums are exact and orders deterministic.
int64_t ShareMilli(int64_t memory_mib, int64_t cores, const Gpu& gpu);

// What pod `pod_uid` holds on `node`, summed over its GPUs: ShareMilli of
// its charge on each ledger (model/device_ledger.h ChargeOf: init
// containers counted once, MIG instances by their memory and compute). 0
// for a pod the node's ledgers do not hold.
int64_t PodShareMilli(const NodeState& node, absl::string_view pod_uid);

// The key of one victim set under the order above.
struct VictimSetKey {
  int64_t count = 0;
  // The highest priority among the victims; lowest() for the empty set.
  int32_t max_priority = std::numeric_limits<int32_t>::lowest();
  int64_t freed_milli = 0;
  std::vector<std::string> uids;  // sorted

  // Whether `*this` is a better set than `other`.
  bool BetterThan(const VictimSetKey& other) const;
};

}  // namespace deviceshare::preemption

#endif  // DEVICESHARE_PREEMPTION_VICTIM_ORDER_H_
