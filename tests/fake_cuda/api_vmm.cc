// Virtual memory management. cuMemCreate charges physical memory (size a
// multiple of the 2 MiB granularity); cuMemAddressReserve reserves host
// address space (PROT_NONE); cuMemMap/Unmap only make the range usable for
// copies, charging nothing. A released handle is uncharged once it is no
// longer mapped anywhere, as on the driver.
#include <sys/mman.h>

#include <vector>

#include "world.h"

using namespace fake_cuda;

namespace {

bool ValidLocation(const CUmemAllocationProp* prop) {
  return prop != nullptr &&
         prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
         DeviceAt(prop->location.id) != nullptr;
}

MemHandle* FindHandle(CUmemGenericAllocationHandle handle) {
  auto& handles = TheWorld().mem_handles;
  auto it = handles.find(HandleId(Tag::kMemHandle, handle));
  return it == handles.end() ? nullptr : &it->second;
}

// Drops one mapping of handle `id`; a released handle mapped nowhere is
// uncharged and forgotten.
void DropMapping(uint64_t id) {
  World& world = TheWorld();
  auto it = world.mem_handles.find(id);
  if (it == world.mem_handles.end()) return;
  --it->second.mappings;
  if (it->second.released && it->second.mappings <= 0) {
    UnchargePhysical(it->second.device, it->second.size);
    world.mem_handles.erase(it);
  }
}

void Unmap(std::map<uintptr_t, Mapping>::iterator it) {
  void* address = reinterpret_cast<void*>(it->first);
  madvise(address, it->second.size, MADV_DONTNEED);
  mprotect(address, it->second.size, PROT_NONE);
  const uint64_t handle = it->second.handle;
  TheWorld().mappings.erase(it);
  DropMapping(handle);
}

// The reservation holding all of [address, address + size), if any.
bool InsideReservation(uintptr_t address, uint64_t size) {
  const auto& reservations = TheWorld().reservations;
  auto it = reservations.upper_bound(address);
  if (it == reservations.begin()) return false;
  --it;
  const uint64_t offset = address - it->first;
  return offset < it->second && size <= it->second - offset;
}

bool OverlapsMapping(uintptr_t address, uint64_t size) {
  const auto& mappings = TheWorld().mappings;
  auto it = mappings.lower_bound(address);
  if (it != mappings.end() && it->first < address + size) return true;
  if (it == mappings.begin()) return false;
  --it;
  return it->first + it->second.size > address;
}

}  // namespace

FAKE_CUDA_EXPORT CUresult cuMemGetAllocationGranularity(
    size_t* granularity, const CUmemAllocationProp* prop,
    CUmemAllocationGranularity_flags option) {
  FAKE_CUDA_ENTER();
  if (granularity == nullptr || !ValidLocation(prop) ||
      (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
       option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *granularity = kGranularity;
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle* handle,
                                      size_t size,
                                      const CUmemAllocationProp* prop,
                                      unsigned long long flags) {
  FAKE_CUDA_ENTER();
  if (handle == nullptr || !ValidLocation(prop) ||
      prop->type != CU_MEM_ALLOCATION_TYPE_PINNED || flags != 0 || size == 0 ||
      size % kGranularity != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const int device = prop->location.id;
  if (!ChargePhysical(device, size)) return CUDA_ERROR_OUT_OF_MEMORY;
  World& world = TheWorld();
  const uint64_t id = world.NewId();
  MemHandle created;
  created.device = device;
  created.size = size;
  world.mem_handles[id] = created;
  *handle = MakeHandle<CUmemGenericAllocationHandle>(Tag::kMemHandle, id);
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  FAKE_CUDA_ENTER();
  MemHandle* found = FindHandle(handle);
  if (found == nullptr || found->released) return CUDA_ERROR_INVALID_VALUE;
  found->released = true;
  if (found->mappings <= 0) {
    UnchargePhysical(found->device, found->size);
    TheWorld().mem_handles.erase(HandleId(Tag::kMemHandle, handle));
  }
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size,
                                              size_t alignment,
                                              CUdeviceptr addr,
                                              unsigned long long flags) {
  FAKE_CUDA_ENTER();
  if (ptr == nullptr || size == 0 || size % kGranularity != 0 || flags != 0 ||
      (alignment & (alignment - 1)) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // `addr` is only a hint; reservations come back 2 MiB aligned at least.
  const uint64_t align = std::max<uint64_t>(alignment, kGranularity);
  const uint64_t span = size + align;
  void* map = mmap(nullptr, span, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (map == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  const uintptr_t base = reinterpret_cast<uintptr_t>(map);
  const uintptr_t aligned = RoundUp(base, align);
  if (aligned > base) munmap(map, aligned - base);
  const uintptr_t tail = aligned + size;
  if (base + span > tail)
    munmap(reinterpret_cast<void*>(tail), base + span - tail);
  TheWorld().reservations[aligned] = size;
  *ptr = aligned;
  return CUDA_SUCCESS;
}

// Mappings still inside the range are unmapped first.
FAKE_CUDA_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  FAKE_CUDA_ENTER();
  World& world = TheWorld();
  auto it = world.reservations.find(static_cast<uintptr_t>(ptr));
  if (it == world.reservations.end() || it->second != size) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  for (auto m = world.mappings.lower_bound(ptr);
       m != world.mappings.end() && m->first < ptr + size;) {
    Unmap(m++);
  }
  munmap(reinterpret_cast<void*>(static_cast<uintptr_t>(ptr)), size);
  world.reservations.erase(it);
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                                   CUmemGenericAllocationHandle handle,
                                   unsigned long long flags) {
  FAKE_CUDA_ENTER();
  MemHandle* found = FindHandle(handle);
  if (found == nullptr || found->released || flags != 0 || size == 0 ||
      size % kGranularity != 0 || offset % kGranularity != 0 ||
      offset > found->size || size > found->size - offset ||
      !InsideReservation(ptr, size) || OverlapsMapping(ptr, size)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  void* address = reinterpret_cast<void*>(static_cast<uintptr_t>(ptr));
  if (mprotect(address, size, PROT_READ | PROT_WRITE) != 0) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  ++found->mappings;
  TheWorld().mappings[ptr] = Mapping{size, HandleId(Tag::kMemHandle, handle)};
  return CUDA_SUCCESS;
}

// Unmaps every mapping in [ptr, ptr + size); the range must start at one
// and may not cut one in two.
FAKE_CUDA_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
  FAKE_CUDA_ENTER();
  World& world = TheWorld();
  auto first = world.mappings.find(static_cast<uintptr_t>(ptr));
  if (first == world.mappings.end() || size == 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::vector<uintptr_t> inside;
  for (auto it = first; it != world.mappings.end() && it->first < ptr + size;
       ++it) {
    if (it->first + it->second.size > ptr + size) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    inside.push_back(it->first);
  }
  for (uintptr_t base : inside) Unmap(world.mappings.find(base));
  return CUDA_SUCCESS;
}
