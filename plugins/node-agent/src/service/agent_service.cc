#include "deviceshare/agent/agent_service.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "deviceshare/agent/allocation_matcher.h"
#include "deviceshare/agent/inventory_source.h"
#include "deviceshare/agent/mps_daemon.h"
#include "deviceshare/agent/node_registrar.h"
#include "deviceshare/agent/nvml_source.h"
#include "deviceshare/agent/pod_patch_queue.h"
#include "deviceshare/agent/vgpu_installer.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/config/config_parser.h"
#include "deviceshare/kube/api_client.h"
#include "deviceshare/kube/events.h"
#include "deviceshare/kube/object_paths.h"
#include "deviceshare/kube/reflector.h"
#include "deviceshare/mig/mig_backend.h"
#include "deviceshare/mig/mig_config.h"
#include "deviceshare/mps/mps_backend.h"
#include "deviceshare/status_macros.h"
#include "deviceshare/trust/record_keys.h"
#include "metrics/agent_metrics.h"
#include "metrics/metrics_server.h"
#include "service/dra_driver.h"
#include "service/mig_preparer.h"
#include "spdlog/spdlog.h"

namespace deviceshare::agent {
namespace {}  // namespace

absl::StatusOr<Config> LoadConfigFile(const std::string& path) {
  if (path.empty()) return Config{};
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("--config ", path, ": cannot read"));
  }
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<Config> config =
      ParseConfigYaml(text.str(), BuiltinConfigExtensions());
  if (!config.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--config ", path, ": ", config.status().message()));
  }
  return config;
}

namespace {

bool SameHealth(const std::vector<Gpu>& a, const std::vector<Gpu>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].uuid != b[i].uuid || a[i].healthy != b[i].healthy) return false;
  }
  return true;
}

// Sleeps `duration` in small steps; false when `stop` was set.
bool SleepUnlessStopped(absl::Duration duration,
                        const std::atomic<bool>& stop) {
  const absl::Time until = absl::Now() + duration;
  while (absl::Now() < until) {
    if (stop.load()) return false;
    absl::SleepFor(std::min(absl::Milliseconds(100), until - absl::Now()));
  }
  return !stop.load();
}

}  // namespace

absl::StatusOr<std::unique_ptr<GpuSource>> OpenGpuSource(
    const std::string& inventory, const std::string& nvml_library) {
  if (!inventory.empty()) return OpenInventorySource(inventory);
  NvmlSourceOptions nvml;
  nvml.library_path = nvml_library;
  return OpenNvmlSource(nvml);
}

std::string AgentResourceName(Dialect dialect,
                              const std::string& hami_count_resource) {
  return dialect == Dialect::kVolcano ? "volcano.sh/vgpu-number"
                                      : hami_count_resource;
}

std::vector<AdvertisedDevice> AdvertisedDevices(const std::vector<Gpu>& gpus,
                                                bool with_numa) {
  std::vector<AdvertisedDevice> devices;
  for (const Gpu& gpu : gpus) {
    for (int replica = 0; replica < gpu.split_count; ++replica) {
      devices.push_back(AdvertisedDevice{ReplicaDeviceId(gpu.uuid, replica),
                                         gpu.healthy,
                                         with_numa ? gpu.numa_node : -1});
    }
  }
  return devices;
}

