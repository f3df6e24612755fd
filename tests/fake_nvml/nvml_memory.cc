// nvmlDeviceGetMemoryInfo and _v2. With FAKE_CUDA_STATE set, `used` is the
// physical memory the fake CUDA driver's processes hold on that GPU (read
// from the shared state file by uuid), so NVML and the fake driver agree;
// without it, or before any CUDA process has touched the GPU, nothing is
// used.
#include <sys/stat.h>

#include <algorithm>

#include "../fake_cuda/fake_cuda_state.h"
#include "fake_world.h"

using namespace fake_nvml;

#define FAKE_NVML_ENTER()                                \
  std::lock_guard<std::mutex> fake_lock(WorldMutex());   \
  if (InitCount() == 0) return NVML_ERROR_UNINITIALIZED; \
  if (!Refresh()) return NVML_ERROR_UNKNOWN

namespace {

// The state file mapped for reading, re-opened whenever the variable names
// another file or the file was replaced (each test makes a new one).
struct StateCache {
  std::string path;
  fake_cuda::StateReader reader;
};

StateCache& Cache() {
  static auto* cache = new StateCache();
  return *cache;
}

unsigned long long PhysicalUsed(const Gpu& gpu) {
  const char* path = std::getenv("FAKE_CUDA_STATE");
  if (path == nullptr || *path == '\0') return 0;
  StateCache& cache = Cache();
  struct stat st;
  if (stat(path, &st) != 0) return 0;
  if (!cache.reader.is_open() || cache.path != path ||
      cache.reader.inode() != st.st_ino) {
    cache.path = path;
    if (!cache.reader.Open(path)) return 0;
  }
  return cache.reader.PhysicalUsed(gpu.uuid).value_or(0);
}

// total, used and free of a full GPU; false for an unknown handle.
nvmlReturn_t Usage(nvmlDevice_t device, unsigned long long* total,
                   unsigned long long* used) {
  const Gpu* gpu = FullGpu(device);
  if (gpu == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (gpu->lost) return NVML_ERROR_GPU_IS_LOST;
  *total = gpu->memory_mib << 20;
  *used = std::min(PhysicalUsed(*gpu), *total);
  return NVML_SUCCESS;
}

}  // namespace

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device,
                                                      nvmlMemory_t* memory) {
  FAKE_NVML_ENTER();
  if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned long long total = 0;
  unsigned long long used = 0;
  const nvmlReturn_t result = Usage(device, &total, &used);
  if (result != NVML_SUCCESS) return result;
  memory->total = total;
  memory->used = used;
  memory->free = total - used;
  return NVML_SUCCESS;
}

// The fake reserves nothing for the driver: used + free == total.
FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
  FAKE_NVML_ENTER();
  if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (memory->version != nvmlMemory_v2) {
    return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  }
  unsigned long long total = 0;
  unsigned long long used = 0;
  const nvmlReturn_t result = Usage(device, &total, &used);
  if (result != NVML_SUCCESS) return result;
  memory->total = total;
  memory->reserved = 0;
  memory->used = used;
  memory->free = total - used;
  return NVML_SUCCESS;
}
