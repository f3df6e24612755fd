#include "deviceshare/hamicore/hamicore_backend.h"

#include <openssl/evp.h>

#include <array>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deviceshare/backend/fractional_backend.h"
#include "deviceshare/model/units.h"

namespace deviceshare::hamicore {
namespace {

absl::string_view CorePolicyName(const DeviceConfig& config) {
  if (config.disable_core_limit) return "disable";
  switch (config.gpu_core_policy) {
    case GpuCorePolicy::kForce:
      return "force";
    case GpuCorePolicy::kDisable:
      return "disable";
    case GpuCorePolicy::kDefault:
      break;
  }
  return "";
}

class HamiCoreBackend final : public FractionalBackend {
 public:
  explicit HamiCoreBackend(const DeviceConfig& config)
      : FractionalBackend(kMode, config) {}

  absl::string_view name() const override { return kBackendName; }

  ContainerEdits Edits(const ContainerAllocation& container,
                       const EditOptions& options) const override;
};

ContainerEdits HamiCoreBackend::Edits(const ContainerAllocation& container,
                                      const EditOptions& options) const {
  ContainerEdits edits = VisibleGpuEdits(container);
  if (container.devices.empty()) return edits;
  for (size_t i = 0; i < container.devices.size(); ++i) {
    edits.env.emplace_back(absl::StrCat("CUDA_DEVICE_MEMORY_LIMIT_", i),
                           FormatMiBLimit(container.devices[i].memory_mib));
  }
  // libvgpu.so takes one SM limit per container, HAMi passes the first
  // device's; all devices of one container carry the same cores request.
  edits.env.emplace_back("CUDA_DEVICE_SM_LIMIT",
                         absl::StrCat(container.devices.front().cores));
  // A DRA claim may give one container shares of different sizes (30 % of
  // one GPU, 60 % of another): then each device gets its own limit, which
  // libvgpu.so prefers to the shared one.
  for (size_t i = 1; i < container.devices.size(); ++i) {
    if (container.devices[i].cores == container.devices[0].cores) continue;
    for (size_t j = 0; j < container.devices.size(); ++j) {
      edits.env.emplace_back(absl::StrCat("CUDA_DEVICE_SM_LIMIT_", j),
                             absl::StrCat(container.devices[j].cores));
    }
    break;
  }
  edits.env.emplace_back(
      "CUDA_DEVICE_MEMORY_SHARED_CACHE",
      absl::StrCat("/tmp/vgpu/",
                   CacheFileUuid(options.pod_uid, options.container_name),
                   ".cache"));
  if (config().device_memory_scaling_milli > 1000) {
    edits.env.emplace_back("CUDA_OVERSUBSCRIBE", "true");
  }
  absl::string_view core_policy = CorePolicyName(config());
  if (!core_policy.empty()) {
    edits.env.emplace_back("GPU_CORE_UTILIZATION_POLICY",
                           std::string(core_policy));
  }
  if (options.task_priority) {
    edits.env.emplace_back("CUDA_TASK_PRIORITY",
                           absl::StrCat(*options.task_priority));
  }
  if (config().lib_cuda_log_level >= 0) {
    edits.env.emplace_back("LIBCUDA_LOG_LEVEL",
                           absl::StrCat(config().lib_cuda_log_level));
  }
  const std::string& hook = options.hook_path;
  edits.mounts.push_back(Mount{absl::StrCat(hook, "/libvgpu.so"),
                               "/usr/local/vgpu/libvgpu.so",
                               /*read_only=*/true});
  edits.mounts.push_back(Mount{absl::StrCat(hook, "/ld.so.preload"),
                               "/etc/ld.so.preload", /*read_only=*/true});
  edits.mounts.push_back(
      Mount{absl::StrCat(hook, "/containers/", options.pod_uid, "_",
                         options.container_name),
            "/tmp/vgpu", /*read_only=*/false});
  edits.mounts.push_back(
      Mount{"/tmp/vgpulock", "/tmp/vgpulock", /*read_only=*/false});
  return edits;
}

}  // namespace

std::string CacheFileUuid(absl::string_view pod_uid,
                          absl::string_view container_name) {
  // RFC 4122 §4.3 name-based UUID under a fixed deviceshare namespace.
  static constexpr std::array<unsigned char, 16> kNamespace = {
      0x6b, 0xa7, 0xb8, 0x12, 0x9d, 0xad, 0x11, 0xd1,
      0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8};
  std::string name = absl::StrCat(pod_uid, "/", container_name);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha1(), nullptr);
  EVP_DigestUpdate(ctx, kNamespace.data(), kNamespace.size());
  EVP_DigestUpdate(ctx, name.data(), name.size());
  EVP_DigestFinal_ex(ctx, digest, &length);
  EVP_MD_CTX_free(ctx);
  digest[6] = static_cast<unsigned char>((digest[6] & 0x0f) | 0x50);
  digest[8] = static_cast<unsigned char>((digest[8] & 0x3f) | 0x80);
  return absl::StrFormat(
      "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
      digest[0], digest[1], digest[2], digest[3], digest[4], digest[5],
      digest[6], digest[7], digest[8], digest[9], digest[10], digest[11],
      digest[12], digest[13], digest[14], digest[15]);
}

absl::StatusOr<std::unique_ptr<SharingBackend>> NewHamiCoreBackend(
    const DeviceConfig& config) {
  return std::make_unique<HamiCoreBackend>(config);
}

absl::Status RegisterHamiCoreBackend(BackendRegistry& registry) {
  return registry.Register(kBackendName, [](const Config& config) {
    return NewHamiCoreBackend(config.device);
  });
}

}  // namespace deviceshare::hamicore
