#include "deviceplugin/kubelet_registration.h"

#include <grpcpp/grpcpp.h>

#include <chrono>

#include "absl/strings/str_cat.h"
#include "deviceplugin/v1beta1/api.grpc.pb.h"

namespace deviceshare::agent::deviceplugin {

absl::Status RegisterWithKubelet(const std::string& kubelet_socket,
                                 const DevicePluginServerOptions& options,
                                 const std::string& endpoint,
                                 absl::Duration timeout) {
  // A channel of its own per call: after a kubelet restart the old one
  // would point at a deleted socket.
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateChannel(absl::StrCat("unix://", kubelet_socket),
                          grpc::InsecureChannelCredentials());
  auto stub = v1beta1::Registration::NewStub(channel);
  v1beta1::RegisterRequest request;
  request.set_version(kDevicePluginVersion);
  request.set_endpoint(endpoint);
  request.set_resource_name(options.resource_name);
  request.mutable_options()->set_pre_start_required(options.pre_start_required);
  request.mutable_options()->set_get_preferred_allocation_available(
      options.get_preferred_allocation);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  v1beta1::Empty response;
  const grpc::Status status = stub->Register(&context, request, &response);
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      absl::StrCat("Register on ", kubelet_socket, ": ",
                                   status.error_message()));
}

}  // namespace deviceshare::agent::deviceplugin
