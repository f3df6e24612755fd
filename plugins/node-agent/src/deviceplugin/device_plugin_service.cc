#include "deviceplugin/device_plugin_service.h"

#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "metrics/agent_metrics.h"
#include "spdlog/spdlog.h"

namespace deviceshare::agent::deviceplugin {
namespace {

constexpr absl::string_view kHealthy = "Healthy";
constexpr absl::string_view kUnhealthy = "Unhealthy";
// How often a ListAndWatch stream with nothing to send checks whether
// kubelet went away; new lists are sent at once, without waiting for it.
constexpr absl::Duration kStreamCancelCheck = absl::Milliseconds(100);

std::vector<std::string> ToVector(
    const google::protobuf::RepeatedPtrField<std::string>& ids) {
  return {ids.begin(), ids.end()};
}

}  // namespace

DevicePluginStats PluginCounters::Snapshot() const {
  DevicePluginStats stats;
  stats.serves = serves.load();
  stats.registrations = registrations.load();
  stats.register_failures = register_failures.load();
  stats.list_and_watch_streams = list_and_watch_streams.load();
  stats.list_and_watch_sends = list_and_watch_sends.load();
  stats.preferred_calls = preferred_calls.load();
  stats.allocate_calls = allocate_calls.load();
  stats.prestart_calls = prestart_calls.load();
  stats.errors = errors.load();
  return stats;
}

v1beta1::ListAndWatchResponse ToListAndWatchResponse(
    const std::vector<AdvertisedDevice>& devices) {
  v1beta1::ListAndWatchResponse response;
  for (const AdvertisedDevice& device : devices) {
    v1beta1::Device* out = response.add_devices();
    out->set_id(device.id);
    out->set_health(std::string(device.healthy ? kHealthy : kUnhealthy));
    if (device.numa_node >= 0) {
      out->mutable_topology()->add_nodes()->set_id(device.numa_node);
    }
  }
  return response;
}

v1beta1::ContainerAllocateResponse ToContainerResponse(
    const ContainerGrant& grant) {
  v1beta1::ContainerAllocateResponse response;
  // ContainerEdits::device_ids needs no field of its own: the backends
  // already name them in NVIDIA_VISIBLE_DEVICES.
  for (const auto& [name, value] : grant.edits.env) {
    (*response.mutable_envs())[name] = value;
  }
  for (const Mount& mount : grant.edits.mounts) {
    v1beta1::Mount* out = response.add_mounts();
    out->set_host_path(mount.host_path);
    out->set_container_path(mount.container_path);
    out->set_read_only(mount.read_only);
  }
  for (const ContainerGrant::DeviceNode& node : grant.device_nodes) {
    v1beta1::DeviceSpec* out = response.add_devices();
    out->set_host_path(node.host_path);
    out->set_container_path(node.container_path);
    out->set_permissions(node.permissions);
  }
  for (const auto& [key, value] : grant.annotations) {
    (*response.mutable_annotations())[key] = value;
  }
  for (const std::string& name : grant.cdi_devices) {
    response.add_cdi_devices()->set_name(name);
  }
  return response;
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  // absl's canonical codes are gRPC's, number for number.
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

DevicePluginService::DevicePluginService(
    const DevicePluginServerOptions* options, const DeviceBoard* board,
    ContainerAllocator* allocator, PluginCounters* counters)
    : options_(options),
      board_(board),
      allocator_(allocator),
      counters_(counters) {}

void DevicePluginService::Shutdown() {
  stop_.store(true);
  board_->Wake();
}

grpc::Status DevicePluginService::GetDevicePluginOptions(
    grpc::ServerContext*, const v1beta1::Empty*,
    v1beta1::DevicePluginOptions* response) {
  response->set_pre_start_required(options_->pre_start_required);
  response->set_get_preferred_allocation_available(
      options_->get_preferred_allocation);
  return grpc::Status::OK;
}

grpc::Status DevicePluginService::ListAndWatch(
    grpc::ServerContext* context, const v1beta1::Empty*,
    grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) {
  ++counters_->list_and_watch_streams;
  spdlog::info("device plugin {}: ListAndWatch stream opened by {}",
               options_->resource_name, context->peer());
  DeviceSnapshot sent = board_->Get();
  if (!writer->Write(ToListAndWatchResponse(sent.devices))) {
    return grpc::Status::OK;  // kubelet is gone already
  }
  ++counters_->list_and_watch_sends;
  while (!stop_.load() && !context->IsCancelled()) {
    std::optional<DeviceSnapshot> newer =
        board_->AwaitNewer(sent.version, stop_, kStreamCancelCheck);
    if (!newer.has_value()) continue;
    sent = *std::move(newer);
    if (!writer->Write(ToListAndWatchResponse(sent.devices))) break;
    ++counters_->list_and_watch_sends;
  }
  spdlog::info("device plugin {}: ListAndWatch stream ended",
               options_->resource_name);
  return grpc::Status::OK;
}

grpc::Status DevicePluginService::GetPreferredAllocation(
    grpc::ServerContext*, const v1beta1::PreferredAllocationRequest* request,
    v1beta1::PreferredAllocationResponse* response) {
  ++counters_->preferred_calls;
  for (const auto& container : request->container_requests()) {
    if (absl::Status s = CheckIds("GetPreferredAllocation available_deviceIDs",
                                  container.available_deviceids());
        !s.ok()) {
      return Fail("GetPreferredAllocation", s);
    }
    if (absl::Status s =
            CheckIds("GetPreferredAllocation must_include_deviceIDs",
                     container.must_include_deviceids());
        !s.ok()) {
      return Fail("GetPreferredAllocation", s);
    }
    if (container.allocation_size() <= 0) {
      return Fail("GetPreferredAllocation",
                  absl::InvalidArgumentError(absl::StrCat(
                      "GetPreferredAllocation for ", options_->resource_name,
                      ": allocation_size ", container.allocation_size(),
                      " is not positive")));
    }
    absl::StatusOr<std::vector<std::string>> ids =
        allocator_->Preferred(ToVector(container.available_deviceids()),
                              ToVector(container.must_include_deviceids()),
                              container.allocation_size());
    if (!ids.ok()) return Fail("GetPreferredAllocation", ids.status());
    auto* out = response->add_container_responses();
    for (const std::string& id : *ids) out->add_deviceids(id);
  }
  return grpc::Status::OK;
}

grpc::Status DevicePluginService::Allocate(
    grpc::ServerContext*, const v1beta1::AllocateRequest* request,
    v1beta1::AllocateResponse* response) {
  ++counters_->allocate_calls;
  const absl::Time start = absl::Now();
  const grpc::Status answer = AllocateContainers(request, response);
  metrics::AgentMetrics::Default().ObservePrepare(metrics::kDevicePluginApi,
                                                  absl::Now() - start);
  return answer;
}

grpc::Status DevicePluginService::AllocateContainers(
    const v1beta1::AllocateRequest* request,
    v1beta1::AllocateResponse* response) {
  if (request->container_requests().empty()) {
    return Fail("Allocate", absl::InvalidArgumentError(absl::StrCat(
                                "Allocate for ", options_->resource_name,
                                ": no container_requests")));
  }
  for (const auto& container : request->container_requests()) {
    if (container.devices_ids().empty()) {
      return Fail("Allocate", absl::InvalidArgumentError(absl::StrCat(
                                  "Allocate for ", options_->resource_name,
                                  ": a container request has no devices_ids")));
    }
    if (absl::Status s = CheckIds("Allocate", container.devices_ids());
        !s.ok()) {
      return Fail("Allocate", s);
    }
    absl::StatusOr<ContainerGrant> grant =
        allocator_->Allocate(ToVector(container.devices_ids()));
    if (!grant.ok()) return Fail("Allocate", grant.status());
    *response->add_container_responses() = ToContainerResponse(*grant);
    spdlog::debug("device plugin {}: allocated {}", options_->resource_name,
                  absl::StrJoin(container.devices_ids(), ","));
  }
  return grpc::Status::OK;
}

grpc::Status DevicePluginService::PreStartContainer(
    grpc::ServerContext*, const v1beta1::PreStartContainerRequest* request,
    v1beta1::PreStartContainerResponse*) {
  ++counters_->prestart_calls;
  if (absl::Status s = CheckIds("PreStartContainer", request->devices_ids());
      !s.ok()) {
    return Fail("PreStartContainer", s);
  }
  if (absl::Status s = allocator_->PreStart(ToVector(request->devices_ids()));
      !s.ok()) {
    return Fail("PreStartContainer", s);
  }
  return grpc::Status::OK;
}

absl::Status DevicePluginService::CheckIds(
    absl::string_view what,
    const google::protobuf::RepeatedPtrField<std::string>& ids) const {
  const DeviceSnapshot snapshot = board_->Get();
  std::set<std::string> advertised;
  for (const AdvertisedDevice& device : snapshot.devices) {
    advertised.insert(device.id);
  }
  std::set<std::string> seen;
  for (const std::string& id : ids) {
    if (advertised.count(id) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " for ", options_->resource_name, ": device id \"",
                       id, "\" is not one this plugin advertises"));
    }
    if (!seen.insert(id).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " for ", options_->resource_name, ": device id \"",
                       id, "\" is named twice"));
    }
  }
  return absl::OkStatus();
}

grpc::Status DevicePluginService::Fail(absl::string_view what,
                                       const absl::Status& status) {
  ++counters_->errors;
  if (what == "Allocate") {
    metrics::AgentMetrics::Default().CountRefusal(
        metrics::kDevicePluginApi, options_->resource_name, status);
  }
  spdlog::warn("device plugin {}: {} failed: {}", options_->resource_name,
               std::string(what), status.ToString());
  return ToGrpcStatus(status);
}

}  // namespace deviceshare::agent::deviceplugin
