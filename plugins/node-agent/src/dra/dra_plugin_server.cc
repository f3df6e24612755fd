#include "deviceshare/agent/dra_plugin_server.h"

#include <filesystem>
#include <memory>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "common/watchdog.h"
#include "deviceplugin/socket_files.h"
#include "deviceshare/status_macros.h"
#include "dra/claim_desk.h"
#include "dra/dra_counters.h"
#include "dra/dra_services.h"
#include "dra/served_socket.h"
#include "spdlog/spdlog.h"

namespace deviceshare::agent {

using dra::ClaimDesk;
using dra::DraCounters;
using dra::ServedSocket;

namespace {

// The DRA socket's file name in `<plugin_dir>/<driver>/`, fixed upstream
// (kubeletplugin/draplugin.go: "dra" is hard-coded).
constexpr char kDraSocketName[] = "dra.sock";

// A DNS subdomain (RFC 1123), which is what a driver name must be: the
// API server checks it in DeviceClasses and ResourceSlices.
bool IsDnsSubdomain(absl::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  for (absl::string_view label : absl::StrSplit(name, '.')) {
    if (label.empty() || label.size() > 63 || label.front() == '-' ||
        label.back() == '-') {
      return false;
    }
    for (char c : label) {
      if (!absl::ascii_islower(c) && !absl::ascii_isdigit(c) && c != '-') {
        return false;
      }
    }
  }
  return true;
}

absl::Status ValidateOptions(const DraPluginServerOptions& o,
                             const std::string& dra_socket,
                             const std::string& registration_socket) {
  auto bad = [](absl::string_view field, absl::string_view value,
                absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("DRA plugin option ", field, " \"", value, "\": ", why));
  };
  if (!IsDnsSubdomain(o.driver_name)) {
    return bad("driver_name", o.driver_name,
               "is not a DNS subdomain (lower-case letters, digits, '-' and "
               "'.')");
  }
  if (o.plugin_dir.empty()) return bad("plugin_dir", o.plugin_dir, "is empty");
  if (o.registry_dir.empty()) {
    return bad("registry_dir", o.registry_dir, "is empty");
  }
  if (!o.serve_v1 && !o.serve_v1beta1) {
    return bad("serve_v1", "false",
               "and serve_v1beta1 is false too: no API version to serve");
  }
  for (const auto& [field, dir, path] :
       {std::tuple("plugin_dir", &o.plugin_dir, &dra_socket),
        std::tuple("registry_dir", &o.registry_dir, &registration_socket)}) {
    if (path->size() > deviceplugin::kMaxUnixSocketPath) {
      return bad(field, *dir,
                 absl::StrCat("makes the socket path ", *path, " ",
                              path->size(), " bytes long; unix sockets allow ",
                              deviceplugin::kMaxUnixSocketPath));
    }
  }
  if (o.watchdog_interval <= absl::ZeroDuration()) {
    return bad("watchdog_interval", absl::FormatDuration(o.watchdog_interval),
               "must be positive");
  }
  return absl::OkStatus();
}

// Most recent first: a 1.34 kubelet takes the first entry it knows.
std::vector<std::string> SupportedVersions(const DraPluginServerOptions& o) {
  std::vector<std::string> versions;
  if (o.serve_v1) versions.push_back(kDraV1Service);
  if (o.serve_v1beta1) versions.push_back(kDraV1beta1Service);
  return versions;
}

}  // namespace

class DraPluginServer::Impl {
 public:
  Impl(DraPluginServerOptions options, ClaimPreparer* preparer)
      : options_(std::move(options)),
        dra_socket_((std::filesystem::path(options_.plugin_dir) /
                     options_.driver_name / kDraSocketName)
                        .string()),
        registration_socket_((std::filesystem::path(options_.registry_dir) /
                              absl::StrCat(options_.driver_name, "-reg.sock"))
                                 .string()),
        versions_(SupportedVersions(options_)),
        desk_(options_.driver_name, preparer, &counters_) {}

