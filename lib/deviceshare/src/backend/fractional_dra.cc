// A GPU shared by fractions, as one DRA device that many claims share
// (allowMultipleAllocations): each claim consumes part of `memory` (bytes)
// and `cores` (percent of SM time), rounded by the request policies the
// allocator applies. Our own driver also publishes `shares`, one per
// tenant up to the split count (or the mode's tenant cap), so DRA keeps
// deviceSplitCount as the device plugin path does. The HAMi-compatible
// shape is exactly HAMi's (k8s-dra-driver, hami_core.go): cores 0..100
// default 100, memory 1Mi..all default all, nothing else.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "deviceshare/backend/fractional_backend.h"

namespace deviceshare {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

dra::DeviceCapacity Capacity(int64_t value, dra::QuantityFormat format,
                             dra::RequestPolicy policy) {
  return dra::DeviceCapacity{value, format, std::move(policy)};
}

dra::RequestPolicy Range(int64_t default_value, int64_t min, int64_t max,
                         int64_t step) {
  return dra::RequestPolicy{default_value, min, max, step, {}};
}

}  // namespace

absl::StatusOr<dra::GpuDevices> FractionalBackend::DraDevices(
    const Gpu& gpu, const dra::DeviceNaming& naming) const {
  if (gpu.memory_mib <= 0 || gpu.core_capacity <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GPU ", gpu.uuid, ": memory ", gpu.memory_mib, " MiB and cores ",
        gpu.core_capacity, " % leave nothing to share"));
  }
  const int64_t memory = gpu.memory_mib * kMiB;
  dra::Device device;
  device.name = naming.gpu_device;
  device.allow_multiple_allocations = true;
  device.attributes["mode"] =
      dra::DeviceAttribute::String(std::string(mode().name()));
  if (naming.hami_compatible) {
    device.capacity["cores"] =
        Capacity(100, dra::QuantityFormat::kDecimal, Range(100, 0, 100, 1));
    device.capacity["memory"] = Capacity(memory, dra::QuantityFormat::kBinary,
                                         Range(memory, kMiB, memory, kMiB));
    return dra::GpuDevices{{}, {std::move(device)}};
  }
  const int64_t cores = gpu.core_capacity;
  const int64_t default_cores =
      config().default_cores > 0
          ? std::min<int64_t>(config().default_cores, cores)
          : std::min<int64_t>(100, cores);
  const int64_t default_memory =
      config().default_memory_mib > 0
          ? std::min(config().default_memory_mib * kMiB, memory)
          : memory;
  device.capacity["cores"] = Capacity(cores, dra::QuantityFormat::kDecimal,
                                      Range(default_cores, 1, cores, 1));
  device.capacity["memory"] =
      Capacity(memory, dra::QuantityFormat::kBinary,
               Range(default_memory, kMiB, memory, kMiB));
  int64_t tenants = std::max(gpu.split_count, 1);
  if (limit_.max_tenants > 0) {
    tenants = std::min<int64_t>(tenants, limit_.max_tenants);
  }
  dra::RequestPolicy one_share;
  one_share.default_value = 1;
  one_share.valid_values = {1};
  device.capacity["shares"] =
      Capacity(tenants, dra::QuantityFormat::kDecimal, std::move(one_share));
  return dra::GpuDevices{{}, {std::move(device)}};
}

}  // namespace deviceshare
