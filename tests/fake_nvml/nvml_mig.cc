// The fake NVML's MIG calls: profiles, placements, GPU and compute
// instances and MIG device handles, checked the way NVML checks them.
#include <algorithm>

#include "fake_world.h"

using namespace fake_nvml;

#define FAKE_NVML_ENTER()                                \
  std::lock_guard<std::mutex> fake_lock(WorldMutex());   \
  if (InitCount() == 0) return NVML_ERROR_UNINITIALIZED; \
  if (!Refresh()) return NVML_ERROR_UNKNOWN

namespace {

// Compute slices of NVML_COMPUTE_INSTANCE_PROFILE_{1,2,3,4,7}_SLICE; the
// profile id is the index, as on real parts.
constexpr unsigned kCiSlices[] = {1, 2, 3, 4, 7};

unsigned TotalMemorySlices(const Gpu& gpu) {
  unsigned total = 0;
  for (const Profile& p : gpu.profiles)
    total = std::max(total, p.memory_slices);
  return total;
}

// NVML numbers GPU instances by where they sit: on an 8-slice part the
// full GPU is 0, the halves 1-2, the quarters 3-6, the eighths 7-14, so an
// id never repeats among non-overlapping instances.
unsigned GpuInstanceId(unsigned total, unsigned start, unsigned size) {
  return (total / size - 1) + start / size;
}

// MIG devices in NVML's index order: by GPU instance id, then compute
// instance id.
std::vector<std::pair<unsigned, unsigned>> MigDevices(const Gpu& gpu) {
  std::vector<std::pair<unsigned, unsigned>> out;
  for (const GpuInstance& gi : Instances(gpu.uuid)) {
    for (const ComputeInstance& ci : gi.cis) out.emplace_back(gi.id, ci.id);
  }
  std::sort(out.begin(), out.end());
  return out;
}

nvmlReturn_t MigUsable(const Gpu* gpu) {
  if (gpu == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (gpu->lost) return NVML_ERROR_GPU_IS_LOST;
  if (!gpu->mig_capable || !gpu->mig_mode) return NVML_ERROR_NOT_SUPPORTED;
  return NVML_SUCCESS;
}

}  // namespace

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device,
                                                   unsigned* current,
                                                   unsigned* pending) {
  FAKE_NVML_ENTER();
  const Gpu* gpu = FullGpu(device);
  if (gpu == nullptr || current == nullptr || pending == nullptr) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (gpu->lost) return NVML_ERROR_GPU_IS_LOST;
  if (!gpu->mig_capable) return NVML_ERROR_NOT_SUPPORTED;
  *current = *pending =
      gpu->mig_mode ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
  return NVML_SUCCESS;
}