namespace {

// Installs the vGPU library into the hook path, when one is named.
absl::Status InstallHook(const AgentOptions& options) {
  if (options.vgpu_library.empty()) return absl::OkStatus();
  DS_RETURN_IF_ERROR(
      InstallVgpuLibrary(options.vgpu_library, options.hook_path));
  spdlog::info("installed {} into {}", options.vgpu_library, options.hook_path);
  return absl::OkStatus();
}

// The node's GPUs as they are registered: what `source` finds, shaped by
// the config (its migProfileAllowlist picks the MIG profiles registered).
absl::StatusOr<std::vector<Gpu>> DiscoverGpus(
    GpuSource& source, const Config& config, const AgentOptions& options,
    std::vector<DiscoveredGpu>& discovered) {
  spdlog::info("GPUs from {}", source.Describe());
  DS_ASSIGN_OR_RETURN(mig::MigConfig mig, mig::ReadMigConfig(config));
  DS_ASSIGN_OR_RETURN(discovered, source.Discover());
  DS_ASSIGN_OR_RETURN(
      std::vector<Gpu> gpus,
      RegisteredGpus(discovered, config.device, options.whole_gpu_mode,
                     mig.profile_allowlist));
  spdlog::info("{} GPUs on node {}", gpus.size(), options.node_name);
  return gpus;
}

// Writes the node's registration when it changed; false (logged) when it
// could not be written.
bool RegisterNode(NodeRegistrar& registrar, const AgentOptions& options,
                  const std::vector<Gpu>& gpus) {
  absl::StatusOr<bool> patched = registrar.Register(gpus);
  if (!patched.ok()) {
    spdlog::warn("node {}: registration not written: {}", options.node_name,
                 patched.status().ToString());
  } else if (*patched) {
    spdlog::info("node {}: registered {} GPUs ({})", options.node_name,
                 gpus.size(), RegistrationKey(options.dialect));
  }
  return patched.ok();
}

// MIG instances are made and swept through NVML, so there is no MIG control
// for an inventory file; null also when no GPU is in MIG mode.
std::unique_ptr<MigControl> OpenMigControl(const AgentOptions& options,
                                           const std::vector<Gpu>& gpus) {
  const bool any_mig = std::any_of(gpus.begin(), gpus.end(), [](const Gpu& g) {
    return g.mode == mig::kMode;
  });
  if (!any_mig || !options.inventory.empty()) return nullptr;
  NvmlSourceOptions nvml;
  nvml.library_path = options.nvml_library;
  absl::StatusOr<std::unique_ptr<MigControl>> control =
      OpenNvmlMigControl(nvml);
  if (!control.ok()) {
    spdlog::warn("MIG GPUs, but MIG control is not available: {}",
                 control.status().ToString());
    return nullptr;
  }
  return *std::move(control);
}

// The matcher that answers kubelet; the records it updates are written
// through `patches`.
std::string NodePodsPath(const std::string& node_name) {
  return kube::WithQuery(
      kube::PodsPath(),
      {{"fieldSelector", absl::StrCat("spec.nodeName=", node_name)}});
}

absl::StatusOr<std::unique_ptr<AllocationMatcher>> CreateMatcher(
    const AgentOptions& options, const Config& config,
    const std::string& resource, std::unique_ptr<ServedJournal> journal,
    PodPatchQueue& patches, MigControl* mig_control,
    trust::RecordKeySource* record_keys, kube::ApiClient* client) {
  AllocationMatcherOptions matcher_options;
  matcher_options.record_keys = record_keys;
  matcher_options.record_policy.accept_unsigned =
      options.accept_unsigned_records;
  matcher_options.report_refused_record = [client](const std::string& pod_key,
                                                   const std::string& uid,
                                                   const std::string& message) {
    std::pair<std::string, std::string> name =
        absl::StrSplit(pod_key, absl::MaxSplits('/', 1));
    absl::Status posted =
        kube::PostPodEvent(*client, kube::PodRef{name.first, name.second, uid},
                           "Warning", "AllocationRecordRefused", message,
                           "deviceshare-node-agent", absl::Now());
    if (!posted.ok()) {
      spdlog::warn("pod {}: event not recorded: {}", pod_key,
                   posted.ToString());
    }
  };
  matcher_options.node_name = options.node_name;
  matcher_options.resource_name = resource;
  matcher_options.hook_path = options.hook_path;
  matcher_options.mps_root = options.mps_root;
  matcher_options.kubelet_checkpoint_path =
      absl::StrCat(options.device_plugin_dir, "/kubelet_internal_checkpoint");
  matcher_options.cdi_kind = options.cdi_kind;
  matcher_options.list_pods = [client, path = NodePodsPath(options.node_name)]()
      -> absl::StatusOr<std::vector<nlohmann::json>> {
    DS_ASSIGN_OR_RETURN(nlohmann::json list, client->Get(path));
    std::vector<nlohmann::json> items;
    if (list.contains("items") && list["items"].is_array()) {
      for (nlohmann::json& item : list["items"])
        items.push_back(std::move(item));
    }
    return items;
  };
  return AllocationMatcher::Create(
      matcher_options, config, std::move(journal),
      [&patches](const std::string& key, const std::string& uid,
                 const nlohmann::json& annotations) {
        patches.Enqueue(key, uid, annotations);
      },
      mig_control != nullptr ? MakeMigPreparer(mig_control) : MigPreparer());
}

// The watch of the pods bound to this node, feeding `matcher`.
kube::ReflectorHandler FeedMatcher(AllocationMatcher* matcher) {
  return kube::ReflectorHandler{
      [matcher](std::vector<nlohmann::json> items) {
        matcher->ReplacePods(items);
      },
      [matcher](absl::string_view type, const nlohmann::json& pod) {
        matcher->ApplyPod(type, pod);
      }};
}

// Answering kubelet before the pods are known would refuse every pod.
// False when `stop` came first.
bool WaitForPodList(kube::Reflector& pods, const std::string& node_name,
                    const std::atomic<bool>& stop) {
  while (!pods.WaitForSync(absl::Seconds(1))) {
    if (stop.load()) return false;
    spdlog::info("waiting for the pod list of node {}", node_name);
  }
  return true;
}

// The MPS control daemon for the GPUs shared through MPS; null when there
// are none.
std::unique_ptr<MpsDaemon> StartMpsDaemon(const AgentOptions& options,
                                          const std::vector<Gpu>& gpus) {
  std::vector<std::string> mps_gpus;
  for (const Gpu& gpu : gpus) {
    if (gpu.mode == mps::kMode) mps_gpus.push_back(gpu.uuid);
  }
  if (mps_gpus.empty()) return nullptr;
  MpsDaemonOptions mps_options;
  mps_options.control_binary = options.mps_control_binary;
  mps_options.mps_root = options.mps_root;
  mps_options.gpu_uuids = mps_gpus;
  mps_options.retry_failed_start = true;
  auto mps = std::make_unique<MpsDaemon>(mps_options);
  absl::Status started = mps->Start();
  if (!started.ok()) {
    // The supervisor keeps trying; MPS pods wait for it, others do not.
    spdlog::error("MPS control daemon: {}", started.ToString());
  }
  return mps;
}

DevicePluginServerOptions PluginOptions(const AgentOptions& options,
                                        const std::string& resource) {
  DevicePluginServerOptions plugin_options;
  plugin_options.device_plugin_dir = options.device_plugin_dir;
  plugin_options.resource_name = resource;
  plugin_options.watchdog_interval = options.watchdog_interval;
  return plugin_options;
}

// `gpus` with the health `source` reads now, each change logged; unchanged
// when the health cannot be read.
std::vector<Gpu> WithCurrentHealth(GpuSource& source,
                                   const std::vector<Gpu>& gpus) {
  absl::StatusOr<std::vector<GpuHealth>> health = source.CheckHealth();
  std::vector<Gpu> now = gpus;
  if (!health.ok()) {
    spdlog::warn("GPU health not read: {}", health.status().ToString());
    return now;
  }
  for (Gpu& gpu : now) {
    for (const GpuHealth& h : *health) {
      if (h.uuid != gpu.uuid) continue;
      if (gpu.healthy != h.healthy) {
        spdlog::warn("GPU {} is {}{}", gpu.uuid,
                     h.healthy ? "healthy again" : "unhealthy: ", h.reason);
      }
      gpu.healthy = h.healthy;
    }
  }
  return now;
}

// What learns of the GPUs' health once the agent serves.
struct GpuListeners {
  NodeRegistrar& registrar;
  AllocationMatcher* matcher;  // null without the device plugin
  DevicePluginServer* plugin;  // null without the device plugin
  MigControl* mig_control;     // null without MIG control
  DraDriver* dra;              // null without --dra
};

// Polls the GPUs' health every health_interval until `stop`. A change, and
// every register_interval in any case, re-registers the node (someone may
// have edited the registration), re-advertises the devices and sweeps the
// MIG instances no live pod holds.
void WatchGpuHealth(const AgentOptions& options, bool with_numa,
                    GpuSource& source, std::vector<Gpu> gpus,
                    const GpuListeners& listeners,
                    const std::atomic<bool>& stop) {
  absl::Time next_register = absl::Now() + options.register_interval;
  while (SleepUnlessStopped(options.health_interval, stop)) {
    std::vector<Gpu> now = WithCurrentHealth(source, gpus);
    metrics::AgentMetrics::Default().SetGpuHealth(options.node_name, now);
    if (SameHealth(now, gpus) && absl::Now() < next_register) continue;
    gpus = std::move(now);
    RegisterNode(listeners.registrar, options, gpus);
    if (listeners.dra != nullptr) listeners.dra->Update(gpus);
    if (listeners.matcher == nullptr) {
      next_register = absl::Now() + options.register_interval;
      continue;
    }
    listeners.matcher->SetGpus(gpus);
    listeners.plugin->SetDevices(AdvertisedDevices(gpus, with_numa));
    if (listeners.mig_control != nullptr) {
      std::vector<std::string> mig_gpus;
      for (const Gpu& gpu : gpus) {
        if (gpu.mode == mig::kMode) mig_gpus.push_back(gpu.uuid);
      }
      listeners.matcher->WithLiveRecords(
          [&](const std::vector<PodRecord>& live) {
            SweepOrphanMigInstances(listeners.mig_control, mig_gpus, live);
          });
    }
    next_register = absl::Now() + options.register_interval;
  }
}

// The device plugin side: the matcher fed by the node's pods, and the
// plugin server kubelet calls.
struct DevicePluginSide {
  std::unique_ptr<PodPatchQueue> patches;
  std::unique_ptr<MigControl> mig_control;
  std::unique_ptr<AllocationMatcher> matcher;
  std::unique_ptr<kube::Reflector> pods;
  std::unique_ptr<DevicePluginServer> plugin;

