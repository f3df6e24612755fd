#include "deviceshare/policy/scoring.h"

#include <algorithm>

namespace deviceshare {
namespace {

int64_t Percent(int64_t part, int64_t whole) {
  if (whole <= 0) return 0;
  return std::clamp<int64_t>(part * 100 / whole, 0, 100);
}

}  // namespace

int UtilisationPercent(const Usage& used, const Capacity& capacity) {
  int64_t sum = Percent(used.memory_mib, capacity.memory_mib) +
                Percent(used.cores, capacity.cores) +
                Percent(used.slots, capacity.slots);
  return static_cast<int>(sum / 3);
}

int UtilisationPercent(const Usage& used, const Capacity& capacity,
                       const DeviceScoringWeights& weights) {
  const int64_t total = weights.slot + weights.core + weights.memory;
  if (total <= 0) return 0;
  const int64_t sum =
      weights.memory * Percent(used.memory_mib, capacity.memory_mib) +
      weights.core * Percent(used.cores, capacity.cores) +
      weights.slot * Percent(used.slots, capacity.slots);
  return static_cast<int>(sum / total);
}

Usage NodeUsage(const NodeState& node) {
  return Usage{node.total_used_memory_mib(), node.total_used_cores(),
               node.total_used_slots()};
}

Capacity NodeCapacity(const NodeState& node) {
  return Capacity{node.total_memory_mib(), node.total_cores(),
                  node.total_slots()};
}

int NodeUtilisationPercent(const NodeState& node) {
  return UtilisationPercent(NodeUsage(node), NodeCapacity(node));
}

int GpuUtilisationAfter(const DeviceLedger& ledger, const PodCharge& extra) {
  return GpuUtilisationAfter(ledger, extra, DeviceScoringWeights{});
}

int GpuUtilisationAfter(const DeviceLedger& ledger, const PodCharge& extra,
                        const DeviceScoringWeights& weights) {
  Usage after{ledger.used_memory_mib() + extra.memory_mib,
              ledger.used_cores() + extra.cores,
              ledger.used_slots() + extra.slots};
  Capacity capacity{ledger.memory_capacity_mib(), ledger.core_capacity(),
                    ledger.slot_capacity()};
  return UtilisationPercent(after, capacity, weights);
}

int NodeUtilisationAfter(const NodeState& node,
                         const PodAllocation& placement) {
  Usage after = NodeUsage(node);
  auto shares = node.SharesByGpu(placement);
  if (shares.ok()) {
    for (const auto& [position, gpu_shares] : *shares) {
      PodCharge charge = ChargeOf(gpu_shares);
      after.memory_mib += charge.memory_mib;
      after.cores += charge.cores;
      after.slots += charge.slots;
    }
  }
  return UtilisationPercent(after, NodeCapacity(node));
}

}  // namespace deviceshare
