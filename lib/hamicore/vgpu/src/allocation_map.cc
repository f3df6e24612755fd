#include "allocation_map.h"

#include <cstdlib>

namespace deviceshare::vgpu {
namespace {

size_t Hash(uint64_t key) {
  // Pointers are aligned and clustered: mix all bits (splitmix64 finalizer).
  key ^= key >> 30;
  key *= 0xbf58476d1ce4e5b9ULL;
  key ^= key >> 27;
  key *= 0x94d049bb133111ebULL;
  key ^= key >> 31;
  return static_cast<size_t>(key);
}

}  // namespace

AllocationMap::~AllocationMap() {
  std::free(keys_);
  std::free(values_);
}

size_t AllocationMap::SlotForLocked(uint64_t key) const {
  if (capacity_ == 0) return capacity_;
  size_t mask = capacity_ - 1;
  for (size_t i = Hash(key) & mask, probes = 0; probes < capacity_;
       i = (i + 1) & mask, ++probes) {
    if (keys_[i] == kEmpty) return capacity_;
    if (keys_[i] == key) return i;
  }
  return capacity_;
}

bool AllocationMap::GrowLocked() {
  size_t capacity = capacity_ == 0 ? 1024 : capacity_;
  // Double only when live entries, not tombstones, fill it.
  if ((live_ + 1) * 2 > capacity) capacity *= 2;
  auto* keys = static_cast<uint64_t*>(std::calloc(capacity, sizeof(uint64_t)));
  auto* values =
      static_cast<Allocation*>(std::calloc(capacity, sizeof(Allocation)));
  if (keys == nullptr || values == nullptr) {
    std::free(keys);
    std::free(values);
    return false;
  }
  size_t mask = capacity - 1;
  for (size_t i = 0; i < capacity_; ++i) {
    if (keys_[i] <= kTombstone) continue;
    size_t j = Hash(keys_[i]) & mask;
    while (keys[j] != kEmpty) j = (j + 1) & mask;
    keys[j] = keys_[i];
    values[j] = values_[i];
  }
  std::free(keys_);
  std::free(values_);
  keys_ = keys;
  values_ = values;
  capacity_ = capacity;
  used_ = live_;
  return true;
}

bool AllocationMap::Insert(uint64_t key, const Allocation& value) {
  if (key <= kTombstone) return false;
  std::lock_guard<std::mutex> guard(mutex_);
  size_t existing = SlotForLocked(key);
  if (existing != capacity_) {
    values_[existing] = value;
    return true;
  }
  if ((used_ + 1) * 4 > capacity_ * 3 && !GrowLocked()) return false;
  size_t mask = capacity_ - 1;
  size_t i = Hash(key) & mask;
  while (keys_[i] > kTombstone) i = (i + 1) & mask;
  if (keys_[i] == kEmpty) ++used_;
  keys_[i] = key;
  values_[i] = value;
  ++live_;
  return true;
}

bool AllocationMap::Take(uint64_t key, Allocation* value) {
  std::lock_guard<std::mutex> guard(mutex_);
  size_t slot = SlotForLocked(key);
  if (slot == capacity_) return false;
  *value = values_[slot];
  keys_[slot] = kTombstone;
  --live_;
  return true;
}

bool AllocationMap::Find(uint64_t key, Allocation* value) const {
  std::lock_guard<std::mutex> guard(mutex_);
  size_t slot = SlotForLocked(key);
  if (slot == capacity_) return false;
  *value = values_[slot];
  return true;
}

size_t AllocationMap::size() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return live_;
}

void AllocationMap::Clear() {
  for (size_t i = 0; i < capacity_; ++i) keys_[i] = kEmpty;
  live_ = 0;
  used_ = 0;
}

}  // namespace deviceshare::vgpu
