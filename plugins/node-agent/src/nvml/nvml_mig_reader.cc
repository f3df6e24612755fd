#include "nvml/nvml_mig_reader.h"

#include <algorithm>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"

namespace deviceshare::agent {
namespace {

// Large enough for any profile's instanceCount (7 on 8-slice parts); NVML
// writes at most that many.
constexpr unsigned int kMaxInstancesPerProfile = 32;

std::string CanonicalProfileName(std::string name) {
  if (absl::StartsWith(name, "MIG ")) name.erase(0, 4);
  return name;
}

// (gi, ci) -> MIG device UUID, for every MIG device NVML lists.
std::map<std::pair<unsigned int, unsigned int>, std::string> MigDeviceUuids(
    const NvmlLibrary& nvml, nvmlDevice_t device) {
  std::map<std::pair<unsigned int, unsigned int>, std::string> uuids;
  const NvmlFunctions& fn = nvml.fn();
  if (fn.DeviceGetMaxMigDeviceCount == nullptr ||
      fn.DeviceGetMigDeviceHandleByIndex == nullptr ||
      fn.DeviceGetGpuInstanceId == nullptr ||
      fn.DeviceGetComputeInstanceId == nullptr) {
    return uuids;
  }
  unsigned int count = 0;
  if (fn.DeviceGetMaxMigDeviceCount(device, &count) != NVML_SUCCESS) {
    return uuids;
  }
  // Indexes need not be dense: try them all and skip the empty ones.
  for (unsigned int i = 0; i < count; ++i) {
    nvmlDevice_t mig = nullptr;
    if (fn.DeviceGetMigDeviceHandleByIndex(device, i, &mig) != NVML_SUCCESS) {
      continue;
    }
    unsigned int gi = 0;
    unsigned int ci = 0;
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    if (fn.DeviceGetGpuInstanceId(mig, &gi) != NVML_SUCCESS ||
        fn.DeviceGetComputeInstanceId(mig, &ci) != NVML_SUCCESS ||
        fn.DeviceGetUUID(mig, uuid, sizeof(uuid)) != NVML_SUCCESS) {
      continue;
    }
    uuids[{gi, ci}] = FromNvmlChars(uuid, sizeof(uuid));
  }
  return uuids;
}

}  // namespace

std::vector<MigProfileInfo> ReadMigProfiles(const NvmlLibrary& nvml,
                                            nvmlDevice_t device) {
  std::vector<MigProfileInfo> profiles;
  const NvmlFunctions& fn = nvml.fn();
  if (fn.DeviceGetGpuInstanceProfileInfoV == nullptr) return profiles;
  for (unsigned int index = 0; index < NVML_GPU_INSTANCE_PROFILE_COUNT;
       ++index) {
    nvmlGpuInstanceProfileInfo_v2_t info{};
    info.version = nvmlGpuInstanceProfileInfo_v2;
    if (fn.DeviceGetGpuInstanceProfileInfoV(device, index, &info) !=
        NVML_SUCCESS) {
      continue;
    }
    MigProfileInfo profile;
    profile.name =
        CanonicalProfileName(FromNvmlChars(info.name, sizeof(info.name)));
    profile.profile_id = static_cast<int32_t>(info.id);
    profile.slice_count = static_cast<int32_t>(info.sliceCount);
    profile.instance_count = static_cast<int32_t>(info.instanceCount);
    profile.sm_count = static_cast<int32_t>(info.multiprocessorCount);
    profile.memory_mib = static_cast<int64_t>(info.memorySizeMB);
    if (fn.DeviceGetGpuInstancePossiblePlacements != nullptr) {
      unsigned int count = 0;
      if (fn.DeviceGetGpuInstancePossiblePlacements(device, info.id, nullptr,
                                                    &count) == NVML_SUCCESS &&
          count > 0 && count <= 64) {
        std::vector<nvmlGpuInstancePlacement_t> placements(count);
        if (fn.DeviceGetGpuInstancePossiblePlacements(
                device, info.id, placements.data(), &count) == NVML_SUCCESS) {
          placements.resize(std::min<size_t>(count, placements.size()));
          for (const nvmlGpuInstancePlacement_t& p : placements) {
            profile.starts.push_back(static_cast<int32_t>(p.start));
            profile.memory_slices = static_cast<int32_t>(p.size);
          }
        }
      }
    }
    profiles.push_back(std::move(profile));
  }
  return profiles;
}

std::vector<std::pair<nvmlComputeInstance_t, nvmlComputeInstanceInfo_t>>
ReadComputeInstances(const NvmlLibrary& nvml, nvmlGpuInstance_t gpu_instance) {
  std::vector<std::pair<nvmlComputeInstance_t, nvmlComputeInstanceInfo_t>> out;
  const NvmlFunctions& fn = nvml.fn();
  if (fn.GpuInstanceGetComputeInstanceProfileInfo == nullptr ||
      fn.GpuInstanceGetComputeInstances == nullptr ||
      fn.ComputeInstanceGetInfo == nullptr) {
    return out;
  }
  for (unsigned int index = 0; index < NVML_COMPUTE_INSTANCE_PROFILE_COUNT;
       ++index) {
    nvmlComputeInstanceProfileInfo_t profile{};
    if (fn.GpuInstanceGetComputeInstanceProfileInfo(
            gpu_instance, index, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED,
            &profile) != NVML_SUCCESS) {
      continue;
    }
    nvmlComputeInstance_t instances[kMaxInstancesPerProfile] = {};
    unsigned int count = 0;
    if (fn.GpuInstanceGetComputeInstances(gpu_instance, profile.id, instances,
                                          &count) != NVML_SUCCESS) {
      continue;
    }
    count = std::min(count, kMaxInstancesPerProfile);
    for (unsigned int i = 0; i < count; ++i) {
      nvmlComputeInstanceInfo_t info{};
      if (fn.ComputeInstanceGetInfo(instances[i], &info) == NVML_SUCCESS) {
        out.emplace_back(instances[i], info);
      }
    }
  }
  return out;
}

std::string MigDeviceUuid(const NvmlLibrary& nvml, nvmlDevice_t device,
                          unsigned int gi, unsigned int ci) {
  auto uuids = MigDeviceUuids(nvml, device);
  auto it = uuids.find({gi, ci});
  return it == uuids.end() ? "" : it->second;
}

absl::StatusOr<std::vector<MigInstanceInfo>> ReadMigInstances(
    const NvmlLibrary& nvml, nvmlDevice_t device,
    const std::vector<MigProfileInfo>& profiles) {
  std::vector<MigInstanceInfo> instances;
  const NvmlFunctions& fn = nvml.fn();
  if (fn.DeviceGetGpuInstances == nullptr || fn.GpuInstanceGetInfo == nullptr) {
    return instances;
  }
  const auto uuids = MigDeviceUuids(nvml, device);
  for (const MigProfileInfo& profile : profiles) {
    nvmlGpuInstance_t handles[kMaxInstancesPerProfile] = {};
    unsigned int count = 0;
    const nvmlReturn_t listed = fn.DeviceGetGpuInstances(
        device, static_cast<unsigned int>(profile.profile_id), handles, &count);
    if (listed == NVML_ERROR_NOT_SUPPORTED) return instances;  // MIG off
    if (listed != NVML_SUCCESS) {
      return nvml.ToStatus(
          listed,
          absl::StrFormat("nvmlDeviceGetGpuInstances(profile %s, id %d)",
                          profile.name, profile.profile_id));
    }
    count = std::min(count, kMaxInstancesPerProfile);
    for (unsigned int i = 0; i < count; ++i) {
      nvmlGpuInstanceInfo_t info{};
      const nvmlReturn_t got = fn.GpuInstanceGetInfo(handles[i], &info);
      if (got != NVML_SUCCESS) {
        return nvml.ToStatus(got, "nvmlGpuInstanceGetInfo");
      }
      MigInstanceInfo instance;
      instance.slot.profile = profile.name;
      instance.slot.start = static_cast<int32_t>(info.placement.start);
      instance.slot.size = static_cast<int32_t>(info.placement.size);
      instance.gpu_instance_id = static_cast<int32_t>(info.id);
      for (const auto& [ci, ci_info] : ReadComputeInstances(nvml, handles[i])) {
        if (instance.compute_instance_id < 0 ||
            static_cast<int32_t>(ci_info.id) < instance.compute_instance_id) {
          instance.compute_instance_id = static_cast<int32_t>(ci_info.id);
        }
      }
      if (instance.compute_instance_id < 0) {
        // Without the compute-instance calls, the MIG devices still name
        // their (gi, ci); the map is ordered, so this is the lowest ci.
        auto it = uuids.lower_bound({info.id, 0});
        if (it != uuids.end() && it->first.first == info.id) {
          instance.compute_instance_id = static_cast<int32_t>(it->first.second);
        }
      }
      if (instance.compute_instance_id >= 0) {
        auto it = uuids.find(
            {info.id, static_cast<unsigned int>(instance.compute_instance_id)});
        if (it != uuids.end()) instance.mig_uuid = it->second;
      }
      instances.push_back(std::move(instance));
    }
  }
  std::sort(instances.begin(), instances.end(),
            [](const MigInstanceInfo& a, const MigInstanceInfo& b) {
              return a.slot.start < b.slot.start;
            });
  return instances;
}

}  // namespace deviceshare::agent
