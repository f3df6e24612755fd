// The fake driver's process-local world: initialization from the
// environment, fork handling, contexts and stream lookup (see world.h).
#include "world.h"

#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <new>

#include "device_env.h"

namespace fake_cuda {
namespace {

std::mutex* g_mutex = new std::mutex();
World* g_world = new World();
// Bumped for every new world, so thread-local context stacks left over
// from an earlier one are dropped.
uint64_t g_generation = 1;

struct ThreadContexts {
  uint64_t generation = 0;
  std::vector<CUcontext> stack;
};
thread_local ThreadContexts t_contexts;

// Fork: hold the lock across fork() so the child never inherits it taken;
// the child then starts a fresh, uninitialized world (a real driver is
// unusable in a forked child; this one needs cuInit again). The parent's
// objects are abandoned, not freed: their memory and charges are the
// parent's.
void BeforeFork() { g_mutex->lock(); }
void AfterForkParent() { g_mutex->unlock(); }
void AfterForkChild() {
  g_mutex = new (g_mutex) std::mutex();
  g_world = new World();
  ++g_generation;
}

[[maybe_unused]] const int g_atfork =
    pthread_atfork(&BeforeFork, &AfterForkParent, &AfterForkChild);

}  // namespace

std::mutex& WorldMutex() { return *g_mutex; }
World& TheWorld() { return *g_world; }

CUresult InitializeWorld() {
  World& world = TheWorld();
  const char* devices_env = std::getenv("FAKE_CUDA_DEVICES");
  if (devices_env == nullptr || *devices_env == '\0') {
    return CUDA_ERROR_NO_DEVICE;
  }
  std::vector<PhysicalGpu> gpus;
  std::string error;
  if (!ParseDevices(devices_env, &gpus, &error)) {
    std::fprintf(stderr, "fake libcuda: %s\n", error.c_str());
    return CUDA_ERROR_INVALID_VALUE;
  }
  const std::vector<int> order =
      VisibleOrder(std::getenv("CUDA_VISIBLE_DEVICES"), gpus);
  if (order.empty()) return CUDA_ERROR_NO_DEVICE;
  const char* state_env = std::getenv("FAKE_CUDA_STATE");
  if (!world.shared.Open(state_env != nullptr ? state_env : "", &error)) {
    std::fprintf(stderr, "fake libcuda: FAKE_CUDA_STATE %s\n", error.c_str());
    return CUDA_ERROR_UNKNOWN;
  }
  world.pid = static_cast<int32_t>(getpid());
  world.shared.Join(world.pid);
  // Claim slots in physical order, so slot == physical index whenever the
  // processes sharing a file agree on FAKE_CUDA_DEVICES.
  std::vector<int> slots(gpus.size(), -1);
  for (size_t i = 0; i < gpus.size(); ++i) {
    slots[i] =
        world.shared.ClaimDevice(gpus[i].uuid, gpus[i].total_bytes, &error);
    if (slots[i] < 0) {
      std::fprintf(stderr, "fake libcuda: %s\n", error.c_str());
      world.shared.Close();
      return CUDA_ERROR_UNKNOWN;
    }
  }
  world.devices.clear();
  for (int physical : order) {
    Device device;
    device.uuid = gpus[physical].uuid;
    device.uuid_bytes = gpus[physical].bytes;
    device.total_bytes = gpus[physical].total_bytes;
    device.sm_count = gpus[physical].sm_count;
    device.physical_index = physical;
    device.slot = slots[physical];
    const int ordinal = static_cast<int>(world.devices.size());
    device.default_stream = world.NewId();
    world.streams[device.default_stream] = Stream{ordinal, 0};
    device.default_pool = world.NewId();
    device.current_pool = device.default_pool;
    Pool pool;
    pool.device = ordinal;
    pool.is_default = true;
    world.pools[device.default_pool] = pool;
    world.devices.push_back(device);
  }
  world.initialized = true;
  return CUDA_SUCCESS;
}

Device* DeviceAt(int ordinal) {
  World& world = TheWorld();
  if (ordinal < 0 || ordinal >= static_cast<int>(world.devices.size())) {
    return nullptr;
  }
  return &world.devices[ordinal];
}

CUcontext PrimaryContextHandle(int ordinal) {
  return MakeHandle<CUcontext>(Tag::kContext,
                               static_cast<uint64_t>(ordinal) + 1);
}

int ContextDevice(CUcontext ctx) {
  const uint64_t id = HandleId(Tag::kContext, ctx);
  if (id == 0) return -1;
  const Device* device = DeviceAt(static_cast<int>(id - 1));
  if (device == nullptr || device->primary_retains <= 0) return -1;
  return static_cast<int>(id - 1);
}

std::vector<CUcontext>& ContextStack() {
  if (t_contexts.generation != g_generation) {
    t_contexts.generation = g_generation;
    t_contexts.stack.clear();
  }
  return t_contexts.stack;
}

int CurrentDevice() {
  std::vector<CUcontext>& stack = ContextStack();
  if (stack.empty()) return -1;
  return ContextDevice(stack.back());
}

Stream* ResolveStream(CUstream handle, CUresult* error) {
  World& world = TheWorld();
  const uintptr_t value = reinterpret_cast<uintptr_t>(handle);
  if (value == 0 || value == 0x1 || value == 0x2) {
    const int device = CurrentDevice();
    if (device < 0) {
      *error = CUDA_ERROR_INVALID_CONTEXT;
      return nullptr;
    }
    return &world.streams.at(world.devices[device].default_stream);
  }
  auto it = world.streams.find(HandleId(Tag::kStream, handle));
  if (it == world.streams.end()) {
    *error = CUDA_ERROR_INVALID_HANDLE;
    return nullptr;
  }
  if (world.devices[it->second.device].primary_retains <= 0) {
    *error = CUDA_ERROR_INVALID_CONTEXT;
    return nullptr;
  }
  return &it->second;
}

}  // namespace fake_cuda
