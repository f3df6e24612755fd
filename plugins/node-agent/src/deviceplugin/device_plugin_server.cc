#include "deviceshare/agent/device_plugin_server.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"
#include "common/watchdog.h"
#include "deviceplugin/device_board.h"
#include "deviceplugin/device_plugin_service.h"
#include "deviceplugin/kubelet_registration.h"
#include "deviceplugin/socket_files.h"
#include "deviceshare/status_macros.h"
#include "spdlog/spdlog.h"

namespace deviceshare::agent {

using deviceplugin::DeviceBoard;
using deviceplugin::DevicePluginService;
using deviceplugin::FileIdentity;
using deviceplugin::IdentifyFile;
using deviceplugin::PluginCounters;
using deviceplugin::RemoveIfPresent;

namespace {

// How long Stop() lets in-flight calls finish before gRPC cancels them.
constexpr absl::Duration kShutdownGrace = absl::Seconds(1);

absl::Status ValidateOptions(const DevicePluginServerOptions& o,
                             const std::string& socket_path) {
  auto bad = [](absl::string_view field, absl::string_view value,
                absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "device plugin option ", field, " \"", value, "\": ", why));
  };
  if (o.device_plugin_dir.empty()) {
    return bad("device_plugin_dir", o.device_plugin_dir, "is empty");
  }
  const size_t slash = o.resource_name.find('/');
  if (slash == std::string::npos || slash == 0 ||
      slash + 1 == o.resource_name.size() ||
      o.resource_name.find('/', slash + 1) != std::string::npos ||
      o.resource_name.find_first_of(" \t\n") != std::string::npos) {
    return bad("resource_name", o.resource_name, "is not <domain>/<name>");
  }
  if (o.endpoint.empty() || o.endpoint.find('/') != std::string::npos ||
      o.endpoint == deviceplugin::kKubeletSocketName || o.endpoint == "." ||
      o.endpoint == "..") {
    return bad("endpoint", o.endpoint,
               "must be a file name (no '/') other than kubelet.sock");
  }
  if (socket_path.size() > deviceplugin::kMaxUnixSocketPath) {
    return bad("device_plugin_dir", o.device_plugin_dir,
               absl::StrCat("makes the socket path ", socket_path.size(),
                            " bytes long; unix sockets allow ",
                            deviceplugin::kMaxUnixSocketPath));
  }
  if (o.watchdog_interval <= absl::ZeroDuration()) {
    return bad("watchdog_interval", absl::FormatDuration(o.watchdog_interval),
               "must be positive");
  }
  if (o.register_backoff_initial <= absl::ZeroDuration() ||
      o.register_backoff_max < o.register_backoff_initial) {
    return bad("register_backoff_initial",
               absl::FormatDuration(o.register_backoff_initial),
               absl::StrCat("must be positive and at most "
                            "register_backoff_max (",
                            absl::FormatDuration(o.register_backoff_max), ")"));
  }
  if (o.register_timeout <= absl::ZeroDuration()) {
    return bad("register_timeout", absl::FormatDuration(o.register_timeout),
               "must be positive");
  }
  return absl::OkStatus();
}

}  // namespace

std::string DefaultEndpoint(absl::string_view resource_name) {
  return absl::StrCat("deviceshare-",
                      absl::StrReplaceAll(resource_name, {{"/", "-"}}),
                      ".sock");
}

class DevicePluginServer::Impl {
 public:
  Impl(DevicePluginServerOptions options, ContainerAllocator* allocator)
      : options_(std::move(options)), allocator_(allocator) {
    if (options_.endpoint.empty()) {
      options_.endpoint = DefaultEndpoint(options_.resource_name);
    }
    socket_path_ =
        (std::filesystem::path(options_.device_plugin_dir) / options_.endpoint)
            .string();
    kubelet_socket_ = (std::filesystem::path(options_.device_plugin_dir) /
                       deviceplugin::kKubeletSocketName)
                          .string();
  }

  ~Impl() { Stop(); }

