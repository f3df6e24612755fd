// File: agent/agent_service.h
//
// RunAgent: `deviceshare-node-agent serve`. Wires the parts together:
//   GpuSource (NVML or inventory) -> RegisteredGpus -> NodeRegistrar
//   pod watch (spec.nodeName=<node>) -> AllocationMatcher <- kubelet's
//     DevicePluginServer (one resource, split replicas per GPU)
//   MIG grants -> MigRealizer (NVML)        MPS GPUs -> MpsDaemon
// and keeps them current: GPU health is polled every health_interval and a
// change re-registers the node and re-advertises the devices at once; the
// registration is compared with the node every register_interval (someone
// may have edited it) and orphan MIG instances are swept then.
#ifndef DEVICESHARE_AGENT_AGENT_SERVICE_H_
#define DEVICESHARE_AGENT_AGENT_SERVICE_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "deviceshare/agent/device_plugin_server.h"
#include "deviceshare/agent/gpu_source.h"
#include "deviceshare/config/scheduler_config.h"
#include "deviceshare/model/gpu.h"
#include "deviceshare/model/pod_request.h"
#include "deviceshare/model/sharing_mode.h"

namespace deviceshare::agent {

struct AgentOptions {
  std::string node_name;
  std::string kubeconfig;  // "" = in-cluster credentials
  std::string inventory;   // "" = NVML
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string device_plugin_dir = "/var/lib/kubelet/device-plugins";
  std::string config_path;  // "" = defaults
  Dialect dialect = Dialect::kHami;
  std::string state_dir = "/run/deviceshare";
  std::string hook_path = "/usr/local/vgpu";
  // Installed into hook_path at start (agent/vgpu_installer.h); "" = none.
  std::string vgpu_library;
  std::string mps_root = "/run/deviceshare/mps";
  std::string mps_control_binary = "nvidia-cuda-mps-control";
  // How GPUs not in MIG mode are shared: hami-core or mps.
  SharingMode whole_gpu_mode = kDefaultSharingMode;
  std::string cdi_kind;  // "" = no CDI device names
  // Which kubelet APIs to serve: the device plugin, the DRA driver, or
  // both (agent/dra_plugin_server.h; --dra, --device-plugin).
  bool device_plugin = true;
  bool dra = false;
  std::string dra_driver_name = "gpu.deviceshare.io";
  std::string dra_plugin_dir = "/var/lib/kubelet/plugins";
  std::string dra_registry_dir = "/var/lib/kubelet/plugins_registry";
  std::string cdi_dir = "/var/run/cdi";
  absl::Duration health_interval = absl::Seconds(5);
  absl::Duration register_interval = absl::Seconds(30);
  absl::Duration watchdog_interval = absl::Seconds(1);
  // HOST:PORT of GET /metrics and /healthz (agent/metrics); "" = none.
  std::string metrics_address;
  // Set: serve only allocation records (device plugin) and claim
  // allocations (DRA) a key of this file signed (trust/).
  std::string record_key_file;
  bool accept_unsigned_records = false;
};

// The deviceshare config file (config/config_parser.h); defaults for "".
// Errors name --config and the file.
absl::StatusOr<Config> LoadConfigFile(const std::string& path);

// The GPUs of this node: the inventory file when one is named, else NVML
// loaded from `nvml_library` (agent/nvml_source.h).
absl::StatusOr<std::unique_ptr<GpuSource>> OpenGpuSource(
    const std::string& inventory, const std::string& nvml_library);

// The kubelet resource the agent serves in `dialect`: Volcano's
// "volcano.sh/vgpu-number", or HAMi's count resource (configurable,
// "nvidia.com/gpu" by default).
std::string AgentResourceName(Dialect dialect,
                              const std::string& hami_count_resource);

// Every GPU as `split_count` replicas "<uuid>::<i>", unhealthy GPUs'
// replicas Unhealthy; NUMA nodes when `with_numa`.
std::vector<AdvertisedDevice> AdvertisedDevices(const std::vector<Gpu>& gpus,
                                                bool with_numa);

// Runs until `stop` becomes true (checked about every 100 ms) or a part
// fails for good. Errors name what failed.
absl::Status RunAgent(const AgentOptions& options,
                      const std::atomic<bool>& stop);

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_AGENT_SERVICE_H_
