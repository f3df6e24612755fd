#include "deviceshare/agent/resource_slices.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "deviceshare/dra/slice_limits.h"

namespace deviceshare::agent {
namespace {

// What a slice holds so far, against the limits a GPU must fit under.
struct SliceUsage {
  int devices = 0;
  int counters = 0;
  int consumed = 0;
};

SliceUsage UsageOf(const dra::GpuDevices& gpu) {
  SliceUsage usage;
  usage.devices = static_cast<int>(gpu.devices.size());
  for (const dra::CounterSet& set : gpu.counter_sets) {
    usage.counters += dra::CounterCount(set);
  }
  for (const dra::Device& device : gpu.devices) {
    usage.consumed += dra::ConsumedCounterCount(device);
  }
  return usage;
}

bool Fits(const SliceUsage& used, const SliceUsage& more) {
  return used.devices + more.devices <= dra::kMaxDevicesPerSlice &&
         used.counters + more.counters <= dra::kMaxCountersPerSlice &&
         used.consumed + more.consumed <= dra::kMaxConsumedCountersPerSlice;
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
  SliceUsage used;
  for (dra::GpuDevices& group : groups) {
    const SliceUsage more = UsageOf(group);
    if (out.slices.empty() || !Fits(used, more)) {
      out.slices.emplace_back();
      used = SliceUsage{};
    }
    dra::ResourceSlice& slice = out.slices.back();
    for (dra::CounterSet& set : group.counter_sets) {
      slice.shared_counters.push_back(std::move(set));
    }
    for (dra::Device& device : group.devices) {
      slice.devices.push_back(std::move(device));
    }
    used.devices += more.devices;
    used.counters += more.counters;
    used.consumed += more.consumed;
  }
  // A node without a publishable GPU still has its pool, empty, so that
  // consumers see the withdrawal rather than a stale slice.
  if (out.slices.empty()) out.slices.emplace_back();
  const int64_t count = static_cast<int64_t>(out.slices.size());
  for (size_t k = 0; k < out.slices.size(); ++k) {
    dra::ResourceSlice& slice = out.slices[k];
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
  return out;
}

}  // namespace deviceshare::agent