  void Stop() {
    if (plugin) plugin->Stop();
    if (pods) pods->Stop();
    if (patches) patches->Drain(absl::Seconds(5));
  }
};

// The keys of --record-key-file; null without it.
absl::StatusOr<std::unique_ptr<trust::RecordKeySource>> LoadRecordKeys(
    const AgentOptions& options) {
  if (options.accept_unsigned_records) {
    spdlog::warn(
        "--accept-unsigned-records: allocation records without a signature "
        "are served (a cluster migrating from HAMi's or Volcano's "
        "scheduler); forged ones still are not");
  }
  if (options.record_key_file.empty()) {
    spdlog::info(
        "no --record-key-file: allocation records are served unchecked");
    return nullptr;
  }
  DS_ASSIGN_OR_RETURN(
      std::unique_ptr<trust::RecordKeySource> keys,
      trust::RecordKeySource::Create(options.record_key_file, &RealClock()));
  spdlog::info("serving only allocation records signed by {} (signing key {})",
               options.record_key_file, keys->Keys()->signing().id);
  return keys;
}

// Null (and OK) when `stop` came while waiting for the pod list.
absl::StatusOr<std::unique_ptr<DevicePluginSide>> StartDevicePlugin(
    const AgentOptions& options, const Config& config, kube::ApiClient* client,
    const std::vector<Gpu>& gpus, trust::RecordKeySource* record_keys,
    const std::atomic<bool>& stop) {
  auto side = std::make_unique<DevicePluginSide>();
  DS_ASSIGN_OR_RETURN(
      std::unique_ptr<ServedJournal> journal,
      ServedJournal::Open(absl::StrCat(options.state_dir, "/served-",
                                       options.node_name, ".journal")));
  side->patches = std::make_unique<PodPatchQueue>(client);
  side->mig_control = OpenMigControl(options, gpus);
  const std::string resource =
      AgentResourceName(options.dialect, config.device.resource_count_name);
  DS_ASSIGN_OR_RETURN(
      side->matcher,
      CreateMatcher(options, config, resource, std::move(journal),
                    *side->patches, side->mig_control.get(), record_keys,
                    client));
  side->matcher->SetGpus(gpus);
  side->pods =
      std::make_unique<kube::Reflector>(client, NodePodsPath(options.node_name),
                                        FeedMatcher(side->matcher.get()));
  side->pods->Start();
  if (!WaitForPodList(*side->pods, options.node_name, stop)) {
    side->Stop();
    return nullptr;
  }
  side->plugin = std::make_unique<DevicePluginServer>(
      PluginOptions(options, resource), side->matcher.get());
  side->plugin->SetDevices(
      AdvertisedDevices(gpus, config.device.enable_numa_topology));
  DS_RETURN_IF_ERROR(side->plugin->Start());
  spdlog::info("serving {} on {}", resource, side->plugin->socket_path());
  return side;
}

}  // namespace

