// The NVML MigControl of agent/nvml_source.h.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "deviceshare/agent/nvml_source.h"
#include "deviceshare/status_macros.h"
#include "nvml/nvml_library.h"
#include "nvml/nvml_mig_reader.h"

namespace deviceshare::agent {
namespace {

class NvmlMigControl final : public MigControl {
 public:
  explicit NvmlMigControl(std::shared_ptr<NvmlLibrary> nvml)
      : nvml_(std::move(nvml)) {}

  absl::StatusOr<std::vector<MigInstanceInfo>> ListInstances(
      const std::string& gpu_uuid) override {
    absl::MutexLock lock(&mu_);
    DS_ASSIGN_OR_RETURN(nvmlDevice_t device, DeviceLocked(gpu_uuid));
    return ReadMigInstances(*nvml_, device, ReadMigProfiles(*nvml_, device));
  }

  absl::StatusOr<MigInstanceInfo> CreateInstance(const std::string& gpu_uuid,
                                                 const std::string& profile,
                                                 int32_t start) override {
    absl::MutexLock lock(&mu_);
    const NvmlFunctions& fn = nvml_->fn();
    if (fn.DeviceCreateGpuInstanceWithPlacement == nullptr ||
        fn.GpuInstanceGetInfo == nullptr || fn.GpuInstanceDestroy == nullptr ||
        fn.GpuInstanceGetComputeInstanceProfileInfo == nullptr ||
        fn.GpuInstanceCreateComputeInstance == nullptr ||
        fn.ComputeInstanceGetInfo == nullptr) {
      return absl::UnimplementedError(absl::StrFormat(
          "%s lacks the MIG instance calls (driver older than r470?)",
          nvml_->description()));
    }
    DS_ASSIGN_OR_RETURN(nvmlDevice_t device, DeviceLocked(gpu_uuid));
    const std::vector<MigProfileInfo> profiles =
        ReadMigProfiles(*nvml_, device);
    auto info = std::find_if(
        profiles.begin(), profiles.end(),
        [&](const MigProfileInfo& p) { return p.name == profile; });
    if (info == profiles.end()) {
      std::vector<std::string> names;
      for (const MigProfileInfo& p : profiles) names.push_back(p.name);
      return absl::InvalidArgumentError(absl::StrFormat(
          "GPU %s has no MIG profile \"%s\" (it has: %s)", gpu_uuid, profile,
          names.empty() ? "none" : absl::StrJoin(names, ", ")));
    }
    if (std::find(info->starts.begin(), info->starts.end(), start) ==
        info->starts.end()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "MIG profile %s on GPU %s cannot start at memory slice %d (legal "
          "starts: %s)",
          profile, gpu_uuid, start, absl::StrJoin(info->starts, ", ")));
    }
    const std::string where =
        absl::StrFormat("%s@%d on GPU %s", profile, start, gpu_uuid);
    nvmlGpuInstancePlacement_t placement{
        static_cast<unsigned int>(start),
        static_cast<unsigned int>(info->memory_slices)};
    nvmlGpuInstance_t gi = nullptr;
    nvmlReturn_t result = fn.DeviceCreateGpuInstanceWithPlacement(
        device, static_cast<unsigned int>(info->profile_id), &placement, &gi);
    if (result == NVML_ERROR_NOT_SUPPORTED) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "cannot create MIG instance %s: MIG is not enabled (%s)", where,
          nvml_->ErrorText(result)));
    }
    if (result == NVML_ERROR_INSUFFICIENT_RESOURCES) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "cannot create MIG instance %s: its memory slices are taken or the "
          "profile's instance limit is reached (%s)",
          where, nvml_->ErrorText(result)));
    }
    DS_RETURN_IF_ERROR(nvml_->ToStatus(
        result,
        absl::StrCat("nvmlDeviceCreateGpuInstanceWithPlacement ", where)));
    nvmlGpuInstanceInfo_t gi_info{};
    result = fn.GpuInstanceGetInfo(gi, &gi_info);
    if (result != NVML_SUCCESS) {
      fn.GpuInstanceDestroy(gi);
      return nvml_->ToStatus(result, "nvmlGpuInstanceGetInfo");
    }
    absl::StatusOr<nvmlComputeInstanceInfo_t> ci =
        CreateFullComputeInstanceLocked(gi, *info);
    if (!ci.ok()) {
      // No half-made instance: a GPU instance without a compute instance
      // is useless to a container and would look held.
      fn.GpuInstanceDestroy(gi);
      return absl::Status(ci.status().code(),
                          absl::StrCat(where, ": ", ci.status().message()));
    }
    MigInstanceInfo out;
    out.slot.profile = profile;
    out.slot.start = static_cast<int32_t>(gi_info.placement.start);
    out.slot.size = static_cast<int32_t>(gi_info.placement.size);
    out.gpu_instance_id = static_cast<int32_t>(gi_info.id);
    out.compute_instance_id = static_cast<int32_t>(ci->id);
    out.mig_uuid = MigDeviceUuid(*nvml_, device, gi_info.id, ci->id);
    return out;
  }

  absl::Status DestroyInstance(const std::string& gpu_uuid,
                               int32_t gpu_instance_id) override {
    absl::MutexLock lock(&mu_);
    const NvmlFunctions& fn = nvml_->fn();
    if (fn.DeviceGetGpuInstanceById == nullptr ||
        fn.GpuInstanceDestroy == nullptr) {
      return absl::UnimplementedError(absl::StrFormat(
          "%s lacks the MIG instance calls (driver older than r470?)",
          nvml_->description()));
    }
    DS_ASSIGN_OR_RETURN(nvmlDevice_t device, DeviceLocked(gpu_uuid));
    nvmlGpuInstance_t gi = nullptr;
    nvmlReturn_t result = fn.DeviceGetGpuInstanceById(
        device, static_cast<unsigned int>(gpu_instance_id), &gi);
    if (result == NVML_ERROR_NOT_FOUND ||
        result == NVML_ERROR_INVALID_ARGUMENT) {
      return absl::NotFoundError(
          absl::StrFormat("GPU %s has no MIG GPU instance %d (%s)", gpu_uuid,
                          gpu_instance_id, nvml_->ErrorText(result)));
    }
    DS_RETURN_IF_ERROR(nvml_->ToStatus(
        result, absl::StrFormat("nvmlDeviceGetGpuInstanceById(%d) on GPU %s",
                                gpu_instance_id, gpu_uuid)));
    if (fn.ComputeInstanceDestroy != nullptr) {
      for (const auto& [ci, info] : ReadComputeInstances(*nvml_, gi)) {
        DS_RETURN_IF_ERROR(nvml_->ToStatus(
            fn.ComputeInstanceDestroy(ci),
            absl::StrFormat("destroying compute instance %d of MIG GPU "
                            "instance %d on GPU %s",
                            info.id, gpu_instance_id, gpu_uuid)));
      }
    }
    return nvml_->ToStatus(
        fn.GpuInstanceDestroy(gi),
        absl::StrFormat("destroying MIG GPU instance %d on GPU %s",
                        gpu_instance_id, gpu_uuid));
  }

 private:
  absl::StatusOr<nvmlDevice_t> DeviceLocked(const std::string& gpu_uuid)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    nvmlDevice_t device = nullptr;
    const nvmlReturn_t result =
        nvml_->fn().DeviceGetHandleByUUID(gpu_uuid.c_str(), &device);
    if (result == NVML_ERROR_NOT_FOUND ||
        result == NVML_ERROR_INVALID_ARGUMENT) {
      return absl::NotFoundError(absl::StrFormat(
          "no GPU %s on this node (%s)", gpu_uuid, nvml_->ErrorText(result)));
    }
    DS_RETURN_IF_ERROR(nvml_->ToStatus(
        result, absl::StrFormat("nvmlDeviceGetHandleByUUID(%s)", gpu_uuid)));
    return device;
  }

  // One compute instance spanning the whole GPU instance: the profile whose
  // slice count equals the GPU instance's, with shared engines.
  absl::StatusOr<nvmlComputeInstanceInfo_t> CreateFullComputeInstanceLocked(
      nvmlGpuInstance_t gi, const MigProfileInfo& gi_profile)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const NvmlFunctions& fn = nvml_->fn();
    for (unsigned int index = 0; index < NVML_COMPUTE_INSTANCE_PROFILE_COUNT;
         ++index) {
      nvmlComputeInstanceProfileInfo_t profile{};
      if (fn.GpuInstanceGetComputeInstanceProfileInfo(
              gi, index, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED,
              &profile) != NVML_SUCCESS ||
          static_cast<int32_t>(profile.sliceCount) != gi_profile.slice_count) {
        continue;
      }
      nvmlComputeInstance_t ci = nullptr;
      DS_RETURN_IF_ERROR(nvml_->ToStatus(
          fn.GpuInstanceCreateComputeInstance(gi, profile.id, &ci),
          absl::StrFormat("nvmlGpuInstanceCreateComputeInstance(profile %d)",
                          profile.id)));
      nvmlComputeInstanceInfo_t info{};
      const nvmlReturn_t got = fn.ComputeInstanceGetInfo(ci, &info);
      if (got != NVML_SUCCESS) {
        if (fn.ComputeInstanceDestroy != nullptr) fn.ComputeInstanceDestroy(ci);
        return nvml_->ToStatus(got, "nvmlComputeInstanceGetInfo_v2");
      }
      return info;
    }
    return absl::FailedPreconditionError(absl::StrFormat(
        "no compute-instance profile with %d slices in the new GPU instance",
        gi_profile.slice_count));
  }

  const std::shared_ptr<NvmlLibrary> nvml_;
  absl::Mutex mu_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<MigControl>> OpenNvmlMigControl(
    const NvmlSourceOptions& options) {
  DS_ASSIGN_OR_RETURN(std::shared_ptr<NvmlLibrary> nvml,
                      NvmlLibrary::Open(options.library_path));
  return std::make_unique<NvmlMigControl>(std::move(nvml));
}

}  // namespace deviceshare::agent
