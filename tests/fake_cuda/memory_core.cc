// Physical charging, host backing, pointer ranges and pool reserves shared
// by every allocation path of the fake driver (see world.h).
#include <sys/mman.h>

#include <algorithm>

#include "world.h"

namespace fake_cuda {

bool ChargePhysical(int device, uint64_t bytes) {
  World& world = TheWorld();
  const Device& d = world.devices[device];
  return world.shared.Charge(d.slot, bytes, d.total_bytes);
}

void UnchargePhysical(int device, uint64_t bytes) {
  World& world = TheWorld();
  world.shared.Uncharge(world.devices[device].slot, bytes);
}

uintptr_t MapHostMemory(uint64_t bytes) {
  // NORESERVE: a test may "allocate" tens of GiB of fake GPU memory; only
  // the pages it touches cost host memory.
  void* map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return map == MAP_FAILED ? 0 : reinterpret_cast<uintptr_t>(map);
}

void UnmapHostMemory(uintptr_t address, uint64_t bytes) {
  if (address != 0) munmap(reinterpret_cast<void*>(address), bytes);
}

namespace {

template <class Map, class SizeOf>
bool InsideOne(const Map& map, uintptr_t address, uint64_t bytes,
               SizeOf size_of) {
  auto it = map.upper_bound(address);
  if (it == map.begin()) return false;
  --it;
  const uint64_t offset = address - it->first;
  const uint64_t size = size_of(it->second);
  return offset < size && bytes <= size - offset;
}

}  // namespace

bool RangeIsDeviceMemory(uintptr_t address, uint64_t bytes) {
  const World& world = TheWorld();
  return InsideOne(world.allocations, address, bytes,
                   [](const Allocation& a) { return a.bytes; }) ||
         InsideOne(world.mappings, address, bytes,
                   [](const Mapping& m) { return m.size; });
}

void TrimPool(Pool& pool, uint64_t keep_bytes) {
  const uint64_t keep = std::max(pool.used, RoundUp(keep_bytes, kGranularity));
  if (pool.reserved <= keep) return;
  UnchargePhysical(pool.device, pool.reserved - keep);
  pool.reserved = keep;
}

void ReleasePoolReserves() {
  World& world = TheWorld();
  for (auto it = world.pools.begin(); it != world.pools.end();) {
    Pool& pool = it->second;
    TrimPool(pool, pool.destroyed ? 0 : pool.release_threshold);
    if (pool.destroyed && pool.used == 0) {
      it = world.pools.erase(it);
    } else {
      ++it;
    }
  }
}

void ReturnToPool(uint64_t pool_id, uint64_t bytes) {
  World& world = TheWorld();
  auto it = world.pools.find(pool_id);
  if (it == world.pools.end()) return;
  Pool& pool = it->second;
  pool.used -= std::min(pool.used, bytes);
  if (pool.destroyed && pool.used == 0) {
    TrimPool(pool, 0);
    world.pools.erase(it);
  }
}

}  // namespace fake_cuda
