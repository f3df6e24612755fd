#include "service/dra_driver.h"

#include "absl/strings/str_cat.h"
#include "deviceshare/agent/resource_slices.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/kube/object_paths.h"
#include "deviceshare/status_macros.h"
#include "spdlog/spdlog.h"

namespace deviceshare::agent {
namespace {

DraPreparerOptions PreparerOptions(const AgentOptions& options,
                                   MigControl* mig_control,
                                   trust::RecordKeySource* record_keys) {
  DraPreparerOptions out;
  out.record_keys = record_keys;
  out.record_policy.accept_unsigned = options.accept_unsigned_records;
  out.mig_control = mig_control;
  out.driver = options.dra_driver_name;
  out.node_name = options.node_name;
  out.cdi_dir = options.cdi_dir;
  out.state_dir = options.state_dir;
  out.edits.hook_path = options.hook_path;
  out.edits.mps_root = options.mps_root;
  return out;
}

}  // namespace

DraDriver::DraDriver(const AgentOptions& options, kube::ApiClient* api,
                     BackendSet backends, std::vector<DiscoveredGpu> discovered,
                     MigControl* mig_control,
                     trust::RecordKeySource* record_keys)
    : driver_(options.dra_driver_name),
      node_name_(options.node_name),
      backends_(std::move(backends)),
      discovered_(std::move(discovered)),
      publisher_(api, options.dra_driver_name, options.node_name),
      preparer_(PreparerOptions(options, mig_control, record_keys), api,
                &backends_) {}

absl::StatusOr<std::unique_ptr<DraDriver>> DraDriver::Start(
    const AgentOptions& options, const Config& config, kube::ApiClient* api,
    std::vector<DiscoveredGpu> discovered, const std::vector<Gpu>& gpus,
    MigControl* mig_control, trust::RecordKeySource* record_keys) {
  BackendRegistry registry;
  DS_RETURN_IF_ERROR(RegisterBuiltinBackends(registry));
  DS_ASSIGN_OR_RETURN(BackendSet backends,
                      BackendSet::Create(registry, config));
  std::unique_ptr<DraDriver> driver(
      new DraDriver(options, api, std::move(backends), std::move(discovered),
                    mig_control, record_keys));
  driver->Publish(&gpus);
  driver->WatchSlices(api);
  DraPluginServerOptions server_options;
  server_options.driver_name = options.dra_driver_name;
  server_options.plugin_dir = options.dra_plugin_dir;
  server_options.registry_dir = options.dra_registry_dir;
  server_options.watchdog_interval = options.watchdog_interval;
  driver->server_ =
      std::make_unique<DraPluginServer>(server_options, &driver->preparer_);
  DS_RETURN_IF_ERROR(driver->server_->Start());
  spdlog::info("DRA driver {} serving {}", options.dra_driver_name,
               driver->server_->dra_socket_path());
  return driver;
}

void DraDriver::WatchSlices(kube::ApiClient* api) {
  const std::string path = kube::WithQuery(
      kube::ResourceSlicesPath(),
      {{"fieldSelector",
        absl::StrCat("spec.nodeName=", node_name_, ",spec.driver=", driver_)}});
  kube::ReflectorHandler handler;
  // A relist may also follow a deletion the watch missed: Publish compares
  // with what the API server has and writes nothing when all is there.
  handler.replace = [this](std::vector<nlohmann::json>) { Publish(nullptr); };
  handler.event = [this](absl::string_view type, const nlohmann::json& slice) {
    if (type != "DELETED") return;
    spdlog::info("ResourceSlice {} was deleted; publishing the pool again",
                 slice["metadata"].value("name", "?"));
    Publish(nullptr);
  };
  slice_watch_ =
      std::make_unique<kube::Reflector>(api, path, std::move(handler));
  slice_watch_->Start();
}

void DraDriver::Publish(const std::vector<Gpu>* given) {
  absl::MutexLock lock(&publish_mu_);
  if (given != nullptr) last_gpus_ = *given;
  const std::vector<Gpu>& gpus = last_gpus_;
  std::vector<DiscoveredGpu> now = discovered_;
  for (DiscoveredGpu& gpu : now) {
    for (const Gpu& registered : gpus) {
      if (registered.uuid == gpu.uuid) gpu.healthy = registered.healthy;
    }
  }
  absl::StatusOr<NodeSlices> slices = BuildResourceSlices(
      now, gpus, backends_, SliceOptions{driver_, node_name_, 1});
  if (!slices.ok()) {
    spdlog::error("ResourceSlices not built: {}", slices.status().ToString());
    return;
  }
  for (const std::string& reason : slices->withdrawn) {
    spdlog::warn("DRA device withdrawn: {}", reason);
  }
  preparer_.SetDevices(*slices, gpus);
  absl::StatusOr<PublishStats> published = publisher_.Publish(slices->slices);
  if (!published.ok()) {
    spdlog::error("ResourceSlices not published: {}",
                  published.status().ToString());
  } else if (published->written > 0 || published->deleted > 0) {
    spdlog::info(
        "published pool {} generation {}: {} slices written, {} "
        "deleted",
        node_name_, published->generation, published->written,
        published->deleted);
  }
}

void DraDriver::Update(const std::vector<Gpu>& gpus) { Publish(&gpus); }

void DraDriver::Stop() {
  if (slice_watch_) slice_watch_->Stop();
  if (server_) server_->Stop();
}

}  // namespace deviceshare::agent