  ~Impl() { Stop(); }

  absl::Status Start() {
    absl::MutexLock lifecycle(&lifecycle_mu_);
    if (started_) {
      return absl::FailedPreconditionError(absl::StrCat(
          "DRA plugin ", options_.driver_name, " is started already"));
    }
    DS_RETURN_IF_ERROR(
        ValidateOptions(options_, dra_socket_, registration_socket_));
    {
      absl::MutexLock lock(&mu_);
      // Stale files of an earlier run: gRPC cannot bind over them, and a
      // registration socket nobody serves would keep kubelet dialing.
      DS_RETURN_IF_ERROR(deviceplugin::RemoveIfPresent(registration_socket_));
      DS_RETURN_IF_ERROR(deviceplugin::RemoveIfPresent(dra_socket_));
      // DRA first: kubelet may call it as soon as it sees the registration.
      DS_RETURN_IF_ERROR(ServeDraLocked());
      if (absl::Status s = ServeRegistrationLocked(); !s.ok()) {
        StopServingLocked();
        return s;
      }
    }
    watchdog_.Start([this] { return options_.watchdog_interval; },
                    [this] { Tick(); });
    started_ = true;
    return absl::OkStatus();
  }

  void Stop() {
    absl::MutexLock lifecycle(&lifecycle_mu_);
    if (!started_) return;
    watchdog_.Stop();
    {
      absl::MutexLock lock(&mu_);
      StopServingLocked();
    }
    counters_.Unregistered();
    started_ = false;
    spdlog::info("DRA {}: stopped", options_.driver_name);
  }

  DraPluginStats stats() const { return counters_.Snapshot(); }
  bool registered() const { return counters_.registered(); }
  const std::string& dra_socket_path() const { return dra_socket_; }
  const std::string& registration_socket_path() const {
    return registration_socket_;
  }
  const std::vector<std::string>& supported_versions() const {
    return versions_;
  }
  const DraPluginServerOptions& options() const { return options_; }

