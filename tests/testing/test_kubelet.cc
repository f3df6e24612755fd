#include "testing/test_kubelet.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "deviceplugin/v1beta1/api.grpc.pb.h"
#include "nlohmann/json.hpp"

namespace deviceshare::testing {
namespace {

constexpr char kKubeletSocket[] = "kubelet.sock";
constexpr char kCheckpointFile[] = "kubelet_internal_checkpoint";
constexpr char kVersion[] = "v1beta1";

absl::Status FromGrpc(const grpc::Status& status, absl::string_view what) {
  if (status.ok()) return absl::OkStatus();
  // The plugin's message is passed on unchanged, as kubelet puts it in the
  // pod's UnexpectedAdmissionError; `what` goes in front.
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      absl::StrCat(what, ": ", status.error_message()));
}

std::chrono::system_clock::time_point Deadline(absl::Duration timeout) {
  return absl::ToChronoTime(absl::Now() + timeout);
}

absl::Status Enough(const std::string& resource, size_t free, int count) {
  if (static_cast<int>(free) >= count) return absl::OkStatus();
  // Kubelet's wording.
  return absl::ResourceExhaustedError(
      absl::StrCat("requested number of devices unavailable for ", resource,
                   ". Requested: ", count, ", Available: ", free));
}

uint32_t Fnv1a32(absl::string_view bytes) {
  uint32_t hash = 2166136261u;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 16777619u;
  }
  return hash;
}

std::vector<agent::AdvertisedDevice> FromWire(
    const v1beta1::ListAndWatchResponse& response) {
  std::vector<agent::AdvertisedDevice> devices;
  for (const v1beta1::Device& device : response.devices()) {
    agent::AdvertisedDevice out;
    out.id = device.id();
    out.healthy = device.health() == "Healthy";
    if (device.has_topology() && device.topology().nodes_size() > 0) {
      out.numa_node = static_cast<int>(device.topology().nodes(0).id());
    }
    devices.push_back(std::move(out));
  }
  return devices;
}

AdmittedContainer FromWire(const v1beta1::ContainerAllocateResponse& response) {
  AdmittedContainer out;
  out.envs.insert(response.envs().begin(), response.envs().end());
  for (const v1beta1::Mount& mount : response.mounts()) {
    out.mounts.push_back(
        {mount.host_path(), mount.container_path(), mount.read_only()});
  }
  for (const v1beta1::DeviceSpec& device : response.devices()) {
    out.devices.push_back(
        {device.host_path(), device.container_path(), device.permissions()});
  }
  out.annotations.insert(response.annotations().begin(),
                         response.annotations().end());
  for (const v1beta1::CDIDevice& cdi : response.cdi_devices()) {
    out.cdi_devices.push_back(cdi.name());
  }
  return out;
}

}  // namespace

class TestKubelet::Impl {
 public:
  Impl(std::string dir, absl::Duration rpc_timeout)
      : dir_(std::move(dir)), rpc_timeout_(rpc_timeout) {}
  ~Impl() { Stop(); }

  absl::Status Start() {
    absl::MutexLock lifecycle(&lifecycle_mu_);
    if (server_ != nullptr) return absl::OkStatus();
    std::error_code error;
    std::filesystem::create_directories(dir_, error);
    std::filesystem::remove(kubelet_socket(), error);
    service_ = std::make_unique<RegistrationService>(this);
    grpc::ServerBuilder builder;
    builder.AddListeningPort(absl::StrCat("unix://", kubelet_socket()),
                             grpc::InsecureServerCredentials());
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    if (server_ == nullptr) {
      service_.reset();
      return absl::UnavailableError(
          absl::StrCat("test kubelet: cannot serve on ", kubelet_socket()));
    }
    return absl::OkStatus();
  }

  void Stop() {
    absl::MutexLock lifecycle(&lifecycle_mu_);
    if (server_ == nullptr) return;
    // No Register can run after this, so plugins_ only shrinks below.
    server_->Shutdown(Deadline(absl::Seconds(1)));
    server_.reset();
    service_.reset();
    std::map<std::string, std::shared_ptr<Plugin>> plugins;
    {
      absl::MutexLock lock(&mu_);
      plugins.swap(plugins_);
      // Like a kubelet that lost its plugins: the ids stay known, unhealthy,
      // until a plugin registers again.
      for (auto& [resource, devices] : devices_) {
        for (agent::AdvertisedDevice& device : devices) device.healthy = false;
      }
    }
    for (auto& [resource, plugin] : plugins) EndStream(*plugin);
    std::error_code error;
    std::filesystem::remove(kubelet_socket(), error);
  }

