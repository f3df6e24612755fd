#include "testing/test_dra_kubelet.h"

#include <grpcpp/grpcpp.h>
#include <sys/stat.h>

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "dra/v1/api.grpc.pb.h"
#include "dra/v1beta1/api.grpc.pb.h"
#include "pluginregistration/v1/api.grpc.pb.h"

namespace deviceshare::testing {
namespace {

namespace drav1 = ::k8s::io::kubelet::pkg::apis::dra::v1;
namespace drav1beta1 = ::k8s::io::kubelet::pkg::apis::dra::v1beta1;
namespace registration = ::pluginregistration;

constexpr char kDraPluginType[] = "DRAPlugin";

// The message types of one DRAPlugin version.
struct V1 {
  using DRAPlugin = drav1::DRAPlugin;
  using PrepareRequest = drav1::NodePrepareResourcesRequest;
  using PrepareResponse = drav1::NodePrepareResourcesResponse;
  using UnprepareRequest = drav1::NodeUnprepareResourcesRequest;
  using UnprepareResponse = drav1::NodeUnprepareResourcesResponse;
};
struct V1beta1 {
  using DRAPlugin = drav1beta1::DRAPlugin;
  using PrepareRequest = drav1beta1::NodePrepareResourcesRequest;
  using PrepareResponse = drav1beta1::NodePrepareResourcesResponse;
  using UnprepareRequest = drav1beta1::NodeUnprepareResourcesRequest;
  using UnprepareResponse = drav1beta1::NodeUnprepareResourcesResponse;
};

absl::Status FromGrpc(const grpc::Status& status, absl::string_view what) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      absl::StrCat(what, ": ", status.error_message()));
}

std::shared_ptr<grpc::Channel> Dial(const std::string& socket) {
  return grpc::CreateChannel(absl::StrCat("unix://", socket),
                             grpc::InsecureChannelCredentials());
}

bool IsSocket(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

template <typename Request>
Request ToRequest(const std::vector<agent::ClaimRef>& claims) {
  Request request;
  for (const agent::ClaimRef& claim : claims) {
    auto& wire = *request.add_claims();
    wire.set_namespace_(claim.ns);
    wire.set_uid(claim.uid);
    wire.set_name(claim.name);
  }
  return request;
}

// Kubelet's checks of an answer (pkg/kubelet/cm/dra/manager.go), with its
// wording.
template <typename Answer>
absl::Status CheckAnswer(absl::string_view method,
                         const std::vector<agent::ClaimRef>& claims,
                         const Answer& answer) {
  std::set<std::string> asked;
  for (const agent::ClaimRef& claim : claims) asked.insert(claim.uid);
  for (const auto& [uid, result] : answer) {
    if (asked.count(uid) == 0) {
      return absl::InternalError(
          absl::StrCat(method, " returned result for unknown claim UID ", uid));
    }
  }
  if (answer.size() != asked.size()) {
    return absl::InternalError(absl::StrCat(
        method, " left out ", asked.size() - answer.size(), " claims"));
  }
  return absl::OkStatus();
}

template <typename Api>
absl::StatusOr<std::map<std::string, agent::ClaimPrepareResult>> CallPrepare(
    const std::string& endpoint, const std::vector<agent::ClaimRef>& claims,
    absl::Duration timeout) {
  auto stub = Api::DRAPlugin::NewStub(Dial(endpoint));
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  typename Api::PrepareResponse response;
  if (absl::Status s = FromGrpc(
          stub->NodePrepareResources(
              &context, ToRequest<typename Api::PrepareRequest>(claims),
              &response),
          "NodePrepareResources");
      !s.ok()) {
    return s;
  }
  std::map<std::string, agent::ClaimPrepareResult> answer;
  for (const auto& [uid, wire] : response.claims()) {
    agent::ClaimPrepareResult& result = answer[uid];
    result.error = wire.error();
    for (const auto& device : wire.devices()) {
      agent::PreparedDevice out;
      out.request_names.assign(device.request_names().begin(),
                               device.request_names().end());
      out.pool = device.pool_name();
      out.device = device.device_name();
      out.cdi_device_ids.assign(device.cdi_device_ids().begin(),
                                device.cdi_device_ids().end());
      if constexpr (requires { device.has_share_id(); }) {
        if (device.has_share_id()) out.share_id = device.share_id();
      }
      result.devices.push_back(std::move(out));
    }
  }
  if (absl::Status s = CheckAnswer("NodePrepareResources", claims, answer);
      !s.ok()) {
    return s;
  }
  return answer;
}

template <typename Api>
absl::StatusOr<std::map<std::string, std::string>> CallUnprepare(
    const std::string& endpoint, const std::vector<agent::ClaimRef>& claims,
    absl::Duration timeout) {
  auto stub = Api::DRAPlugin::NewStub(Dial(endpoint));
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  typename Api::UnprepareResponse response;
  if (absl::Status s = FromGrpc(
          stub->NodeUnprepareResources(
              &context, ToRequest<typename Api::UnprepareRequest>(claims),
              &response),
          "NodeUnprepareResources");
      !s.ok()) {
    return s;
  }
  std::map<std::string, std::string> answer;
  for (const auto& [uid, wire] : response.claims()) answer[uid] = wire.error();
  if (absl::Status s = CheckAnswer("NodeUnprepareResources", claims, answer);
      !s.ok()) {
    return s;
  }
  return answer;
}

absl::Status UnknownVersion(const std::string& version) {
  return absl::InvalidArgumentError(absl::StrCat(
      "test DRA kubelet: version \"", version, "\" is not v1 or v1beta1"));
}

}  // namespace