 private:
  absl::Status ServeDraLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::vector<std::unique_ptr<grpc::Service>> services;
    if (options_.serve_v1) {
      services.push_back(std::make_unique<dra::DraV1Service>(&desk_));
    }
    if (options_.serve_v1beta1) {
      services.push_back(std::make_unique<dra::DraV1beta1Service>(&desk_));
    }
    absl::StatusOr<std::unique_ptr<ServedSocket>> served =
        ServedSocket::Serve(dra_socket_, std::move(services));
    if (!served.ok()) return Named(served.status());
    dra_ = *std::move(served);
    counters_.Count([](DraPluginStats& stats) { ++stats.dra_serves; });
    spdlog::info("DRA {}: serving {} on {}", options_.driver_name,
                 absl::StrJoin(versions_, ", "), dra_socket_);
    return absl::OkStatus();
  }

  absl::Status ServeRegistrationLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    pluginregistration::PluginInfo info;
    info.set_type(kDraPluginType);
    info.set_name(options_.driver_name);
    info.set_endpoint(dra_socket_);
    for (const std::string& version : versions_) {
      info.add_supported_versions(version);
    }
    std::vector<std::unique_ptr<grpc::Service>> services;
    services.push_back(std::make_unique<dra::RegistrationService>(
        std::move(info), &counters_));
    // Whatever kubelet said about an earlier socket, a new one is unknown to
    // it. Before serving, or kubelet's answer on the new one could be lost.
    counters_.Unregistered();
    absl::StatusOr<std::unique_ptr<ServedSocket>> served =
        ServedSocket::Serve(registration_socket_, std::move(services));
    if (!served.ok()) return Named(served.status());
    registration_ = *std::move(served);
    counters_.Count([](DraPluginStats& stats) { ++stats.registration_serves; });
    spdlog::info("DRA {}: registration socket {} is up", options_.driver_name,
                 registration_socket_);
    return absl::OkStatus();
  }

  // Registration first, so that kubelet stops routing to a plugin that is
  // going away before its DRA socket closes.
  void StopServingLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (registration_ != nullptr) {
      registration_->Shutdown(/*remove_socket=*/true);
      registration_.reset();
    }
    if (dra_ != nullptr) {
      dra_->Shutdown(/*remove_socket=*/true);
      dra_.reset();
    }
  }

  absl::Status Named(const absl::Status& status) const {
    return absl::Status(status.code(),
                        absl::StrCat("DRA plugin ", options_.driver_name, ": ",
                                     status.message()));
  }

  // The path is this driver's by convention, as Start() assumes too; gRPC
  // would fail to bind over a file that is not a socket, for good.
  void RemoveForeignFile(const std::string& path) const {
    if (!deviceplugin::IdentifyFile(path).has_value()) return;
    spdlog::info("DRA {}: removing {}, which is not a socket it serves",
                 options_.driver_name, path);
    if (absl::Status s = deviceplugin::RemoveIfPresent(path); !s.ok()) {
      spdlog::warn("DRA {}: {}", options_.driver_name, s.ToString());
    }
  }

  // One look at the two socket files; see the header for what it fixes.
  void Tick() {
    absl::MutexLock lock(&mu_);
    if (dra_ == nullptr || !dra_->Intact()) {
      if (dra_ != nullptr) {
        spdlog::info("DRA {}: socket {} was removed or replaced; serving again",
                     options_.driver_name, dra_socket_);
        dra_->Shutdown(/*remove_socket=*/false);
        dra_.reset();
      }
      RemoveForeignFile(dra_socket_);
      if (absl::Status s = ServeDraLocked(); !s.ok()) {
        spdlog::warn("DRA {}: {}", options_.driver_name, s.ToString());
        return;  // No registration for a plugin that cannot be reached.
      }
    }
    if (registration_ == nullptr || !registration_->Intact()) {
      if (registration_ != nullptr) {
        spdlog::info(
            "DRA {}: registration socket {} was removed or replaced; serving "
            "again",
            options_.driver_name, registration_socket_);
        registration_->Shutdown(/*remove_socket=*/false);
        registration_.reset();
      }
      RemoveForeignFile(registration_socket_);
      if (absl::Status s = ServeRegistrationLocked(); !s.ok()) {
        spdlog::warn("DRA {}: {}", options_.driver_name, s.ToString());
      }
    }
  }

  const DraPluginServerOptions options_;
  const std::string dra_socket_;
  const std::string registration_socket_;
  const std::vector<std::string> versions_;
  DraCounters counters_;
  ClaimDesk desk_;  // after counters_, which it points to

  // Serializes Start and Stop; taken before the others.
  absl::Mutex lifecycle_mu_;
  bool started_ ABSL_GUARDED_BY(lifecycle_mu_) = false;
  Watchdog watchdog_;

  // The two servers; held for one Tick.
  absl::Mutex mu_ ABSL_ACQUIRED_AFTER(lifecycle_mu_);
  std::unique_ptr<ServedSocket> dra_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<ServedSocket> registration_ ABSL_GUARDED_BY(mu_);
};

DraPluginServer::DraPluginServer(DraPluginServerOptions options,
                                 ClaimPreparer* preparer)
    : impl_(std::make_unique<Impl>(std::move(options), preparer)) {}

DraPluginServer::~DraPluginServer() = default;

absl::Status DraPluginServer::Start() { return impl_->Start(); }
void DraPluginServer::Stop() { impl_->Stop(); }
DraPluginStats DraPluginServer::stats() const { return impl_->stats(); }
bool DraPluginServer::registered() const { return impl_->registered(); }
std::string DraPluginServer::dra_socket_path() const {
  return impl_->dra_socket_path();
}
std::string DraPluginServer::registration_socket_path() const {
  return impl_->registration_socket_path();
}
std::vector<std::string> DraPluginServer::supported_versions() const {
  return impl_->supported_versions();
}
const DraPluginServerOptions& DraPluginServer::options() const {
  return impl_->options();
}

}  // namespace deviceshare::agent
