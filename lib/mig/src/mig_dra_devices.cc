#include "mig_dra_devices.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace deviceshare::mig::internal {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr char kComputeSlices[] = "compute-slices";

std::string MemorySliceCounter(int slice) {
  return absl::StrCat("memory-slice-", slice);
}

bool Allowed(const GpuKind& kind, int profile) {
  if (!kind.allowed.has_value()) return true;
  return std::find(kind.allowed->begin(), kind.allowed->end(), profile) !=
         kind.allowed->end();
}

dra::Device PlacementDevice(const Gpu& gpu, const MigProfile& profile,
                            int start, const std::string& counter_set,
                            const dra::DeviceNaming& naming) {
  dra::Device device;
  device.name = absl::StrCat(naming.gpu_device, "-mig-",
                             ProfileLabel(profile.name), "-", start);
  device.attributes["mode"] = dra::DeviceAttribute::String("mig");
  device.attributes["type"] = dra::DeviceAttribute::String("mig");
  device.attributes["profile"] = dra::DeviceAttribute::String(profile.name);
  device.attributes["placementStart"] = dra::DeviceAttribute::Int(start);
  device.attributes["parentUUID"] = dra::DeviceAttribute::String(gpu.uuid);
  device.capacity["memory"] = dra::DeviceCapacity{
      profile.memory_mib * kMiB, dra::QuantityFormat::kBinary, std::nullopt};
  if (profile.sm_count > 0) {
    device.capacity["multiprocessors"] = dra::DeviceCapacity{
        profile.sm_count, dra::QuantityFormat::kDecimal, std::nullopt};
  }
  dra::CounterConsumption consumption{counter_set, {}};
  consumption.counters[kComputeSlices] = dra::Counter{profile.compute_slices};
  for (int slice = start; slice < start + profile.memory_slices; ++slice) {
    consumption.counters[MemorySliceCounter(slice)] = dra::Counter{1};
  }
  device.consumes_counters.push_back(std::move(consumption));
  return device;
}

}  // namespace

std::string ProfileLabel(absl::string_view profile) {
  std::string label;
  for (char c : profile) {
    if (absl::ascii_isalnum(c)) {
      label += absl::ascii_tolower(c);
    } else if (c == '+' || c == '-') {
      label += '-';
    }
  }
  return label;
}

absl::StatusOr<dra::GpuDevices> MigDraDevices(const Gpu& gpu,
                                              const GpuKind& kind,
                                              const dra::DeviceNaming& naming) {
  if (kind.model == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("GPU ", gpu.uuid, ": model \"", gpu.model,
                     "\" is not in the MIG catalog"));
  }
  const MigModel& model = *kind.model;
  dra::GpuDevices out;
  dra::CounterSet set{absl::StrCat(naming.gpu_device, "-counters"), {}};
  set.counters[kComputeSlices] = dra::Counter{model.compute_slices};
  for (int slice = 0; slice < model.memory_slices; ++slice) {
    set.counters[MemorySliceCounter(slice)] = dra::Counter{1};
  }
  for (size_t p = 0; p < model.profiles.size(); ++p) {
    if (!Allowed(kind, static_cast<int>(p))) continue;
    const MigProfile& profile = model.profiles[p];
    for (int start = 0; start < model.memory_slices; ++start) {
      if (!profile.IsLegalStart(start)) continue;
      out.devices.push_back(
          PlacementDevice(gpu, profile, start, set.name, naming));
    }
  }
  out.counter_sets.push_back(std::move(set));
  return out;
}

}  // namespace deviceshare::mig::internal