// Answers with MIG off too, as r580 does (docs/reference/mig-mps-nvml.md §1.1).
FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetGpuInstanceProfileInfoV(nvmlDevice_t device, unsigned index,
                                     nvmlGpuInstanceProfileInfo_v2_t* info) {
  FAKE_NVML_ENTER();
  const Gpu* gpu = FullGpu(device);
  if (gpu == nullptr || info == nullptr ||
      index >= NVML_GPU_INSTANCE_PROFILE_COUNT) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (info->version != nvmlGpuInstanceProfileInfo_v2) {
    return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  }
  if (gpu->lost) return NVML_ERROR_GPU_IS_LOST;
  if (!gpu->mig_capable) return NVML_ERROR_NOT_SUPPORTED;
  for (const Profile& p : gpu->profiles) {
    if (p.index != index) continue;
    const unsigned version = info->version;
    *info = nvmlGpuInstanceProfileInfo_v2_t{};
    info->version = version;
    info->id = p.id;
    info->sliceCount = p.slices;
    info->instanceCount = p.instances;
    info->multiprocessorCount = p.sm;
    info->copyEngineCount = p.slices;
    info->memorySizeMB = p.memory_mib;
    CopyString("MIG " + p.name, info->name, sizeof(info->name));
    return NVML_SUCCESS;
  }
  return NVML_ERROR_NOT_SUPPORTED;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstancePossiblePlacements_v2(
    nvmlDevice_t device, unsigned profile_id,
    nvmlGpuInstancePlacement_t* placements, unsigned* count) {
  FAKE_NVML_ENTER();
  const Gpu* gpu = FullGpu(device);
  if (gpu == nullptr || count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (gpu->lost) return NVML_ERROR_GPU_IS_LOST;
  if (!gpu->mig_capable) return NVML_ERROR_NOT_SUPPORTED;
  const Profile* p = ProfileById(*gpu, profile_id);
  if (p == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *count = static_cast<unsigned>(p->starts.size());
  if (placements != nullptr) {
    for (size_t i = 0; i < p->starts.size(); ++i) {
      placements[i] = {p->starts[i], p->memory_slices};
    }
  }
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceCreateGpuInstanceWithPlacement(
    nvmlDevice_t device, unsigned profile_id,
    const nvmlGpuInstancePlacement_t* placement,
    nvmlGpuInstance_t* gpu_instance) {
  FAKE_NVML_ENTER();
  const Gpu* gpu = FullGpu(device);
  if (gpu == nullptr || placement == nullptr || gpu_instance == nullptr) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (const nvmlReturn_t usable = MigUsable(gpu); usable != NVML_SUCCESS) {
    return usable;
  }
  const Profile* p = ProfileById(*gpu, profile_id);
  if (p == nullptr || placement->size != p->memory_slices ||
      std::find(p->starts.begin(), p->starts.end(), placement->start) ==
          p->starts.end()) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  std::vector<GpuInstance>& instances = Instances(gpu->uuid);
  unsigned same_profile = 0;
  for (const GpuInstance& gi : instances) {
    if (gi.profile_id == profile_id) ++same_profile;
    const bool overlap = placement->start < gi.start + gi.size &&
                         gi.start < placement->start + placement->size;
    if (overlap) return NVML_ERROR_INSUFFICIENT_RESOURCES;
  }
  if (same_profile >= p->instances) return NVML_ERROR_INSUFFICIENT_RESOURCES;
  GpuInstance gi;
  gi.id =
      GpuInstanceId(TotalMemorySlices(*gpu), placement->start, placement->size);
  gi.profile_id = profile_id;
  gi.start = placement->start;
  gi.size = placement->size;
  instances.push_back(gi);
  SaveState();
  *gpu_instance = GpuInstanceHandle(gpu->index, gi.id);
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetGpuInstances(nvmlDevice_t device, unsigned profile_id,
                          nvmlGpuInstance_t* gpu_instances, unsigned* count) {
  FAKE_NVML_ENTER();
  const Gpu* gpu = FullGpu(device);
  if (gpu == nullptr || gpu_instances == nullptr || count == nullptr) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (const nvmlReturn_t usable = MigUsable(gpu); usable != NVML_SUCCESS) {
    return usable;
  }
  if (ProfileById(*gpu, profile_id) == nullptr) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  unsigned n = 0;
  for (const GpuInstance& gi : Instances(gpu->uuid)) {
    if (gi.profile_id == profile_id) {
      gpu_instances[n++] = GpuInstanceHandle(gpu->index, gi.id);
    }
  }
  *count = n;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceById(
    nvmlDevice_t device, unsigned id, nvmlGpuInstance_t* gpu_instance) {
  FAKE_NVML_ENTER();
  const Gpu* gpu = FullGpu(device);
  if (gpu == nullptr || gpu_instance == nullptr) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (const nvmlReturn_t usable = MigUsable(gpu); usable != NVML_SUCCESS) {
    return usable;
  }
  for (const GpuInstance& gi : Instances(gpu->uuid)) {
    if (gi.id == id) {
      *gpu_instance = GpuInstanceHandle(gpu->index, id);
      return NVML_SUCCESS;
    }
  }
  return NVML_ERROR_NOT_FOUND;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlGpuInstanceGetInfo(
    nvmlGpuInstance_t gpu_instance, nvmlGpuInstanceInfo_t* info) {
  FAKE_NVML_ENTER();
  MigRef ref;
  if (!GpuInstanceOf(gpu_instance, ref) || info == nullptr) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  info->device = DeviceHandle(ref.gpu->index);
  info->id = ref.gi->id;
  info->profileId = ref.gi->profile_id;
  info->placement = {ref.gi->start, ref.gi->size};
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlGpuInstanceDestroy(nvmlGpuInstance_t gpu_instance) {
  FAKE_NVML_ENTER();
  MigRef ref;
  if (!GpuInstanceOf(gpu_instance, ref)) return NVML_ERROR_INVALID_ARGUMENT;
  if (!ref.gi->cis.empty()) return NVML_ERROR_IN_USE;
  std::vector<GpuInstance>& instances = Instances(ref.gpu->uuid);
  const unsigned id = ref.gi->id;
  instances.erase(
      std::remove_if(instances.begin(), instances.end(),
                     [&](const GpuInstance& gi) { return gi.id == id; }),
      instances.end());
  SaveState();
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(
    nvmlGpuInstance_t gpu_instance, unsigned profile, unsigned eng_profile,
    nvmlComputeInstanceProfileInfo_t* info) {
  FAKE_NVML_ENTER();
  MigRef ref;
  if (!GpuInstanceOf(gpu_instance, ref) || info == nullptr ||
      profile >= NVML_COMPUTE_INSTANCE_PROFILE_COUNT) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (eng_profile != NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED) {
    return NVML_ERROR_NOT_SUPPORTED;
  }
  const Profile* gi_profile = ProfileById(*ref.gpu, ref.gi->profile_id);
  if (gi_profile == nullptr || profile >= std::size(kCiSlices) ||
      kCiSlices[profile] > gi_profile->slices) {
    return NVML_ERROR_NOT_SUPPORTED;
  }
  *info = nvmlComputeInstanceProfileInfo_t{};
  info->id = profile;
  info->sliceCount = kCiSlices[profile];
  info->instanceCount = gi_profile->slices / kCiSlices[profile];
  info->multiprocessorCount =
      gi_profile->sm * kCiSlices[profile] / gi_profile->slices;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlGpuInstanceCreateComputeInstance(
    nvmlGpuInstance_t gpu_instance, unsigned profile_id,
    nvmlComputeInstance_t* compute_instance) {
  FAKE_NVML_ENTER();
  MigRef ref;
  if (!GpuInstanceOf(gpu_instance, ref) || compute_instance == nullptr) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  const Profile* gi_profile = ProfileById(*ref.gpu, ref.gi->profile_id);
  if (gi_profile == nullptr || profile_id >= std::size(kCiSlices) ||
      kCiSlices[profile_id] > gi_profile->slices) {
    return NVML_ERROR_NOT_SUPPORTED;
  }
  const unsigned size = kCiSlices[profile_id];
  // The lowest free run of compute slices, and the lowest free id.
  for (unsigned start = 0; start + size <= gi_profile->slices; ++start) {
    bool free = true;
    for (const ComputeInstance& ci : ref.gi->cis) {
      if (start < ci.start + ci.size && ci.start < start + size) free = false;
    }
    if (!free) continue;
    unsigned id = 0;
    while (
        std::any_of(ref.gi->cis.begin(), ref.gi->cis.end(),
                    [&](const ComputeInstance& ci) { return ci.id == id; })) {
      ++id;
    }
    ref.gi->cis.push_back({id, profile_id, start, size});
    SaveState();
    *compute_instance = ComputeInstanceHandle(ref.gpu->index, ref.gi->id, id);
    return NVML_SUCCESS;
  }
  return NVML_ERROR_INSUFFICIENT_RESOURCES;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlGpuInstanceGetComputeInstances(
    nvmlGpuInstance_t gpu_instance, unsigned profile_id,
    nvmlComputeInstance_t* compute_instances, unsigned* count) {
  FAKE_NVML_ENTER();
  MigRef ref;
  if (!GpuInstanceOf(gpu_instance, ref) || compute_instances == nullptr ||
      count == nullptr) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  unsigned n = 0;
  for (const ComputeInstance& ci : ref.gi->cis) {
    if (ci.profile_id == profile_id) {
      compute_instances[n++] =
          ComputeInstanceHandle(ref.gpu->index, ref.gi->id, ci.id);
    }
  }
  *count = n;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlComputeInstanceGetInfo_v2(
    nvmlComputeInstance_t compute_instance, nvmlComputeInstanceInfo_t* info) {
  FAKE_NVML_ENTER();
  MigRef ref;
  if (!ComputeInstanceOf(compute_instance, ref) || info == nullptr) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  info->device = DeviceHandle(ref.gpu->index);
  info->gpuInstance = GpuInstanceHandle(ref.gpu->index, ref.gi->id);
  info->id = ref.ci->id;
  info->profileId = ref.ci->profile_id;
  info->placement = {ref.ci->start, ref.ci->size};
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlComputeInstanceDestroy(nvmlComputeInstance_t compute_instance) {
  FAKE_NVML_ENTER();
  MigRef ref;
  if (!ComputeInstanceOf(compute_instance, ref)) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  const unsigned id = ref.ci->id;
  ref.gi->cis.erase(
      std::remove_if(ref.gi->cis.begin(), ref.gi->cis.end(),
                     [&](const ComputeInstance& ci) { return ci.id == id; }),
      ref.gi->cis.end());
  SaveState();
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned* count) {
  FAKE_NVML_ENTER();
  const Gpu* gpu = FullGpu(device);
  if (gpu == nullptr || count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned most = 0;
  if (gpu->mig_capable && gpu->mig_mode) {
    for (const Profile& p : gpu->profiles) most = std::max(most, p.slices);
  }
  *count = most;  // 0 with MIG off, as measured
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(
    nvmlDevice_t device, unsigned index, nvmlDevice_t* mig_device) {
  FAKE_NVML_ENTER();
  const Gpu* gpu = FullGpu(device);
  if (gpu == nullptr || mig_device == nullptr) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (const nvmlReturn_t usable = MigUsable(gpu); usable != NVML_SUCCESS) {
    return usable;
  }
  const auto devices = MigDevices(*gpu);
  if (index >= devices.size()) return NVML_ERROR_NOT_FOUND;
  *mig_device =
      MigDeviceHandle(gpu->index, devices[index].first, devices[index].second);
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device,
                                                         unsigned* id) {
  FAKE_NVML_ENTER();
  if (id == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (FullGpu(device) != nullptr) return NVML_ERROR_NOT_SUPPORTED;
  MigRef ref;
  if (!MigDevice(device, ref)) return NVML_ERROR_INVALID_ARGUMENT;
  *id = ref.gi->id;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned* id) {
  FAKE_NVML_ENTER();
  if (id == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (FullGpu(device) != nullptr) return NVML_ERROR_NOT_SUPPORTED;
  MigRef ref;
  if (!MigDevice(device, ref)) return NVML_ERROR_INVALID_ARGUMENT;
  *id = ref.ci->id;
  return NVML_SUCCESS;
}
