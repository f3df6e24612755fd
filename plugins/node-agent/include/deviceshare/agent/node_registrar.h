// File: agent/node_registrar.h
//
// NodeRegistrar: tells the scheduler what GPUs the node has, by the node's
// registration annotation in the chosen dialect
// (`hami.io/node-nvidia-register` JSON or `volcano.sh/node-vgpu-register`),
// shaped by the device config map (split count, memory and core scaling:
// config/device_registration.h). It patches the node only when the value
// differs from what the node carries, so a restarted agent re-registers
// (the value is compared afresh) and a heartbeat costs one GET. Unhealthy
// GPUs are registered with health false -- both dialects carry it -- so
// the scheduler stops placing on them; they come back when healthy.
//
// Thread safety: Register() may be called from one thread at a time.
#ifndef DEVICESHARE_AGENT_NODE_REGISTRAR_H_
#define DEVICESHARE_AGENT_NODE_REGISTRAR_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "deviceshare/agent/discovered_gpu.h"
#include "deviceshare/config/device_config.h"
#include "deviceshare/kube/api_client.h"
#include "deviceshare/mig/mig_config.h"
#include "deviceshare/model/gpu.h"
#include "deviceshare/model/pod_request.h"

namespace deviceshare::agent {

// The GPUs as the node registers them: each physical GPU through
// RegisteredGpu(config); a GPU in MIG mode is mode mig, any other gets
// `whole_gpu_mode` (hami-core or mps; an MPS GPU is mps_capable). Each GPU's
// links become HAMi's pair scores (100 per NVLink, else 20 on one CPU
// socket, 10 across), for the topology-aware policy.
//
// A GPU in MIG mode carries, as Gpu::mig_profiles, exactly the profiles
// HAMi's device plugin registers (register.go discoverMigProfiles): those
// of the first `mig_allowlist` entry (HAMi's nvidia.migProfileAllowlist,
// mig/mig_config.h) whose models name the GPU's registered type
// (ModelNamesAny), in the entry's order, each under its allowlisted name
// with NVML's memory, slice count, instance count and placements of the
// GPU instance profile of its compute slices (the "1g" of "1g.10gb"; a
// name whose slices HAMi's table lacks is skipped), and core =
// ceil(profile SMs x 100 / the largest profile's SMs). Its split count is
// then the largest instance count among them, as HAMi's. HAMi's JSON
// registration writes them as `migProfiles`, and they are the GPU's MIG
// catalogue wherever it is scheduled.
//
// With no allowlist, or no entry naming the model, HAMi's plugin finds no
// profile and leaves the GPU out of its registration altogether
// ("skip MIG device with no discovered profile capacity"). deviceshare
// registers no profiles either, but keeps the GPU (split count from the
// config): the scheduler then uses the built-in MIG table of its model, so
// a node without an allowlist keeps its MIG GPUs.
absl::StatusOr<std::vector<Gpu>> RegisteredGpus(
    const std::vector<DiscoveredGpu>& gpus, const DeviceConfig& config,
    SharingMode whole_gpu_mode,
    const std::vector<mig::MigProfileAllowlist>& mig_allowlist);

// As above with no allowlist: no GPU registers MIG profiles.
absl::StatusOr<std::vector<Gpu>> RegisteredGpus(
    const std::vector<DiscoveredGpu>& gpus, const DeviceConfig& config,
    SharingMode whole_gpu_mode);

// The type a GPU registers under: Volcano's node plugin writes
// "NVIDIA-" + the NVML name; HAMi's adds the prefix only when the name does
// not start with "NVIDIA" ("NVIDIA H100 80GB HBM3" stays, "Tesla T4"
// becomes "NVIDIA-Tesla T4").
std::string RegisteredType(const std::string& nvml_name, Dialect dialect);

// The annotation key and value for `gpus` (models as NVML names them) in
// `dialect`. Volcano's registration counts memory in units of
// `volcano_memory_factor` MiB (gpuMemoryFactor, codec/volcano_codec.h).
std::string RegistrationKey(Dialect dialect);
std::string RegistrationValue(std::vector<Gpu> gpus, Dialect dialect,
                              int32_t volcano_memory_factor);

class NodeRegistrar {
 public:
  // `client` must outlive the registrar.
  NodeRegistrar(kube::ApiClient* client, std::string node_name, Dialect dialect,
                int32_t volcano_memory_factor);

  // Patches the node's annotation to `gpus` unless it already says so (in
  // HAMi's dialect also hami.io/node-nvidia-score when a GPU has pair
  // scores). Returns true when it patched. NotFound when the node does not
  // exist.
  absl::StatusOr<bool> Register(const std::vector<Gpu>& gpus);

 private:
  kube::ApiClient* const client_;
  const std::string node_name_;
  const Dialect dialect_;
  const int32_t volcano_memory_factor_;
};

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_NODE_REGISTRAR_H_
