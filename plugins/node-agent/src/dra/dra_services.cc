#include "dra/dra_services.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "spdlog/spdlog.h"

namespace deviceshare::agent::dra {
namespace {

// The two versions' messages have the same shape (v1's Device adds
// share_id), so one template translates both.
template <typename Request>
std::vector<ClaimRef> ClaimsOf(const Request& request) {
  std::vector<ClaimRef> claims;
  claims.reserve(request.claims_size());
  for (const auto& claim : request.claims()) {
    claims.push_back({claim.namespace_(), claim.uid(), claim.name()});
  }
  return claims;
}

template <typename Response>
void FillPrepared(const std::map<std::string, ClaimPrepareResult>& answer,
                  Response& response) {
  auto& claims = *response.mutable_claims();
  for (const auto& [uid, result] : answer) {
    auto& out = claims[uid];
    out.set_error(result.error);
    for (const PreparedDevice& device : result.devices) {
      auto& wire = *out.add_devices();
      for (const std::string& request : device.request_names) {
        wire.add_request_names(request);
      }
      wire.set_pool_name(device.pool);
      wire.set_device_name(device.device);
      for (const std::string& id : device.cdi_device_ids) {
        wire.add_cdi_device_ids(id);
      }
      if constexpr (requires { wire.set_share_id(device.share_id); }) {
        // Optional on the wire: a whole device sends none at all.
        if (!device.share_id.empty()) wire.set_share_id(device.share_id);
      }
    }
  }
}

template <typename Response>
void FillUnprepared(const std::map<std::string, std::string>& answer,
                    Response& response) {
  auto& claims = *response.mutable_claims();
  for (const auto& [uid, error] : answer) claims[uid].set_error(error);
}

}  // namespace

grpc::Status DraV1Service::NodePrepareResources(
    grpc::ServerContext* /*context*/,
    const drav1::NodePrepareResourcesRequest* request,
    drav1::NodePrepareResourcesResponse* response) {
  FillPrepared(desk_->Prepare(ClaimsOf(*request), DraApiVersion::kV1),
               *response);
  return grpc::Status::OK;
}

grpc::Status DraV1Service::NodeUnprepareResources(
    grpc::ServerContext* /*context*/,
    const drav1::NodeUnprepareResourcesRequest* request,
    drav1::NodeUnprepareResourcesResponse* response) {
  FillUnprepared(desk_->Unprepare(ClaimsOf(*request), DraApiVersion::kV1),
                 *response);
  return grpc::Status::OK;
}

grpc::Status DraV1beta1Service::NodePrepareResources(
    grpc::ServerContext* /*context*/,
    const drav1beta1::NodePrepareResourcesRequest* request,
    drav1beta1::NodePrepareResourcesResponse* response) {
  FillPrepared(desk_->Prepare(ClaimsOf(*request), DraApiVersion::kV1beta1),
               *response);
  return grpc::Status::OK;
}

grpc::Status DraV1beta1Service::NodeUnprepareResources(
    grpc::ServerContext* /*context*/,
    const drav1beta1::NodeUnprepareResourcesRequest* request,
    drav1beta1::NodeUnprepareResourcesResponse* response) {
  FillUnprepared(desk_->Unprepare(ClaimsOf(*request), DraApiVersion::kV1beta1),
                 *response);
  return grpc::Status::OK;
}

grpc::Status RegistrationService::GetInfo(
    grpc::ServerContext* /*context*/,
    const ::pluginregistration::InfoRequest* /*request*/,
    ::pluginregistration::PluginInfo* response) {
  *response = info_;
  return grpc::Status::OK;
}

grpc::Status RegistrationService::NotifyRegistrationStatus(
    grpc::ServerContext* /*context*/,
    const ::pluginregistration::RegistrationStatus* request,
    ::pluginregistration::RegistrationStatusResponse* /*response*/) {
  if (request->plugin_registered()) {
    spdlog::info("DRA {}: kubelet registered the plugin (endpoint {})",
                 info_.name(), info_.endpoint());
    counters_->Notified(true, "");
    return grpc::Status::OK;
  }
  std::string error = request->error();
  if (error.empty()) error = "kubelet rejected the plugin without a reason";
  spdlog::error("DRA {}: kubelet rejected the plugin: {}", info_.name(), error);
  counters_->Notified(false, std::move(error));
  return grpc::Status::OK;
}

}  // namespace deviceshare::agent::dra
