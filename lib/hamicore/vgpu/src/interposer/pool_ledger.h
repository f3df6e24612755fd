// File: lib/hamicore/vgpu/src/pool_ledger.h
//
// Stream-ordered allocations (cuMemAllocAsync, cuMemAllocFromPoolAsync)
// are charged by what their pool really holds: the driver grows a pool in
// chunks and keeps freed memory until it trims, so the request size is the
// wrong figure both ways. Each allocation reserves its rounded size first
// (reserve before allocate), then the charge is settled against the pool's
// CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT. When the pool must grow, the growth
// expected (its chunk, learned from the growths seen) is reserved instead,
// so physical memory never passes the limit; growth past what can be reserved
// frees the allocation and answers out of memory. HAMi-core charged the
// high-water mark once (its #96) or, for FromPool, nothing at all (25.6 GiB
// through a 4 GiB limit).
//
// Thread safety: serialised by VgpuRuntime::pool_mutex().
#ifndef DEVICESHARE_VGPU_POOL_LEDGER_H_
#define DEVICESHARE_VGPU_POOL_LEDGER_H_

#include <cstdint>
#include <functional>

#include "runtime.h"

namespace deviceshare::vgpu {

CUresult PooledAllocate(VgpuRuntime& runtime, int device, CUmemoryPool pool,
                        CUdeviceptr* dptr, size_t size, CUstream stream,
                        const std::function<CUresult()>& allocate);
// Re-reads the pool's reservation and refunds what it released.
void SettlePool(VgpuRuntime& runtime, CUmemoryPool pool);
// Returns the unused memory of this process's pools on `device` to the
// driver and refunds it; returns the bytes refunded.
uint64_t TrimPools(VgpuRuntime& runtime, int device);
// The pool is gone: refunds all it was charged.
void ForgetPool(VgpuRuntime& runtime, CUmemoryPool pool);

}  // namespace deviceshare::vgpu

#endif  // DEVICESHARE_VGPU_POOL_LEDGER_H_