absl::Status RunAgent(const AgentOptions& options,
                      const std::atomic<bool>& stop) {
  if (options.node_name.empty()) {
    return absl::InvalidArgumentError("--node-name: required");
  }
  DS_ASSIGN_OR_RETURN(Config config, LoadConfigFile(options.config_path));
  for (const std::string& notice : config.notices) {
    spdlog::info("config: {}", notice);
  }
  DS_RETURN_IF_ERROR(InstallHook(options));
  DS_ASSIGN_OR_RETURN(std::unique_ptr<GpuSource> source,
                      OpenGpuSource(options.inventory, options.nvml_library));
  std::vector<DiscoveredGpu> discovered;
  DS_ASSIGN_OR_RETURN(std::vector<Gpu> gpus,
                      DiscoverGpus(*source, config, options, discovered));
  metrics::AgentMetrics::Default().SetGpuHealth(options.node_name, gpus);
  std::unique_ptr<metrics::MetricsServer> metrics_server;
  if (!options.metrics_address.empty()) {
    DS_ASSIGN_OR_RETURN(metrics_server, metrics::MetricsServer::Start(
                                            options.metrics_address,
                                            &metrics::AgentMetrics::Default()));
  }

  DS_ASSIGN_OR_RETURN(kube::KubeConfig kube_config,
                      kube::KubeConfigFromFlag(options.kubeconfig));
  DS_ASSIGN_OR_RETURN(std::unique_ptr<kube::ApiClient> client,
                      kube::ApiClient::Create(kube_config));
  NodeRegistrar registrar(client.get(), options.node_name, options.dialect,
                          config.device.memory_factor);
  while (!RegisterNode(registrar, options, gpus)) {
    if (!SleepUnlessStopped(absl::Seconds(5), stop)) return absl::OkStatus();
  }

  DS_ASSIGN_OR_RETURN(std::unique_ptr<trust::RecordKeySource> record_keys,
                      LoadRecordKeys(options));
  std::unique_ptr<MpsDaemon> mps = StartMpsDaemon(options, gpus);
  std::unique_ptr<DevicePluginSide> side;
  if (options.device_plugin) {
    DS_ASSIGN_OR_RETURN(side, StartDevicePlugin(options, config, client.get(),
                                                gpus, record_keys.get(), stop));
    if (side == nullptr) {
      if (mps) mps->Stop();
      return absl::OkStatus();
    }
  }
  // One realizer changes a node's MIG instances: beside the device plugin,
  // MIG stays the device plugin's.
  std::unique_ptr<MigControl> dra_mig_control;
  std::unique_ptr<DraDriver> dra;
  if (options.dra) {
    if (!options.device_plugin) dra_mig_control = OpenMigControl(options, gpus);
    DS_ASSIGN_OR_RETURN(
        dra,
        DraDriver::Start(options, config, client.get(), std::move(discovered),
                         gpus, dra_mig_control.get(), record_keys.get()));
  }

  WatchGpuHealth(
      options, config.device.enable_numa_topology, *source, std::move(gpus),
      GpuListeners{registrar, side ? side->matcher.get() : nullptr,
                   side ? side->plugin.get() : nullptr,
                   side ? side->mig_control.get() : nullptr, dra.get()},
      stop);
  spdlog::info("stopping");
  if (dra) dra->Stop();
  if (side) side->Stop();
  if (mps) mps->Stop();
  return absl::OkStatus();
}

}  // namespace deviceshare::agent
