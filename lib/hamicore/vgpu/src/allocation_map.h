// File: lib/hamicore/vgpu/src/allocation_map.h
//
// What this process charged for each live allocation, keyed by device
// pointer or by handle (arrays, VMM handles, pools, graph execs): an
// open-addressing hash table, so a free costs the same with ten thousand
// live allocations as with one (HAMi-core walks a list: 4.4x slower at
// 8,000). Memory comes from calloc and every failure is a `false`, never an
// exception or abort.
//
// Thread safety: all methods lock one process-local mutex; fork handlers
// take it around fork() so the child never inherits it locked.
#ifndef DEVICESHARE_VGPU_ALLOCATION_MAP_H_
#define DEVICESHARE_VGPU_ALLOCATION_MAP_H_

#include <cstddef>
#include <cstdint>
#include <mutex>

namespace deviceshare::vgpu {

enum class AllocationKind : uint32_t {
  kLinear,  // cuMemAlloc, pitch, managed
  kArray,   // cuArrayCreate, cuArray3DCreate
  kMipmapped,
  kVmmHandle,  // cuMemCreate
  kPooled,     // cuMemAllocAsync / FromPoolAsync; `owner` is the pool
  kGraphExec,  // a graph exec holding graph memory; `bytes` is its bound
};

struct Allocation {
  uint64_t bytes = 0;
  int device = -1;  // region device index
  AllocationKind kind = AllocationKind::kLinear;
  uint64_t owner = 0;
};

class AllocationMap {
 public:
  AllocationMap() = default;
  ~AllocationMap();
  AllocationMap(const AllocationMap&) = delete;
  AllocationMap& operator=(const AllocationMap&) = delete;

  // False when out of memory or `key` is 0. Replaces an existing entry.
  bool Insert(uint64_t key, const Allocation& value);
  // Removes and returns the entry; false when absent.
  bool Take(uint64_t key, Allocation* value);
  bool Find(uint64_t key, Allocation* value) const;
  size_t size() const;

  // Calls `visit(key, value)` for every entry, under the lock.
  template <typename Visit>
  void ForEach(Visit visit) const {
    std::lock_guard<std::mutex> guard(mutex_);
    for (size_t i = 0; i < capacity_; ++i) {
      if (keys_[i] > kTombstone) visit(keys_[i], values_[i]);
    }
  }

  // Empties the table without freeing anything (a forked child owns none
  // of its parent's allocations).
  void Clear();

  void LockForFork() { mutex_.lock(); }
  void UnlockAfterFork() { mutex_.unlock(); }

 private:
  static constexpr uint64_t kEmpty = 0;
  static constexpr uint64_t kTombstone = 1;

  bool GrowLocked();
  size_t SlotForLocked(uint64_t key) const;  // capacity_ if absent

  mutable std::mutex mutex_;
  uint64_t* keys_ = nullptr;
  Allocation* values_ = nullptr;
  size_t capacity_ = 0;
  size_t live_ = 0;
  size_t used_ = 0;  // live + tombstones
};

}  // namespace deviceshare::vgpu

#endif  // DEVICESHARE_VGPU_ALLOCATION_MAP_H_
