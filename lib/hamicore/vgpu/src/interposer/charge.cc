#include "charge.h"

#include "pool_ledger.h"

namespace deviceshare::vgpu {

bool ReserveOrTrim(VgpuRuntime& runtime, int device, uint64_t bytes) {
  if (runtime.region()->Reserve(device, bytes)) return true;
  if (TrimPools(runtime, device) == 0) return false;
  return runtime.region()->Reserve(device, bytes);
}

bool MoveCharge(VgpuRuntime& runtime, int device, uint64_t from, uint64_t to) {
  if (to <= from) {
    runtime.region()->Release(device, from - to);
    return true;
  }
  return runtime.region()->Reserve(device, to - from);
}

void Refund(VgpuRuntime& runtime, uint64_t key) {
  Allocation allocation;
  if (!runtime.allocations().Take(key, &allocation)) return;
  if (allocation.kind == AllocationKind::kPooled) {
    SettlePool(runtime, reinterpret_cast<CUmemoryPool>(allocation.owner));
    return;
  }
  runtime.region()->Release(allocation.device, allocation.bytes);
}

}  // namespace deviceshare::vgpu
