// File: lib/hamicore/vgpu/src/sm_mpmc_ring.h
//
// A bounded multi-producer multi-consumer queue (D. Vyukov's sequence-per-cell
// ring) for the SM limiter: launching threads hand measured launches to the
// meter thread through it, and event pools recycle events through it. Lock
// free and allocation free after construction, so the launch path takes no
// lock and makes no syscall; a full ring reports false and the caller falls
// back to something cheaper instead of waiting.
#ifndef DEVICESHARE_VGPU_SM_MPMC_RING_H_
#define DEVICESHARE_VGPU_SM_MPMC_RING_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace deviceshare::vgpu {

// `kCapacity` must be a power of two; T must be trivially copyable (cells are
// overwritten without destruction, and Reset() may drop them after fork()).
template <typename T, size_t kCapacity>
class MpmcRing {
  static_assert(kCapacity >= 2 && (kCapacity & (kCapacity - 1)) == 0);
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  MpmcRing() { Reset(); }
  MpmcRing(const MpmcRing&) = delete;
  MpmcRing& operator=(const MpmcRing&) = delete;

  bool TryPush(const T& value) {
    size_t pos = tail_.load(std::memory_order_relaxed);
    for (;;) {
      Cell& cell = cells_[pos & kMask];
      const size_t seq = cell.seq.load(std::memory_order_acquire);
      const intptr_t diff =
          static_cast<intptr_t>(seq) - static_cast<intptr_t>(pos);
      if (diff == 0) {
        if (tail_.compare_exchange_weak(pos, pos + 1,
                                        std::memory_order_relaxed)) {
          cell.value = value;
          cell.seq.store(pos + 1, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;  // full
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
  }

  bool TryPop(T* value) {
    size_t pos = head_.load(std::memory_order_relaxed);
    for (;;) {
      Cell& cell = cells_[pos & kMask];
      const size_t seq = cell.seq.load(std::memory_order_acquire);
      const intptr_t diff =
          static_cast<intptr_t>(seq) - static_cast<intptr_t>(pos + 1);
      if (diff == 0) {
        if (head_.compare_exchange_weak(pos, pos + 1,
                                        std::memory_order_relaxed)) {
          *value = cell.value;
          cell.seq.store(pos + kCapacity, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;  // empty
      } else {
        pos = head_.load(std::memory_order_relaxed);
      }
    }
  }

  // Empties the ring without looking at its cells. Only safe with no other
  // thread using it: at construction, and in a forked child, where a thread
  // of the parent may have died half way through a push.
  void Reset() {
    for (size_t i = 0; i < kCapacity; ++i) {
      cells_[i].seq.store(i, std::memory_order_relaxed);
    }
    head_.store(0, std::memory_order_relaxed);
    tail_.store(0, std::memory_order_release);
  }

 private:
  static constexpr size_t kMask = kCapacity - 1;
  struct Cell {
    std::atomic<size_t> seq;
    T value;
  };
  // Producers and consumers on separate cache lines.
  alignas(64) std::atomic<size_t> tail_;
  alignas(64) std::atomic<size_t> head_;
  alignas(64) Cell cells_[kCapacity];
};

}  // namespace deviceshare::vgpu

#endif  // DEVICESHARE_VGPU_SM_MPMC_RING_H_
