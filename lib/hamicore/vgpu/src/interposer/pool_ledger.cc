#include "pool_ledger.h"

#include <algorithm>
#include <atomic>
#include <mutex>

#include "charge.h"
#include "log.h"

namespace deviceshare::vgpu {
namespace {

constexpr uint64_t kGranule = 2ULL << 20;
// A pool's reserve grows in chunks larger than the allocation that makes it
// grow (32 MiB is common). Until a growth has shown the driver's step, that
// much is reserved ahead of a growth; then the step seen.
constexpr uint64_t kFirstGrowthStep = 32ULL << 20;
std::atomic<uint64_t> g_growth_step{kFirstGrowthStep};

uint64_t Key(CUmemoryPool pool) { return reinterpret_cast<uint64_t>(pool); }

bool PoolAttribute(const RealCuda& cuda, CUmemoryPool pool,
                   CUmemPool_attribute attribute, uint64_t* bytes) {
  if (cuda.cuMemPoolGetAttribute == nullptr) return false;
  return cuda.cuMemPoolGetAttribute(pool, attribute, bytes) == CUDA_SUCCESS;
}

bool PoolReserved(const RealCuda& cuda, CUmemoryPool pool, uint64_t* bytes) {
  return PoolAttribute(cuda, pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, bytes);
}

// How much the pool's reserve will grow for `request` more bytes: 0 while
// its free reserve holds them, else the shortfall rounded up to the growth
// step. Reserving that before allocating keeps physical memory under the
// limit even for the moment between the growth and its settling.
uint64_t ExpectedGrowth(const RealCuda& cuda, CUmemoryPool pool,
                        uint64_t request) {
  uint64_t used = 0;
  uint64_t reserved = 0;
  if (!PoolAttribute(cuda, pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used) ||
      !PoolReserved(cuda, pool, &reserved)) {
    return request;
  }
  if (used + request <= reserved) return 0;
  return RoundUp(used + request - reserved, g_growth_step.load());
}

// Learns the driver's growth step from a growth of `grown` bytes where
// `needed` were short: a growth past the need shows the step; one of just
// the need shows there is none beyond the granule.
void LearnGrowthStep(uint64_t grown, uint64_t needed) {
  if (grown == 0) return;
  g_growth_step.store(grown > needed ? grown : kGranule);
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
  const uint64_t rounded = RoundUp(size, kGranule);
  uint64_t request =
      std::max(rounded, ExpectedGrowth(runtime.cuda(), pool, rounded));
  SharedRegion* region = runtime.region();
  if (!ReserveOrTrim(runtime, device, request)) return CUDA_ERROR_OUT_OF_MEMORY;
  std::lock_guard<std::mutex> guard(runtime.pool_mutex());
  // Making room may have trimmed this very pool: the growth is then larger
  // than reckoned before, and is reserved too (no trim under the lock).
  const uint64_t needed =
      std::max(rounded, ExpectedGrowth(runtime.cuda(), pool, rounded));
  if (needed > request) {
    if (!region->Reserve(device, needed - request)) {
      region->Release(device, request);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    request = needed;
  }
  Allocation state{0, device, AllocationKind::kPooled, 0};
  runtime.pools().Find(Key(pool), &state);
  uint64_t used_before = 0;
  uint64_t reserved_before = 0;
  const bool measured =
      PoolAttribute(runtime.cuda(), pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
                    &used_before) &&
      PoolReserved(runtime.cuda(), pool, &reserved_before);
  CUresult rc = allocate();
  if (rc != CUDA_SUCCESS) {
    region->Release(device, request);
    return rc;
  }
  uint64_t held = state.bytes + request;
  uint64_t reserved = 0;
  if (!PoolReserved(runtime.cuda(), pool, &reserved)) reserved = held;
  if (measured && reserved > reserved_before &&
      used_before + rounded > reserved_before) {
    LearnGrowthStep(reserved - reserved_before,
                    used_before + rounded - reserved_before);
  }
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
