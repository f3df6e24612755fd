// File: deviceplugin/device_plugin_service.h
//
// DevicePluginService: the v1beta1 DevicePlugin gRPC service of one
// resource. It checks that kubelet only names advertised ids, hands each
// container request to the ContainerAllocator and translates the answer
// (ContainerGrant <-> ContainerAllocateResponse). An allocator error is
// returned as a gRPC status with the allocator's code and message, which
// kubelet shows in the pod's UnexpectedAdmissionError.
//
// One instance serves one grpc::Server; Shutdown() ends its ListAndWatch
// streams so that the server can stop without waiting for them.
//
// Thread safety: gRPC calls the methods from its threads, several at once.
#ifndef DEVICESHARE_AGENT_DEVICEPLUGIN_DEVICE_PLUGIN_SERVICE_H_
#define DEVICESHARE_AGENT_DEVICEPLUGIN_DEVICE_PLUGIN_SERVICE_H_

#include <atomic>
#include <string>

#include "absl/status/status.h"
#include "deviceplugin/device_board.h"
#include "deviceplugin/v1beta1/api.grpc.pb.h"
#include "deviceshare/agent/container_allocator.h"
#include "deviceshare/agent/device_plugin_server.h"

namespace deviceshare::agent::deviceplugin {

// DevicePluginStats, counted from several threads.
struct PluginCounters {
  std::atomic<int> serves{0};
  std::atomic<int> registrations{0};
  std::atomic<int> register_failures{0};
  std::atomic<int> list_and_watch_streams{0};
  std::atomic<int> list_and_watch_sends{0};
  std::atomic<int> preferred_calls{0};
  std::atomic<int> allocate_calls{0};
  std::atomic<int> prestart_calls{0};
  std::atomic<int> errors{0};

  DevicePluginStats Snapshot() const;
};

// The wire form of a device list.
v1beta1::ListAndWatchResponse ToListAndWatchResponse(
    const std::vector<AdvertisedDevice>& devices);
// The wire form of what a container gets.
v1beta1::ContainerAllocateResponse ToContainerResponse(
    const ContainerGrant& grant);
// absl::Status -> grpc::Status, same code and message.
grpc::Status ToGrpcStatus(const absl::Status& status);

class DevicePluginService final : public v1beta1::DevicePlugin::Service {
 public:
  // None owned; all must outlive the service.
  DevicePluginService(const DevicePluginServerOptions* options,
                      const DeviceBoard* board, ContainerAllocator* allocator,
                      PluginCounters* counters);

  // Ends open ListAndWatch streams; new ones end at once.
  void Shutdown();

  grpc::Status GetDevicePluginOptions(
      grpc::ServerContext* context, const v1beta1::Empty* request,
      v1beta1::DevicePluginOptions* response) override;
  grpc::Status ListAndWatch(
      grpc::ServerContext* context, const v1beta1::Empty* request,
      grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) override;
  grpc::Status GetPreferredAllocation(
      grpc::ServerContext* context,
      const v1beta1::PreferredAllocationRequest* request,
      v1beta1::PreferredAllocationResponse* response) override;
  grpc::Status Allocate(grpc::ServerContext* context,
                        const v1beta1::AllocateRequest* request,
                        v1beta1::AllocateResponse* response) override;
  grpc::Status PreStartContainer(
      grpc::ServerContext* context,
      const v1beta1::PreStartContainerRequest* request,
      v1beta1::PreStartContainerResponse* response) override;

 private:
  // Allocate less its latency: each container's grant, or the first error.
  grpc::Status AllocateContainers(const v1beta1::AllocateRequest* request,
                                  v1beta1::AllocateResponse* response);
  // InvalidArgument naming the first id that is not advertised (or
  // repeated), and `what` ("Allocate", ...).
  absl::Status CheckIds(
      absl::string_view what,
      const google::protobuf::RepeatedPtrField<std::string>& ids) const;
  // Counts and logs an error answer.
  grpc::Status Fail(absl::string_view what, const absl::Status& status);

  const DevicePluginServerOptions* const options_;
  const DeviceBoard* const board_;
  ContainerAllocator* const allocator_;
  PluginCounters* const counters_;
  std::atomic<bool> stop_{false};
};

}  // namespace deviceshare::agent::deviceplugin

#endif  // DEVICESHARE_AGENT_DEVICEPLUGIN_DEVICE_PLUGIN_SERVICE_H_