  absl::Status Start() {
    absl::MutexLock lifecycle(&lifecycle_mu_);
    if (started_) {
      return absl::FailedPreconditionError(absl::StrCat(
          "device plugin ", options_.resource_name, " is started already"));
    }
    DS_RETURN_IF_ERROR(ValidateOptions(options_, socket_path_));
    std::error_code error;
    std::filesystem::create_directories(options_.device_plugin_dir, error);
    if (error) {
      return absl::UnavailableError(
          absl::StrCat("creating device plugin directory ",
                       options_.device_plugin_dir, ": ", error.message()));
    }
    {
      absl::MutexLock lock(&mu_);
      DS_RETURN_IF_ERROR(RemoveIfPresent(socket_path_));
      DS_RETURN_IF_ERROR(ServeLocked());
      need_register_ = true;
      backoff_ = options_.register_backoff_initial;
      next_register_attempt_ = absl::InfinitePast();
      if (std::optional<FileIdentity> kubelet = IdentifyFile(kubelet_socket_)) {
        TryRegisterLocked(*kubelet);
      } else {
        spdlog::info(
            "device plugin {}: {} is not there yet; registering "
            "once kubelet creates it",
            options_.resource_name, kubelet_socket_);
      }
    }
    watchdog_.Start([this] { return NextWatchdogWait(); }, [this] { Tick(); });
    started_ = true;
    return absl::OkStatus();
  }

  void Stop() {
    absl::MutexLock lifecycle(&lifecycle_mu_);
    if (!started_) return;
    watchdog_.Stop();
    absl::MutexLock lock(&mu_);
    StopServingLocked(/*remove_socket=*/true);
    registered_with_.reset();
    registered_.store(false);
    started_ = false;
    spdlog::info("device plugin {}: stopped", options_.resource_name);
  }

  void SetDevices(std::vector<AdvertisedDevice> devices) {
    const size_t total = devices.size();
    const size_t healthy =
        std::count_if(devices.begin(), devices.end(),
                      [](const AdvertisedDevice& d) { return d.healthy; });
    if (board_.Set(std::move(devices))) {
      spdlog::info("device plugin {}: advertising {} devices ({} healthy)",
                   options_.resource_name, total, healthy);
    }
  }

  std::vector<AdvertisedDevice> devices() const { return board_.Get().devices; }
  DevicePluginStats stats() const { return counters_.Snapshot(); }
  bool registered() const { return registered_.load(); }
  const std::string& socket_path() const { return socket_path_; }
  const DevicePluginServerOptions& options() const { return options_; }

 private:
  // One gRPC server on the socket. The server goes before the service it
  // points to (members are destroyed in reverse order).
  struct Serving {
    std::unique_ptr<DevicePluginService> service;
    std::unique_ptr<grpc::Server> server;
    FileIdentity socket;
  };

