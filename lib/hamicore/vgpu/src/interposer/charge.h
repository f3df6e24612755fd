// File: lib/hamicore/vgpu/src/interposer/charge.h
//
// The steps every allocation hook takes with the shared region: reserve
// before the driver allocates (trimming this process's pools first when
// the limit is reached), move a charge to the size the driver really took,
// record the allocation, and refund it when it is freed.
//
// Thread safety: as the region and the allocation map (any thread).
#ifndef DEVICESHARE_VGPU_CHARGE_H_
#define DEVICESHARE_VGPU_CHARGE_H_

#include <cstdint>
#include <type_traits>

#include "log.h"
#include "runtime.h"

namespace deviceshare::vgpu {

// Reserves `bytes` on `device`; when the region says no, first gives back
// what this process's pools hold unused, then asks again.
bool ReserveOrTrim(VgpuRuntime& runtime, int device, uint64_t bytes);

// Changes a charge of `from` bytes into one of `to` bytes: refunds the
// difference, or reserves it. False (the charge stays `from`) when the
// growth would pass the limit.
bool MoveCharge(VgpuRuntime& runtime, int device, uint64_t from, uint64_t to);

// After a successful free or destroy: refunds what `key` was charged (a
// pooled allocation settles its pool instead).
void Refund(VgpuRuntime& runtime, uint64_t key);

// Reserve `charge`, run `allocate`, record the new handle (a device pointer
// or an object handle) for Refund; undoes the reservation when the driver
// fails and the allocation when it cannot be recorded. `device` < 0 (no
// context) leaves the call to the driver.
template <typename Handle, typename Allocate, typename Destroy>
CUresult ChargedAllocation(VgpuRuntime& runtime, int device, Handle* handle,
                           uint64_t charge, AllocationKind kind,
                           Allocate allocate, Destroy destroy) {
  if (device < 0 || handle == nullptr) return allocate();
  if (!ReserveOrTrim(runtime, device, charge)) {
    VGPU_LOG(kNotice,
             "device %d: %llu bytes would pass the limit (%llu of %llu "
             "charged); out of memory",
             device, static_cast<unsigned long long>(charge),
             static_cast<unsigned long long>(runtime.region()->Charged(device)),
             static_cast<unsigned long long>(runtime.region()->Limit(device)));
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  CUresult rc = allocate();
  if (rc != CUDA_SUCCESS) {
    runtime.region()->Release(device, charge);
    return rc;
  }
  uint64_t key;
  if constexpr (std::is_pointer_v<Handle>) {
    key = reinterpret_cast<uint64_t>(*handle);
  } else {
    key = static_cast<uint64_t>(*handle);
  }
  if (!runtime.allocations().Insert(key, Allocation{charge, device, kind, 0})) {
    destroy(*handle);
    runtime.region()->Release(device, charge);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  return CUDA_SUCCESS;
}

}  // namespace deviceshare::vgpu

#endif  // DEVICESHARE_VGPU_CHARGE_H_
