#include "deviceshare/mps/mps_backend.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "deviceshare/backend/fractional_backend.h"
#include "deviceshare/model/device_ledger.h"

namespace deviceshare::mps {
namespace {

class MpsBackend final : public FractionalBackend {
 public:
  explicit MpsBackend(const DeviceConfig& config)
      : FractionalBackend(
            kMode, config,
            TenantLimit{kMaxMpsClients, kMpsClientsExhausted, "clients"}) {}

  absl::string_view name() const override { return kBackendName; }

  ContainerEdits Edits(const ContainerAllocation& container,
                       const EditOptions& options) const override;
};

ContainerEdits MpsBackend::Edits(const ContainerAllocation& container,
                                 const EditOptions& options) const {
  ContainerEdits edits = VisibleGpuEdits(container);
  if (container.devices.empty()) return edits;
  std::vector<std::string> memory_limits;
  for (size_t i = 0; i < container.devices.size(); ++i) {
    // MPS numbers devices as the client sees them: 0.. in the order of
    // NVIDIA_VISIBLE_DEVICES.
    memory_limits.push_back(
        absl::StrCat(i, "=", container.devices[i].memory_mib, "M"));
  }
  // One percentage per client; all devices of a container carry the same
  // cores request. 0 asks no SM share: the server's default (100) holds.
  const int32_t cores = container.devices.front().cores;
  if (cores > 0) {
    edits.env.emplace_back("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",
                           absl::StrCat(std::min(cores, 100)));
  }
  edits.env.emplace_back("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT",
                         absl::StrJoin(memory_limits, ","));
  edits.env.emplace_back("CUDA_MPS_PIPE_DIRECTORY", kPipeDirectory);
  edits.env.emplace_back("CUDA_MPS_LOG_DIRECTORY", kLogDirectory);
  const std::string& root = options.mps_root;
  edits.mounts.push_back(Mount{absl::StrCat(root, "/pipe"), kPipeDirectory,
                               /*read_only=*/false});
  edits.mounts.push_back(Mount{absl::StrCat(root, "/log"), kLogDirectory,
                               /*read_only=*/false});
  // Clients and server exchange memory through POSIX shared memory, so the
  // container must see the server's /dev/shm.
  edits.mounts.push_back(
      Mount{absl::StrCat(root, "/shm"), "/dev/shm", /*read_only=*/false});
  return edits;
}

}  // namespace

int32_t MpsClientLimit(int32_t compute_slices, int32_t total_compute_slices) {
  if (total_compute_slices <= 0 || compute_slices >= total_compute_slices) {
    return kMaxMpsClients;
  }
  return std::max<int32_t>(
      1, kMaxMpsClients * std::max(compute_slices, 0) / total_compute_slices);
}

absl::StatusOr<std::unique_ptr<SharingBackend>> NewMpsBackend(
    const DeviceConfig& config) {
  return std::make_unique<MpsBackend>(config);
}

absl::Status RegisterMpsBackend(BackendRegistry& registry) {
  return registry.Register(kBackendName, [](const Config& config) {
    return NewMpsBackend(config.device);
  });
}

}  // namespace deviceshare::mps