  absl::Status ServeLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto service = std::make_unique<DevicePluginService>(
        &options_, &board_, allocator_, &counters_);
    grpc::ServerBuilder builder;
    builder.AddListeningPort(absl::StrCat("unix://", socket_path_),
                             grpc::InsecureServerCredentials());
    builder.RegisterService(service.get());
    std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
    if (server == nullptr) {
      return absl::UnavailableError(
          absl::StrCat("device plugin ", options_.resource_name,
                       ": gRPC could not listen on unix://", socket_path_));
    }
    std::optional<FileIdentity> socket = IdentifyFile(socket_path_);
    if (!socket.has_value()) {
      service->Shutdown();
      server->Shutdown();
      return absl::UnavailableError(
          absl::StrCat("device plugin ", options_.resource_name, ": socket ",
                       socket_path_, " vanished right after gRPC created it"));
    }
    serving_ = Serving{std::move(service), std::move(server), *socket};
    ++counters_.serves;
    spdlog::info("device plugin {}: serving on {}", options_.resource_name,
                 socket_path_);
    return absl::OkStatus();
  }

  void StopServingLocked(bool remove_socket)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!serving_.has_value()) return;
    // Streams first: a sync server's Shutdown waits for running handlers.
    serving_->service->Shutdown();
    serving_->server->Shutdown(
        absl::ToChronoTime(absl::Now() + kShutdownGrace));
    if (remove_socket && IdentifyFile(socket_path_) == serving_->socket) {
      if (absl::Status s = RemoveIfPresent(socket_path_); !s.ok()) {
        spdlog::warn("device plugin {}: {}", options_.resource_name,
                     s.ToString());
      }
    }
    serving_.reset();
  }

  void TryRegisterLocked(const FileIdentity& kubelet)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const absl::Status status = deviceplugin::RegisterWithKubelet(
        kubelet_socket_, options_, options_.endpoint,
        options_.register_timeout);
    if (status.ok()) {
      registered_with_ = kubelet;
      need_register_ = false;
      backoff_ = options_.register_backoff_initial;
      next_register_attempt_ = absl::InfinitePast();
      ++counters_.registrations;
      registered_.store(true);
      spdlog::info("device plugin {}: registered with kubelet (endpoint {})",
                   options_.resource_name, options_.endpoint);
      return;
    }
    ++counters_.register_failures;
    next_register_attempt_ = absl::Now() + backoff_;
    spdlog::warn("device plugin {}: {}; retrying in {}", options_.resource_name,
                 status.ToString(), absl::FormatDuration(backoff_));
    backoff_ = std::min(backoff_ * 2, options_.register_backoff_max);
  }

  // One look at the two socket files; see the header for what it fixes.
  void Tick() {
    absl::MutexLock lock(&mu_);
    const std::optional<FileIdentity> mine = IdentifyFile(socket_path_);
    if (!serving_.has_value() || mine != serving_->socket) {
      if (serving_.has_value()) {
        spdlog::info(
            "device plugin {}: socket {} was removed or replaced "
            "(kubelet restart?); serving again",
            options_.resource_name, socket_path_);
      }
      StopServingLocked(/*remove_socket=*/false);
      if (absl::Status s = ServeLocked(); !s.ok()) {
        spdlog::warn("device plugin {}: {}", options_.resource_name,
                     s.ToString());
        return;
      }
      // A new socket is unknown to kubelet whatever the backoff says.
      need_register_ = true;
      next_register_attempt_ = absl::InfinitePast();
    }
    const std::optional<FileIdentity> kubelet = IdentifyFile(kubelet_socket_);
    if (registered_with_.has_value() && kubelet != registered_with_) {
      spdlog::info("device plugin {}: {} was {}; registering again",
                   options_.resource_name, kubelet_socket_,
                   kubelet.has_value() ? "replaced" : "removed");
      registered_with_.reset();
      registered_.store(false);
      need_register_ = true;
      next_register_attempt_ = absl::InfinitePast();
    }
    if (need_register_ && kubelet.has_value() &&
        absl::Now() >= next_register_attempt_) {
      TryRegisterLocked(*kubelet);
    }
  }

  // The watchdog interval, or less when a Register retry is due sooner.
  absl::Duration NextWatchdogWait() {
    absl::Duration wait = options_.watchdog_interval;
    absl::MutexLock lock(&mu_);
    const absl::Duration until_retry = next_register_attempt_ - absl::Now();
    if (need_register_ && until_retry > absl::ZeroDuration()) {
      wait = std::min(wait, until_retry);
    }
    return wait;
  }

  DevicePluginServerOptions options_;  // endpoint filled in
  ContainerAllocator* const allocator_;
  std::string socket_path_;
  std::string kubelet_socket_;
  DeviceBoard board_;
  PluginCounters counters_;
  std::atomic<bool> registered_{false};

  // Serializes Start and Stop; taken before the others.
  absl::Mutex lifecycle_mu_;
  bool started_ ABSL_GUARDED_BY(lifecycle_mu_) = false;
  Watchdog watchdog_;

  // What the watchdog fixes; held for one Tick (a Register call included).
  absl::Mutex mu_ ABSL_ACQUIRED_AFTER(lifecycle_mu_);
  std::optional<Serving> serving_ ABSL_GUARDED_BY(mu_);
  std::optional<FileIdentity> registered_with_ ABSL_GUARDED_BY(mu_);
  bool need_register_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time next_register_attempt_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Duration backoff_ ABSL_GUARDED_BY(mu_);
};

DevicePluginServer::DevicePluginServer(DevicePluginServerOptions options,
                                       ContainerAllocator* allocator)
    : impl_(std::make_unique<Impl>(std::move(options), allocator)) {}

DevicePluginServer::~DevicePluginServer() = default;

absl::Status DevicePluginServer::Start() { return impl_->Start(); }
void DevicePluginServer::Stop() { impl_->Stop(); }
void DevicePluginServer::SetDevices(std::vector<AdvertisedDevice> devices) {
  impl_->SetDevices(std::move(devices));
}
std::vector<AdvertisedDevice> DevicePluginServer::devices() const {
  return impl_->devices();
}
DevicePluginStats DevicePluginServer::stats() const { return impl_->stats(); }
bool DevicePluginServer::registered() const { return impl_->registered(); }
std::string DevicePluginServer::socket_path() const {
  return impl_->socket_path();
}
const DevicePluginServerOptions& DevicePluginServer::options() const {
  return impl_->options();
}

}  // namespace deviceshare::agent
