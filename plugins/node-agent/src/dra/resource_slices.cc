#include "deviceshare/agent/resource_slices.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/dra/slice_limits.h"

namespace deviceshare::agent {
namespace {

// The devices of one device-only slice, and whether any of them lowers its
// cap to kMaxDevicesPerSliceWithAdvancedFeatures.
struct DeviceSlice {
  std::vector<dra::Device> devices;
  bool advanced = false;
};

bool AnyAdvanced(const std::vector<dra::Device>& devices) {
  return std::any_of(devices.begin(), devices.end(), dra::UsesAdvancedFeatures);
}

int CapOf(bool advanced) {
  return advanced ? dra::kMaxDevicesPerSliceWithAdvancedFeatures
                  : dra::kMaxDevicesPerSlice;
}

// Appends one GPU's devices to the device slices: beside the last slice's
// when they fit under the cap the joined slice would have, else in a new
// slice. Only a GPU with more devices than one slice may hold is split, in
// order, over as few new slices as it needs; the allocator reads the pool
// as a whole, so a split GPU stays correct, just harder to read.
void AddGpuDevices(std::vector<dra::Device> devices,
                   std::vector<DeviceSlice>& slices) {
  if (devices.empty()) return;
  const bool advanced = AnyAdvanced(devices);
  if (!slices.empty()) {
    DeviceSlice& last = slices.back();
    const bool joined = last.advanced || advanced;
    if (last.devices.size() + devices.size() <=
        static_cast<size_t>(CapOf(joined))) {
      for (dra::Device& device : devices) {
        last.devices.push_back(std::move(device));
      }
      last.advanced = joined;
      return;
    }
  }
  const size_t cap = static_cast<size_t>(CapOf(advanced));
  for (size_t i = 0; i < devices.size(); ++i) {
    if (i % cap == 0) slices.push_back(DeviceSlice{{}, advanced});
    slices.back().devices.push_back(std::move(devices[i]));
  }
}

// The pool's slices, the 1.35+ way (as NVIDIA's DRA driver packs them):
// first the counter sets, at most kMaxCounterSetsPerSlice to a slice, then
// the devices in device-only slices, each GPU's together where they fit.
std::vector<dra::ResourceSlice> PackPool(std::vector<dra::GpuDevices> gpus) {
  std::vector<dra::ResourceSlice> slices;
  for (dra::GpuDevices& gpu : gpus) {
    for (dra::CounterSet& set : gpu.counter_sets) {
      if (slices.empty() ||
          slices.back().shared_counters.size() ==
              static_cast<size_t>(dra::kMaxCounterSetsPerSlice)) {
        slices.emplace_back();
      }
      slices.back().shared_counters.push_back(std::move(set));
    }
  }
  std::vector<DeviceSlice> device_slices;
  for (dra::GpuDevices& gpu : gpus) {
    AddGpuDevices(std::move(gpu.devices), device_slices);
  }
  for (DeviceSlice& packed : device_slices) {
    slices.emplace_back().devices = std::move(packed.devices);
  }
  // A node without a publishable GPU still has its pool, empty, so that
  // consumers see the withdrawal rather than a stale slice.
  if (slices.empty()) slices.emplace_back();
  return slices;
}

// Names the slices and makes them one pool, then checks each slice and the
// pool as the API server and the allocator will read them.
absl::Status NameAndCheck(const SliceOptions& options,
                          std::vector<dra::ResourceSlice>& slices) {
  const int64_t count = static_cast<int64_t>(slices.size());
  for (size_t k = 0; k < slices.size(); ++k) {
    dra::ResourceSlice& slice = slices[k];
    slice.name = absl::StrCat(options.node_name, "-", options.driver, "-", k);
    slice.driver = options.driver;
    slice.node_name = options.node_name;
    slice.pool =
        dra::ResourcePool{options.node_name, options.generation, count};
    if (absl::Status status = dra::CheckSliceLimits(slice); !status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("slice ", slice.name, ": ", status.message()));
    }
  }
  if (absl::Status status = dra::CheckPoolCounters(slices); !status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("pool ", options.node_name, ": ", status.message()));
  }
  return absl::OkStatus();
}

// The GPU's devices with the attributes every GPU carries; the backend's
// own attributes (mode, type of a MIG partition) win.
absl::StatusOr<dra::GpuDevices> DevicesOf(const DiscoveredGpu& discovered,
                                          const Gpu& gpu,
                                          const BackendSet& backends,
                                          const std::string& driver) {
  const SharingBackend* backend = backends.ForMode(gpu.mode);
  if (backend == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("GPU ", gpu.uuid, ": mode ", gpu.mode.name(),
                     " is not enabled (config scheduler.modes)"));
  }
  dra::DeviceNaming naming{GpuDeviceName(driver, gpu.index),
                           driver == kHamiDraDriver};
  absl::StatusOr<dra::GpuDevices> devices = backend->DraDevices(gpu, naming);
  if (!devices.ok()) return devices.status();
  const auto common = GpuAttributes(discovered, driver);
  for (dra::Device& device : devices->devices) {
    for (const auto& [name, value] : common) {
      device.attributes.emplace(name, value);  // keeps the backend's
    }
  }
  return devices;
}

}  // namespace

std::string GpuDeviceName(const std::string& driver, int32_t index) {
  return absl::StrCat(driver == kHamiDraDriver ? "hami-gpu-" : "gpu-", index);
}

absl::StatusOr<NodeSlices> BuildResourceSlices(
    const std::vector<DiscoveredGpu>& discovered,
    const std::vector<Gpu>& registered, const BackendSet& backends,
    const SliceOptions& options) {
  if (discovered.size() != registered.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(discovered.size(), " discovered GPUs but ",
                     registered.size(), " registered"));
  }
  if (options.node_name.empty()) {
    return absl::InvalidArgumentError("node name: empty");
  }
  NodeSlices out;
  std::vector<dra::GpuDevices> groups;
  for (size_t i = 0; i < discovered.size(); ++i) {
    if (!discovered[i].healthy) {
      out.withdrawn.push_back(absl::StrCat(discovered[i].uuid, ": unhealthy (",
                                           discovered[i].health_reason, ")"));
      continue;
    }
    absl::StatusOr<dra::GpuDevices> devices =
        DevicesOf(discovered[i], registered[i], backends, options.driver);
    if (!devices.ok()) {
      out.withdrawn.push_back(std::string(devices.status().message()));
      continue;
    }
    groups.push_back(*std::move(devices));
  }
  out.slices = PackPool(std::move(groups));
  if (absl::Status status = NameAndCheck(options, out.slices); !status.ok()) {
    return status;
  }
  return out;
}

}  // namespace deviceshare::agent
