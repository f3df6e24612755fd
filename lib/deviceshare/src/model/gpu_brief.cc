#include "deviceshare/model/gpu_brief.h"

#include <limits>

namespace deviceshare {
namespace {

// Whether `value` fits in 32 bits; `out` gets it (or 0).
bool Narrow(int64_t value, int32_t& out) {
  if (value < std::numeric_limits<int32_t>::min() ||
      value > std::numeric_limits<int32_t>::max()) {
    out = 0;
    return false;
  }
  out = static_cast<int32_t>(value);
  return true;
}

}  // namespace

GpuBrief GpuBrief::Of(const DeviceLedger& ledger) {
  GpuBrief brief;
  const bool narrow =
      Narrow(ledger.free_memory_mib(), brief.free_memory_mib) &&
      Narrow(ledger.memory_capacity_mib(), brief.memory_capacity_mib);
  brief.free_cores = ledger.free_cores();
  brief.used_slots = ledger.used_slots();
  brief.slot_capacity = ledger.slot_capacity();
  const Gpu& gpu = ledger.gpu();
  brief.flags =
      (gpu.healthy ? 0 : kUnhealthy) | (gpu.cordoned ? kCordoned : 0) |
      (ledger.gpu_holders() > 0 ? kHeldByMigRecord : 0) |
      (ledger.mig_instances() > 0 ? kHasMigInstances : 0) |
      (ledger.held_exclusively() ? kHeldExclusively : 0) |
      (ledger.idle() ? 0 : kHasPods) | (narrow ? 0 : kBriefIncomplete) |
      (ledger.exclusive_by_cores() ? kExclusiveByCores : 0);
  return brief;
}

}  // namespace deviceshare