std::vector<std::string> TestDraKubelet::Kubelet134Services() {
  return {"v1.DRAPlugin", "v1beta1.DRAPlugin"};
}

TestDraKubelet::TestDraKubelet(std::string registry_dir,
                               std::vector<std::string> known_services,
                               absl::Duration rpc_timeout)
    : registry_dir_(std::move(registry_dir)),
      known_services_(std::move(known_services)),
      rpc_timeout_(rpc_timeout) {}

std::string TestDraKubelet::registration_socket(
    const std::string& driver) const {
  return absl::StrCat(registry_dir_, "/", driver, "-reg.sock");
}

absl::StatusOr<DraPluginInfo> TestDraKubelet::WaitForPlugin(
    const std::string& driver, absl::Duration timeout) {
  const std::string socket = registration_socket(driver);
  const absl::Time deadline = absl::Now() + timeout;
  std::shared_ptr<grpc::Channel> channel;
  registration::PluginInfo info;
  absl::Status last =
      absl::NotFoundError(absl::StrCat(socket, " is not there"));
  while (true) {
    // Like the plugin watcher: only a socket file counts.
    if (IsSocket(socket)) {
      channel = Dial(socket);
      auto stub = registration::Registration::NewStub(channel);
      grpc::ClientContext context;
      context.set_deadline(absl::ToChronoTime(std::min(
          absl::Now() + rpc_timeout_, std::max(deadline, absl::Now()))));
      last = FromGrpc(stub->GetInfo(&context, {}, &info), "GetInfo");
      if (last.ok()) break;
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "test DRA kubelet: no plugin answered on ", socket, " within ",
          absl::FormatDuration(timeout), ": ", last.ToString()));
    }
    absl::SleepFor(absl::Milliseconds(5));
  }

  DraPluginInfo plugin{
      info.type(),
      info.name(),
      info.endpoint(),
      {info.supported_versions().begin(), info.supported_versions().end()},
      ""};
  // What kubelet checks, with its wording where it has one.
  std::string rejection;
  if (plugin.type != kDraPluginType) {
    rejection =
        absl::StrCat("no handler registered for plugin type: ", plugin.type,
                     " at socket ", socket);
  } else if (plugin.name != driver) {
    rejection = absl::StrCat("plugin at ", socket, " is named \"", plugin.name,
                             "\", not \"", driver, "\"");
  } else if (plugin.supported_versions.empty()) {
    rejection =
        "empty list of supported gRPC services (aka supported versions)";
  } else {
    // A 1.34 kubelet takes the plugin's first entry that it knows.
    for (const std::string& service : plugin.supported_versions) {
      if (std::find(known_services_.begin(), known_services_.end(), service) !=
          known_services_.end()) {
        plugin.chosen_service = service;
        break;
      }
    }
    if (plugin.chosen_service.empty()) {
      rejection = absl::StrCat("none of services supported by the plugin (",
                               absl::StrJoin(plugin.supported_versions, ", "),
                               ") are supported by the kubelet (",
                               absl::StrJoin(known_services_, ", "), ")");
    }
  }

  auto stub = registration::Registration::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + rpc_timeout_));
  registration::RegistrationStatus status;
  status.set_plugin_registered(rejection.empty());
  status.set_error(rejection);
  registration::RegistrationStatusResponse ignored;
  if (absl::Status s =
          FromGrpc(stub->NotifyRegistrationStatus(&context, status, &ignored),
                   "NotifyRegistrationStatus");
      !s.ok()) {
    return s;
  }
  if (!rejection.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("test DRA kubelet rejected ", driver, ": ", rejection));
  }
  absl::MutexLock lock(&mu_);
  plugin_ = plugin;
  return plugin;
}

absl::StatusOr<std::string> TestDraKubelet::Endpoint() const {
  absl::MutexLock lock(&mu_);
  if (!plugin_.has_value()) {
    return absl::FailedPreconditionError(
        "test DRA kubelet: no plugin registered; call WaitForPlugin first");
  }
  return plugin_->endpoint;
}

absl::StatusOr<std::map<std::string, agent::ClaimPrepareResult>>
TestDraKubelet::Prepare(const std::string& version,
                        const std::vector<agent::ClaimRef>& claims) {
  absl::StatusOr<std::string> endpoint = Endpoint();
  if (!endpoint.ok()) return endpoint.status();
  if (version == "v1") return CallPrepare<V1>(*endpoint, claims, rpc_timeout_);
  if (version == "v1beta1") {
    return CallPrepare<V1beta1>(*endpoint, claims, rpc_timeout_);
  }
  return UnknownVersion(version);
}

absl::StatusOr<std::map<std::string, std::string>> TestDraKubelet::Unprepare(
    const std::string& version, const std::vector<agent::ClaimRef>& claims) {
  absl::StatusOr<std::string> endpoint = Endpoint();
  if (!endpoint.ok()) return endpoint.status();
  if (version == "v1") {
    return CallUnprepare<V1>(*endpoint, claims, rpc_timeout_);
  }
  if (version == "v1beta1") {
    return CallUnprepare<V1beta1>(*endpoint, claims, rpc_timeout_);
  }
  return UnknownVersion(version);
}

}  // namespace deviceshare::testing
