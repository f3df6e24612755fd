// File: dra/dra_services.h
//
// The gRPC services of a DRA driver's kubelet plugin: DRAPlugin v1 and
// v1beta1 (both translating the wire messages to and from the ClaimDesk's
// C++ types; only v1 carries Device.share_id) and pluginregistration's
// Registration, which answers GetInfo from a fixed PluginInfo and records
// NotifyRegistrationStatus in the DraCounters.
//
// A service instance is registered with one grpc::Server; the owner builds
// new ones when it serves a socket again.
//
// Thread safety: gRPC calls the methods from its threads, several at once.
#ifndef DEVICESHARE_AGENT_DRA_DRA_SERVICES_H_
#define DEVICESHARE_AGENT_DRA_DRA_SERVICES_H_

#include <string>
#include <utility>

#include "dra/claim_desk.h"
#include "dra/dra_counters.h"
#include "dra/v1/api.grpc.pb.h"
#include "dra/v1beta1/api.grpc.pb.h"
#include "pluginregistration/v1/api.grpc.pb.h"

namespace deviceshare::agent::dra {

namespace drav1 = ::k8s::io::kubelet::pkg::apis::dra::v1;
namespace drav1beta1 = ::k8s::io::kubelet::pkg::apis::dra::v1beta1;

class DraV1Service final : public drav1::DRAPlugin::Service {
 public:
  // `desk` is not owned and must outlive the service.
  explicit DraV1Service(ClaimDesk* desk) : desk_(desk) {}

  grpc::Status NodePrepareResources(
      grpc::ServerContext* context,
      const drav1::NodePrepareResourcesRequest* request,
      drav1::NodePrepareResourcesResponse* response) override;
  grpc::Status NodeUnprepareResources(
      grpc::ServerContext* context,
      const drav1::NodeUnprepareResourcesRequest* request,
      drav1::NodeUnprepareResourcesResponse* response) override;

 private:
  ClaimDesk* const desk_;
};

class DraV1beta1Service final : public drav1beta1::DRAPlugin::Service {
 public:
  // `desk` is not owned and must outlive the service.
  explicit DraV1beta1Service(ClaimDesk* desk) : desk_(desk) {}

  grpc::Status NodePrepareResources(
      grpc::ServerContext* context,
      const drav1beta1::NodePrepareResourcesRequest* request,
      drav1beta1::NodePrepareResourcesResponse* response) override;
  grpc::Status NodeUnprepareResources(
      grpc::ServerContext* context,
      const drav1beta1::NodeUnprepareResourcesRequest* request,
      drav1beta1::NodeUnprepareResourcesResponse* response) override;

 private:
  ClaimDesk* const desk_;
};

class RegistrationService final
    : public ::pluginregistration::Registration::Service {
 public:
  // `counters` is not owned and must outlive the service.
  RegistrationService(::pluginregistration::PluginInfo info,
                      DraCounters* counters)
      : info_(std::move(info)), counters_(counters) {}

  grpc::Status GetInfo(grpc::ServerContext* context,
                       const ::pluginregistration::InfoRequest* request,
                       ::pluginregistration::PluginInfo* response) override;
  // Always answers OK: kubelet only logs a failed notification, and the
  // outcome is recorded either way.
  grpc::Status NotifyRegistrationStatus(
      grpc::ServerContext* context,
      const ::pluginregistration::RegistrationStatus* request,
      ::pluginregistration::RegistrationStatusResponse* response) override;

 private:
  const ::pluginregistration::PluginInfo info_;
  DraCounters* const counters_;
};

}  // namespace deviceshare::agent::dra

#endif  // DEVICESHARE_AGENT_DRA_DRA_SERVICES_H_