  absl::Status Restart() {
    Stop();
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(dir_, error)) {
      if (entry.is_directory() || entry.path().filename() == kCheckpointFile) {
        continue;
      }
      std::filesystem::remove(entry.path(), error);
    }
    return Start();
  }

  int registrations() const {
    absl::MutexLock lock(&mu_);
    return static_cast<int>(registration_log_.size());
  }
  std::vector<KubeletRegistration> registration_log() const {
    absl::MutexLock lock(&mu_);
    return registration_log_;
  }
  std::vector<agent::AdvertisedDevice> devices(
      const std::string& resource) const {
    absl::MutexLock lock(&mu_);
    auto it = devices_.find(resource);
    return it == devices_.end() ? std::vector<agent::AdvertisedDevice>{}
                                : it->second;
  }
  int device_updates(const std::string& resource) const {
    absl::MutexLock lock(&mu_);
    auto it = updates_.find(resource);
    return it == updates_.end() ? 0 : it->second;
  }
  bool stream_open(const std::string& resource) const {
    absl::MutexLock lock(&mu_);
    auto it = plugins_.find(resource);
    return it != plugins_.end() && it->second->stream_open;
  }

  bool WaitForDevices(
      const std::string& resource,
      const std::function<bool(const std::vector<agent::AdvertisedDevice>&)>&
          predicate,
      absl::Duration timeout) {
    const std::vector<agent::AdvertisedDevice> none;
    auto holds = [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      auto it = devices_.find(resource);
      return predicate(it == devices_.end() ? none : it->second);
    };
    absl::MutexLock lock(&mu_);
    // absl::Mutex re-checks the condition whenever a stream thread that
    // stored a list releases the mutex.
    return mu_.AwaitWithTimeout(absl::Condition(&holds), timeout);
  }

  absl::StatusOr<AdmittedContainer> AdmitContainer(
      const std::string& pod_uid, const std::string& container_name,
      const std::string& resource, int count) {
    if (count <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("AdmitContainer: count ", count, " is not positive"));
    }
    std::shared_ptr<Plugin> plugin;
    std::vector<std::string> available;
    {
      absl::MutexLock lock(&mu_);
      for (const Hold& hold : holds_) {
        if (hold.held.pod_uid == pod_uid &&
            hold.held.container_name == container_name &&
            hold.held.resource_name == resource) {
          return hold.admitted;
        }
      }
      auto it = plugins_.find(resource);
      if (it == plugins_.end()) {
        return absl::NotFoundError(absl::StrCat(
            "no device plugin is registered for resource ", resource));
      }
      plugin = it->second;
      available = FreeIdsLocked(resource);
      if (absl::Status s = Enough(resource, available.size(), count); !s.ok()) {
        return s;
      }
    }

    std::vector<std::string> preferred;
    if (plugin->options.get_preferred_allocation_available()) {
      v1beta1::PreferredAllocationRequest request;
      auto* container = request.add_container_requests();
      for (const std::string& id : available) {
        container->add_available_deviceids(id);
      }
      container->set_allocation_size(count);
      v1beta1::PreferredAllocationResponse response;
      grpc::ClientContext context;
      context.set_deadline(Deadline(rpc_timeout_));
      if (absl::Status s = FromGrpc(plugin->stub->GetPreferredAllocation(
                                        &context, request, &response),
                                    "GetPreferredAllocation");
          !s.ok()) {
        return s;
      }
      if (response.container_responses_size() == 1) {
        const auto& ids = response.container_responses(0).deviceids();
        preferred.assign(ids.begin(), ids.end());
      }
    }

    std::vector<std::string> chosen;
    {
      absl::MutexLock lock(&mu_);
      // Others may have reserved ids meanwhile.
      available = FreeIdsLocked(resource);
      if (absl::Status s = Enough(resource, available.size(), count); !s.ok()) {
        return s;
      }
      chosen = Choose(available, preferred, count);
      reserved_[resource].insert(chosen.begin(), chosen.end());
    }
    auto unreserve = [&] {
      absl::MutexLock lock(&mu_);
      for (const std::string& id : chosen) reserved_[resource].erase(id);
    };

    v1beta1::AllocateRequest request;
    auto* container = request.add_container_requests();
    for (const std::string& id : chosen) container->add_devices_ids(id);
    v1beta1::AllocateResponse response;
    {
      grpc::ClientContext context;
      context.set_deadline(Deadline(rpc_timeout_));
      absl::Status s = FromGrpc(
          plugin->stub->Allocate(&context, request, &response), "Allocate");
      if (s.ok() && response.container_responses_size() != 1) {
        s = absl::InternalError(absl::StrCat(
            "Allocate answered ", response.container_responses_size(),
            " container responses for 1 request"));
      }
      if (!s.ok()) {
        unreserve();
        return s;
      }
    }

    Hold hold;
    hold.held = {pod_uid, container_name, resource, chosen};
    hold.admitted = FromWire(response.container_responses(0));
    hold.admitted.device_ids = chosen;
    hold.admitted.preferred = preferred;
    response.container_responses(0).SerializeToString(&hold.alloc_resp);
    AdmittedContainer admitted = hold.admitted;
    {
      absl::MutexLock lock(&mu_);
      for (const std::string& id : chosen) reserved_[resource].erase(id);
      holds_.push_back(std::move(hold));
      if (absl::Status s = WriteCheckpointLocked(); !s.ok()) return s;
    }

    if (plugin->options.pre_start_required()) {
      v1beta1::PreStartContainerRequest pre_start;
      for (const std::string& id : chosen) pre_start.add_devices_ids(id);
      v1beta1::PreStartContainerResponse ignored;
      grpc::ClientContext context;
      context.set_deadline(Deadline(rpc_timeout_));
      if (absl::Status s = FromGrpc(
              plugin->stub->PreStartContainer(&context, pre_start, &ignored),
              "PreStartContainer");
          !s.ok()) {
        return s;  // the hold stays, as with kubelet: the pod is not deleted
      }
    }
    return admitted;
  }

  absl::Status ReleasePod(const std::string& pod_uid) {
    absl::MutexLock lock(&mu_);
    holds_.erase(std::remove_if(holds_.begin(), holds_.end(),
                                [&](const Hold& hold) {
                                  return hold.held.pod_uid == pod_uid;
                                }),
                 holds_.end());
    return WriteCheckpointLocked();
  }

  std::vector<HeldDevices> holds() const {
    absl::MutexLock lock(&mu_);
    std::vector<HeldDevices> out;
    for (const Hold& hold : holds_) out.push_back(hold.held);
    return out;
  }

  const std::string& dir() const { return dir_; }
  std::string checkpoint_path() const {
    return (std::filesystem::path(dir_) / kCheckpointFile).string();
  }
  std::string kubelet_socket() const {
    return (std::filesystem::path(dir_) / kKubeletSocket).string();
  }

 private:
  // A registered plugin: its options and the ListAndWatch stream.
  struct Plugin {
    KubeletRegistration registration;
    std::unique_ptr<v1beta1::DevicePlugin::Stub> stub;  // thread-safe
    v1beta1::DevicePluginOptions options;
    grpc::ClientContext stream_context;
    std::thread stream_thread;
    bool stream_open = false;  // guarded by Impl::mu_
  };

  struct Hold {
    HeldDevices held;
    AdmittedContainer admitted;
    std::string alloc_resp;  // serialized ContainerAllocateResponse
  };

  class RegistrationService final : public v1beta1::Registration::Service {
   public:
    explicit RegistrationService(Impl* kubelet) : kubelet_(kubelet) {}
    grpc::Status Register(grpc::ServerContext*,
                          const v1beta1::RegisterRequest* request,
                          v1beta1::Empty*) override {
      return kubelet_->HandleRegister(*request);
    }

   private:
    Impl* const kubelet_;
  };

  // What kubelet's device manager does on Register: check, dial back, ask
  // for the options, start ListAndWatch, then answer.
  grpc::Status HandleRegister(const v1beta1::RegisterRequest& request) {
    if (request.version() != kVersion) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          absl::StrCat("requested device plugin API version \"",
                                       request.version(),
                                       "\" is not supported; want ", kVersion));
    }
    if (request.resource_name().find('/') == std::string::npos) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          absl::StrCat("invalid resource name \"",
                                       request.resource_name(), "\""));
    }
    if (request.endpoint().empty() ||
        request.endpoint().find('/') != std::string::npos) {
      return grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          absl::StrCat("invalid endpoint \"", request.endpoint(), "\""));
    }
    auto plugin = std::make_shared<Plugin>();
    plugin->registration = {
        request.version(), request.endpoint(), request.resource_name(),
        request.options().pre_start_required(),
        request.options().get_preferred_allocation_available()};
    const std::string endpoint =
        (std::filesystem::path(dir_) / request.endpoint()).string();
    plugin->stub = v1beta1::DevicePlugin::NewStub(grpc::CreateChannel(
        absl::StrCat("unix://", endpoint), grpc::InsecureChannelCredentials()));
    {
      grpc::ClientContext context;
      context.set_deadline(Deadline(rpc_timeout_));
      context.set_wait_for_ready(true);
      const grpc::Status status = plugin->stub->GetDevicePluginOptions(
          &context, v1beta1::Empty(), &plugin->options);
      if (!status.ok()) {
        return grpc::Status(
            status.error_code(),
            absl::StrCat("failed to dial device plugin at ", endpoint, ": ",
                         status.error_message()));
      }
    }
    std::shared_ptr<Plugin> old;
    {
      absl::MutexLock lock(&mu_);
      old = std::move(plugins_[request.resource_name()]);
      plugins_[request.resource_name()] = plugin;
      registration_log_.push_back(plugin->registration);
      plugin->stream_thread =
          std::thread([this, raw = plugin.get()] { RunStream(raw); });
    }
    if (old != nullptr) EndStream(*old);
    return grpc::Status::OK;
  }

  void RunStream(Plugin* plugin) {
    const std::string& resource = plugin->registration.resource_name;
    auto reader =
        plugin->stub->ListAndWatch(&plugin->stream_context, v1beta1::Empty());
    {
      absl::MutexLock lock(&mu_);
      plugin->stream_open = true;
    }
    v1beta1::ListAndWatchResponse message;
    while (reader->Read(&message)) {
      absl::MutexLock lock(&mu_);
      if (!IsCurrentLocked(plugin)) continue;  // replaced; drain until cancel
      devices_[resource] = FromWire(message);
      ++updates_[resource];
    }
    reader->Finish();  // why it ended does not matter: it is over
    absl::MutexLock lock(&mu_);
    plugin->stream_open = false;
    if (IsCurrentLocked(plugin)) {
      for (agent::AdvertisedDevice& device : devices_[resource]) {
        device.healthy = false;
      }
    }
  }

  // Cancels the stream and waits for its thread. The plugin must no longer
  // be in plugins_.
  static void EndStream(Plugin& plugin) {
    plugin.stream_context.TryCancel();
    if (plugin.stream_thread.joinable()) plugin.stream_thread.join();
  }

  bool IsCurrentLocked(const Plugin* plugin) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = plugins_.find(plugin->registration.resource_name);
    return it != plugins_.end() && it->second.get() == plugin;
  }

  // Healthy ids of `resource` that no container holds or is being given.
  std::vector<std::string> FreeIdsLocked(const std::string& resource) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::set<std::string> taken;
    for (const Hold& hold : holds_) {
      if (hold.held.resource_name != resource) continue;
      taken.insert(hold.held.device_ids.begin(), hold.held.device_ids.end());
    }
    if (auto it = reserved_.find(resource); it != reserved_.end()) {
      taken.insert(it->second.begin(), it->second.end());
    }
    std::vector<std::string> free;
    if (auto it = devices_.find(resource); it != devices_.end()) {
      for (const agent::AdvertisedDevice& device : it->second) {
        if (device.healthy && taken.count(device.id) == 0) {
          free.push_back(device.id);
        }
      }
    }
    return free;
  }

  // The plugin's preferred ids when they are `count` distinct free ones;
  // else the free ones it named, topped up in list order (as kubelet does).
  static std::vector<std::string> Choose(
      const std::vector<std::string>& free,
      const std::vector<std::string>& preferred, int count) {
    const std::set<std::string> free_set(free.begin(), free.end());
    std::vector<std::string> chosen;
    std::set<std::string> picked;
    for (const std::string& id : preferred) {
      if (static_cast<int>(chosen.size()) == count) break;
      if (free_set.count(id) > 0 && picked.insert(id).second) {
        chosen.push_back(id);
      }
    }
    for (const std::string& id : free) {
      if (static_cast<int>(chosen.size()) == count) break;
      if (picked.insert(id).second) chosen.push_back(id);
    }
    return chosen;
  }

  absl::Status WriteCheckpointLocked() const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    nlohmann::json entries = nlohmann::json::array();
    for (const Hold& hold : holds_) {
      nlohmann::json by_numa = nlohmann::json::object();
      for (const std::string& id : hold.held.device_ids) {
        by_numa[std::to_string(NumaNodeLocked(hold.held.resource_name, id))]
            .push_back(id);
      }
      entries.push_back({{"PodUID", hold.held.pod_uid},
                         {"ContainerName", hold.held.container_name},
                         {"ResourceName", hold.held.resource_name},
                         {"DeviceIDs", by_numa},
                         {"AllocResp", absl::Base64Escape(hold.alloc_resp)}});
    }
    // Kubelet records the healthy ids of each resource.
    nlohmann::json registered = nlohmann::json::object();
    for (const auto& [resource, devices] : devices_) {
      nlohmann::json ids = nlohmann::json::array();
      for (const agent::AdvertisedDevice& device : devices) {
        if (device.healthy) ids.push_back(device.id);
      }
      registered[resource] = ids;
    }
    const nlohmann::json data = {{"PodDeviceEntries", entries},
                                 {"RegisteredDevices", registered}};
    const nlohmann::json file = {{"Data", data},
                                 {"Checksum", Fnv1a32(data.dump())}};
    const std::string path = checkpoint_path();
    const std::string temp = path + ".tmp";
    {
      std::ofstream out(temp, std::ios::trunc);
      out << file.dump();
      if (!out.good()) {
        return absl::InternalError(absl::StrCat("writing ", temp));
      }
    }
    std::error_code error;
    std::filesystem::rename(temp, path, error);
    if (error) {
      return absl::InternalError(
          absl::StrCat("renaming ", temp, " to ", path, ": ", error.message()));
    }
    return absl::OkStatus();
  }

  int NumaNodeLocked(const std::string& resource, const std::string& id) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = devices_.find(resource);
    if (it == devices_.end()) return -1;
    for (const agent::AdvertisedDevice& device : it->second) {
      if (device.id == id) return device.numa_node;
    }
    return -1;
  }

  const std::string dir_;
  const absl::Duration rpc_timeout_;

  // Serializes Start and Stop.
  absl::Mutex lifecycle_mu_;
  std::unique_ptr<RegistrationService> service_ ABSL_GUARDED_BY(lifecycle_mu_);
  std::unique_ptr<grpc::Server> server_ ABSL_GUARDED_BY(lifecycle_mu_);

  mutable absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<Plugin>> plugins_ ABSL_GUARDED_BY(mu_);
  std::vector<KubeletRegistration> registration_log_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::vector<agent::AdvertisedDevice>> devices_
      ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> updates_ ABSL_GUARDED_BY(mu_);
  std::vector<Hold> holds_ ABSL_GUARDED_BY(mu_);
  // Ids being allocated right now, by resource.
  std::map<std::string, std::set<std::string>> reserved_ ABSL_GUARDED_BY(mu_);
};

