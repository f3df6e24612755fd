// File: tests/fake_cuda/world.h
//
// The fake driver's process-local world: the visible GPUs (FAKE_CUDA_DEVICES
// filtered and ordered by CUDA_VISIBLE_DEVICES, read at cuInit), primary
// contexts, and every object the API hands out. Handles are tagged ids
// looked up in maps, never dereferenced, so a stale or foreign handle is an
// error code instead of a crash. Device pointers are real host addresses
// (anonymous mappings), so copies to and from them are real.
//
// Thread safety: everything here is guarded by WorldMutex(), which every
// exported call holds (FAKE_CUDA_ENTER) except while it sleeps for the
// virtual clock. The cross-process part lives in SharedState (atomics).
// A forked child starts uninitialized and must call cuInit again.
#ifndef DEVICESHARE_TESTS_FAKE_CUDA_WORLD_H_
#define DEVICESHARE_TESTS_FAKE_CUDA_WORLD_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "gpu_abi/cuda_abi.h"
#include "shared_state.h"

#define FAKE_CUDA_EXPORT extern "C" __attribute__((visibility("default")))

// Every call but the few that work before cuInit: the world's lock, then
// CUDA_ERROR_NOT_INITIALIZED until cuInit succeeded in this process.
#define FAKE_CUDA_ENTER()                                           \
  std::lock_guard<std::mutex> fake_lock(::fake_cuda::WorldMutex()); \
  if (!::fake_cuda::TheWorld().initialized) return CUDA_ERROR_NOT_INITIALIZED

namespace fake_cuda {

inline constexpr uint64_t kMiB = uint64_t{1} << 20;
// The allocation granularity of the real H100: every device allocation
// takes whole 2 MiB pages.
inline constexpr uint64_t kGranularity = 2 * kMiB;
// Stream-ordered pools grow their reserve in chunks of this size.
inline constexpr uint64_t kPoolChunk = 32 * kMiB;

inline uint64_t RoundUp(uint64_t value, uint64_t unit) {
  return (value + unit - 1) / unit * unit;
}

struct Device {
  std::string uuid;  // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
  CUuuid uuid_bytes{};
  uint64_t total_bytes = 0;
  int sm_count = 0;
  int physical_index = 0;  // position in FAKE_CUDA_DEVICES
  int slot = -1;           // DeviceSlot in the state
  int primary_retains = 0;
  uint64_t default_stream = 0;
  uint64_t default_pool = 0;
  uint64_t current_pool = 0;
  // The graph memory pool (cuDeviceGetGraphMemAttribute).
  uint64_t graph_used = 0, graph_used_high = 0;
  uint64_t graph_reserved = 0, graph_reserved_high = 0;
};

enum class AllocKind { kLinear, kPool, kGraph };

// A range of host memory standing in for device memory.
struct Allocation {
  uint64_t bytes = 0;   // usable
  uint64_t mapped = 0;  // length of the host mapping
  int device = 0;
  uint64_t charged = 0;  // physical bytes charged for it alone
  uint64_t pool = 0;     // kPool: the pool; the pool's `used` has it
  AllocKind kind = AllocKind::kLinear;
};

struct Stream {
  int device = 0;
  uint64_t tail_ns = 0;  // when its last item ends
};

struct Event {
  int device = 0;
  unsigned flags = 0;
  bool recorded = false;
  uint64_t stamp_ns = 0;
};

struct Module {
  int device = 0;
};

struct Function {
  uint64_t module = 0;
  uint64_t spin_us = 0;  // per wave
};

struct Pool {
  int device = 0;
  bool is_default = false;
  bool destroyed = false;  // gone once its last allocation is freed
  uint64_t used = 0, used_high = 0;
  uint64_t reserved = 0, reserved_high = 0;
  uint64_t release_threshold = 0;
};

struct Array {
  int device = 0;
  uint64_t charged = 0;
};

struct MemHandle {  // cuMemCreate
  int device = 0;
  uint64_t size = 0;
  int mappings = 0;
  bool released = false;  // uncharged once also unmapped
};

struct Mapping {  // cuMemMap
  uint64_t size = 0;
  uint64_t handle = 0;
};

struct KernelLaunch {
  uint64_t function = 0;
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
};

struct GraphAlloc {
  int device = 0;
  uint64_t bytes = 0;  // rounded
  uintptr_t address = 0;
};

struct Graph {
  std::vector<uint64_t> nodes;
  std::vector<KernelLaunch> kernels;  // in the order added
  std::vector<GraphAlloc> allocs;
};

struct GraphExec {
  std::vector<KernelLaunch> kernels;
  std::vector<GraphAlloc> allocs;  // charged to their device's graph pool
};

struct World {
  bool initialized = false;
  int32_t pid = 0;
  std::vector<Device> devices;  // CUDA ordinals
  SharedState shared;
  uint64_t next_id = 1;

