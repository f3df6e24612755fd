#include "pool_ledger.h"

#include <mutex>

#include "charge.h"
#include "log.h"

namespace deviceshare::vgpu {
namespace {

constexpr uint64_t kGranule = 2ULL << 20;

uint64_t Key(CUmemoryPool pool) { return reinterpret_cast<uint64_t>(pool); }

bool PoolReserved(const RealCuda& cuda, CUmemoryPool pool, uint64_t* bytes) {
  if (cuda.cuMemPoolGetAttribute == nullptr) return false;
  return cuda.cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT,
                                    bytes) == CUDA_SUCCESS;
}

// Moves the pool's charge from `held` to what the pool reserves now, as far
// as the limit allows; returns the new charge. Caller holds pool_mutex().
uint64_t SettleLocked(VgpuRuntime& runtime, CUmemoryPool pool, int device,
                      uint64_t held) {
  uint64_t reserved = 0;
  if (!PoolReserved(runtime.cuda(), pool, &reserved)) return held;
  return MoveCharge(runtime, device, held, reserved) ? reserved : held;
}

}  // namespace

CUresult PooledAllocate(VgpuRuntime& runtime, int device, CUmemoryPool pool,
                        CUdeviceptr* dptr, size_t size, CUstream stream,
                        const std::function<CUresult()>& allocate) {
  const uint64_t request = RoundUp(size, kGranule);
  SharedRegion* region = runtime.region();
  if (!ReserveOrTrim(runtime, device, request)) return CUDA_ERROR_OUT_OF_MEMORY;
  std::lock_guard<std::mutex> guard(runtime.pool_mutex());
  Allocation state{0, device, AllocationKind::kPooled, 0};
  runtime.pools().Find(Key(pool), &state);
  CUresult rc = allocate();
  if (rc != CUDA_SUCCESS) {
    region->Release(device, request);
    return rc;
  }
  uint64_t held = state.bytes + request;
  uint64_t reserved = 0;
  if (!PoolReserved(runtime.cuda(), pool, &reserved)) reserved = held;
  if (MoveCharge(runtime, device, held, reserved)) {
    state.bytes = reserved;
  } else {
    // The pool grew by more than the limit leaves: undo this allocation
    // and give the growth back.
    const RealCuda& cuda = runtime.cuda();
    cuda.cuMemFreeAsync(*dptr, stream);
    if (cuda.cuMemPoolTrimTo != nullptr)
      cuda.cuMemPoolTrimTo(pool, state.bytes);
    state.bytes = SettleLocked(runtime, pool, device, held);
    runtime.pools().Insert(Key(pool), state);
    VGPU_LOG(kNotice,
             "device %d: pool growth to %llu bytes passes the limit; "
             "out of memory",
             device, static_cast<unsigned long long>(reserved));
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  runtime.pools().Insert(Key(pool), state);
  runtime.allocations().Insert(
      *dptr, Allocation{0, device, AllocationKind::kPooled, Key(pool)});
  return CUDA_SUCCESS;
}

void SettlePool(VgpuRuntime& runtime, CUmemoryPool pool) {
  std::lock_guard<std::mutex> guard(runtime.pool_mutex());
  Allocation state;
  if (!runtime.pools().Find(Key(pool), &state)) return;
  state.bytes = SettleLocked(runtime, pool, state.device, state.bytes);
  runtime.pools().Insert(Key(pool), state);
}

uint64_t TrimPools(VgpuRuntime& runtime, int device) {
  const RealCuda& cuda = runtime.cuda();
  if (cuda.cuMemPoolTrimTo == nullptr) return 0;
  std::lock_guard<std::mutex> guard(runtime.pool_mutex());
  constexpr int kMaxPools = 64;
  uint64_t keys[kMaxPools];
  Allocation states[kMaxPools];
  int count = 0;
  runtime.pools().ForEach([&](uint64_t key, const Allocation& state) {
    if (state.device == device && state.bytes > 0 && count < kMaxPools) {
      keys[count] = key;
      states[count] = state;
      ++count;
    }
  });
  uint64_t refunded = 0;
  for (int i = 0; i < count; ++i) {
    auto pool = reinterpret_cast<CUmemoryPool>(keys[i]);
    cuda.cuMemPoolTrimTo(pool, 0);
    uint64_t now = SettleLocked(runtime, pool, device, states[i].bytes);
    if (now < states[i].bytes) refunded += states[i].bytes - now;
    states[i].bytes = now;
    runtime.pools().Insert(keys[i], states[i]);
  }
  return refunded;
}

void ForgetPool(VgpuRuntime& runtime, CUmemoryPool pool) {
  std::lock_guard<std::mutex> guard(runtime.pool_mutex());
  Allocation state;
  if (!runtime.pools().Take(Key(pool), &state)) return;
  runtime.region()->Release(state.device, state.bytes);
}

}  // namespace deviceshare::vgpu
