// File: lib/hamicore/vgpu/src/sm_event_pools.h
//
// Recycled CUDA events for the SM limiter, one pool per context (an event
// belongs to the context it was created in). Creating an event per launch
// would cost a driver call and an allocation on the launch path; taking one
// from a pool is a lock-free pop. Launching threads take events, the meter
// thread gives them back once their launch is measured.
#ifndef DEVICESHARE_VGPU_SM_EVENT_POOLS_H_
#define DEVICESHARE_VGPU_SM_EVENT_POOLS_H_

#include <atomic>

#include "gpu_abi/cuda_abi.h"
#include "sm_mpmc_ring.h"

namespace deviceshare::vgpu {

class EventPools {
 public:
  // Contexts with a pool; launches in further contexts go unmeasured
  // (charged by estimate). Processes rarely use more than one per device.
  static constexpr int kMaxContexts = 16;
  static constexpr size_t kEventsPerContext = 2048;

  EventPools() = default;
  EventPools(const EventPools&) = delete;
  EventPools& operator=(const EventPools&) = delete;

  // The pool of `ctx`, claiming a free slot the first time; -1 when `ctx` is
  // null or every slot is taken.
  int PoolFor(CUcontext ctx) {
    if (ctx == nullptr) return -1;
    for (int i = 0; i < kMaxContexts; ++i) {
      CUcontext owner = slots_[i].ctx.load(std::memory_order_acquire);
      if (owner == ctx) return i;
      if (owner == nullptr && slots_[i].ctx.compare_exchange_strong(
                                  owner, ctx, std::memory_order_acq_rel)) {
        return i;
      }
      if (owner == ctx) return i;  // another thread claimed it for ctx
    }
    return -1;
  }
  CUcontext context(int pool) const {
    return slots_[pool].ctx.load(std::memory_order_acquire);
  }
  bool Take(int pool, CUevent* event) {
    return slots_[pool].free.TryPop(event);
  }
  // False when the pool is full: the caller destroys the event.
  bool Give(int pool, CUevent event) {
    return slots_[pool].free.TryPush(event);
  }

  // Pops every pooled event as visit(context, event); for the destructor.
  template <typename Visit>
  void DrainAll(Visit visit) {
    for (int i = 0; i < kMaxContexts; ++i) {
      CUcontext ctx = slots_[i].ctx.load(std::memory_order_acquire);
      CUevent event;
      while (slots_[i].free.TryPop(&event)) visit(ctx, event);
    }
  }

  // In a forked child: the parent's contexts and events mean nothing there
  // (and a parent thread may have died inside a push), so forget them all.
  void ForgetAll() {
    for (Slot& slot : slots_) {
      slot.free.Reset();
      slot.ctx.store(nullptr, std::memory_order_release);
    }
  }

 private:
  struct Slot {
    std::atomic<CUcontext> ctx{nullptr};
    MpmcRing<CUevent, kEventsPerContext> free;
  };
  Slot slots_[kMaxContexts];
};

}  // namespace deviceshare::vgpu

#endif  // DEVICESHARE_VGPU_SM_EVENT_POOLS_H_