  std::map<uintptr_t, Allocation> allocations;  // by base address
  std::unordered_map<uint64_t, Stream> streams;
  std::unordered_map<uint64_t, Event> events;
  std::unordered_map<uint64_t, Module> modules;
  std::unordered_map<uint64_t, Function> functions;
  std::unordered_map<uint64_t, Pool> pools;
  std::unordered_map<uint64_t, Array> arrays;
  std::unordered_map<uint64_t, MemHandle> mem_handles;
  std::map<uintptr_t, uint64_t> reservations;  // base -> size
  std::map<uintptr_t, Mapping> mappings;       // base -> mapping
  std::unordered_map<uint64_t, Graph> graphs;
  std::unordered_map<uint64_t, uint64_t> graph_nodes;  // node -> graph
  std::unordered_map<uint64_t, GraphExec> graph_execs;

  uint64_t NewId() { return next_id++; }
};

std::mutex& WorldMutex();
World& TheWorld();

// Reads the environment and builds the world; CUDA_SUCCESS or the error
// cuInit returns (with a line on stderr for malformed input).
CUresult InitializeWorld();

// ---- Handles -----------------------------------------------------------
// Tags live in bits 48..55, ids below; 0x1 and 0x2 (CU_STREAM_LEGACY and
// CU_STREAM_PER_THREAD) can never collide with a tagged value.
enum class Tag : uint64_t {
  kContext = 0xC1,
  kStream,
  kEvent,
  kModule,
  kFunction,
  kPool,
  kArray,
  kMipmappedArray,
  kMemHandle,
  kGraph,
  kGraphNode,
  kGraphExec,
};

template <class Handle>
Handle MakeHandle(Tag tag, uint64_t id) {
  const uint64_t value = (static_cast<uint64_t>(tag) << 48) | id;
  if constexpr (std::is_pointer_v<Handle>) {
    return reinterpret_cast<Handle>(static_cast<uintptr_t>(value));
  } else {
    return static_cast<Handle>(value);
  }
}

// The id in `handle`, or 0 when it does not carry `tag`.
template <class Handle>
uint64_t HandleId(Tag tag, Handle handle) {
  uint64_t value;
  if constexpr (std::is_pointer_v<Handle>) {
    value = reinterpret_cast<uintptr_t>(handle);
  } else {
    value = static_cast<uint64_t>(handle);
  }
  if ((value >> 48) != static_cast<uint64_t>(tag)) return 0;
  return value & ((uint64_t{1} << 48) - 1);
}

// ---- Devices and contexts ----------------------------------------------
Device* DeviceAt(int ordinal);  // nullptr when out of range
CUcontext PrimaryContextHandle(int ordinal);
// The ordinal of a live (retained) context handle, or -1.
int ContextDevice(CUcontext ctx);
// This thread's current context's device, or -1 when there is none (or
// it was released).
int CurrentDevice();
// This thread's context stack (top = current); reset in a new world.
std::vector<CUcontext>& ContextStack();

// The stream a handle names: null, CU_STREAM_LEGACY and
// CU_STREAM_PER_THREAD are the current context's default stream. nullptr
// with `error` set (INVALID_CONTEXT or INVALID_HANDLE) otherwise.
Stream* ResolveStream(CUstream handle, CUresult* error);

// ---- Memory --------------------------------------------------------------
// Charges `bytes` (already rounded) of physical memory on `device`.
bool ChargePhysical(int device, uint64_t bytes);
void UnchargePhysical(int device, uint64_t bytes);
// Anonymous host memory for a device allocation; 0 on failure.
uintptr_t MapHostMemory(uint64_t bytes);
void UnmapHostMemory(uintptr_t address, uint64_t bytes);
// Whether [address, address + bytes) lies inside one live allocation or
// cuMemMap'ed range.
bool RangeIsDeviceMemory(uintptr_t address, uint64_t bytes);

// Releases pool reserves above max(used, release threshold) (what the
// driver does at synchronization points) and drops destroyed, empty pools.
void ReleasePoolReserves();
// Releases `pool`'s reserve down to max(used, keep_bytes).
void TrimPool(Pool& pool, uint64_t keep_bytes);
// Lowers the pool's use after a free, and finishes a destroyed pool.
void ReturnToPool(uint64_t pool_id, uint64_t bytes);

// ---- Virtual clock ---------------------------------------------------------
// Runs `launch` on `stream`: duration from its function and shape, placed
// on the device timeline and logged. INVALID_VALUE / INVALID_HANDLE for a
// bad shape or function.
CUresult EnqueueKernel(Stream& stream, const KernelLaunch& launch);
// The check EnqueueKernel does, without running anything.
CUresult ValidateLaunch(const KernelLaunch& launch);

}  // namespace fake_cuda

#endif  // DEVICESHARE_TESTS_FAKE_CUDA_WORLD_H_
