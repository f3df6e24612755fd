#include "deviceshare/preemption/victim_order.h"

#include <tuple>

namespace deviceshare::preemption {

int64_t ShareMilli(int64_t memory_mib, int64_t cores, const Gpu& gpu) {
  int64_t milli = 0;
  if (gpu.memory_mib > 0) milli += memory_mib * 500 / gpu.memory_mib;
  if (gpu.core_capacity > 0) milli += cores * 500 / gpu.core_capacity;
  return milli;
}

int64_t PodShareMilli(const NodeState& node, absl::string_view pod_uid) {
  int64_t milli = 0;
  for (size_t g = 0; g < node.gpu_count(); ++g) {
    const DeviceLedger& ledger = node.ledger(g);
    absl::Span<const ContainerShare> shares = ledger.SharesOf(pod_uid);
    if (shares.empty()) continue;
    const PodCharge charge = ChargeOf(shares);
    milli += ShareMilli(charge.memory_mib, charge.cores, ledger.gpu());
  }
  return milli;
}

bool VictimSetKey::BetterThan(const VictimSetKey& other) const {
  return std::tie(count, max_priority, freed_milli, uids) <
         std::tie(other.count, other.max_priority, other.freed_milli,
                  other.uids);
}

}  // namespace deviceshare::preemption