TestKubelet::TestKubelet(std::string dir, absl::Duration rpc_timeout)
    : impl_(std::make_unique<Impl>(std::move(dir), rpc_timeout)) {}
TestKubelet::~TestKubelet() = default;

absl::Status TestKubelet::Start() { return impl_->Start(); }
void TestKubelet::Stop() { impl_->Stop(); }
absl::Status TestKubelet::Restart() { return impl_->Restart(); }
int TestKubelet::registrations() const { return impl_->registrations(); }
std::vector<KubeletRegistration> TestKubelet::registration_log() const {
  return impl_->registration_log();
}
std::vector<agent::AdvertisedDevice> TestKubelet::devices(
    const std::string& resource) const {
  return impl_->devices(resource);
}
int TestKubelet::device_updates(const std::string& resource) const {
  return impl_->device_updates(resource);
}
bool TestKubelet::WaitForDevices(
    const std::string& resource,
    const std::function<bool(const std::vector<agent::AdvertisedDevice>&)>&
        predicate,
    absl::Duration timeout) {
  return impl_->WaitForDevices(resource, predicate, timeout);
}
bool TestKubelet::stream_open(const std::string& resource) const {
  return impl_->stream_open(resource);
}
absl::StatusOr<AdmittedContainer> TestKubelet::AdmitContainer(
    const std::string& pod_uid, const std::string& container_name,
    const std::string& resource, int count) {
  return impl_->AdmitContainer(pod_uid, container_name, resource, count);
}
absl::Status TestKubelet::ReleasePod(const std::string& pod_uid) {
  return impl_->ReleasePod(pod_uid);
}
std::vector<HeldDevices> TestKubelet::holds() const { return impl_->holds(); }
const std::string& TestKubelet::dir() const { return impl_->dir(); }
std::string TestKubelet::checkpoint_path() const {
  return impl_->checkpoint_path();
}
std::string TestKubelet::kubelet_socket() const {
  return impl_->kubelet_socket();
}

}  // namespace deviceshare::testing
