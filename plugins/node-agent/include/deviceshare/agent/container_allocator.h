// File: agent/container_allocator.h
//
// ContainerAllocator: what the kubelet device plugin server
// (agent/device_plugin_server.h) asks when kubelet calls it. The server is
// gRPC plumbing only; which pod a call is for, and what that pod's
// container gets, is decided behind this interface (agent/allocation_
// matcher.h documents the protocol).
//
// Device ids are the ones the plugin advertises: "<gpu-uuid>::<replica>".
//
// Thread safety: every method may be called from several threads at once.
#ifndef DEVICESHARE_AGENT_CONTAINER_ALLOCATOR_H_
#define DEVICESHARE_AGENT_CONTAINER_ALLOCATOR_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "deviceshare/backend/container_edits.h"

namespace deviceshare::agent {

// What a container gets: the backend's edits plus CDI device names.
struct ContainerGrant {
  ContainerEdits edits;
  std::vector<std::string> cdi_devices;  // "vendor/class=name"
  // Extra device nodes: {host path, container path, permissions}.
  struct DeviceNode {
    std::string host_path;
    std::string container_path;
    std::string permissions = "rw";
    bool operator==(const DeviceNode& other) const = default;
  };
  std::vector<DeviceNode> device_nodes;
  std::vector<std::pair<std::string, std::string>> annotations;

  bool operator==(const ContainerGrant& other) const = default;
};

class ContainerAllocator {
 public:
  virtual ~ContainerAllocator() = default;

  // GetPreferredAllocation for one container: `size` ids out of
  // `available`, including all of `must_include`.
  virtual absl::StatusOr<std::vector<std::string>> Preferred(
      const std::vector<std::string>& available,
      const std::vector<std::string>& must_include, int size) = 0;

  // Allocate for one container. An error fails the pod's admission
  // (kubelet reports UnexpectedAdmissionError); it must name the device
  // ids and say why.
  virtual absl::StatusOr<ContainerGrant> Allocate(
      const std::vector<std::string>& device_ids) = 0;

  // PreStartContainer: a last check before the container starts; an error
  // keeps it from starting.
  virtual absl::Status PreStart(const std::vector<std::string>& device_ids) = 0;
};

// "<gpu-uuid>::<replica>" and back. ParseDeviceId is InvalidArgument for
// anything else, naming the id.
std::string ReplicaDeviceId(const std::string& gpu_uuid, int replica);
struct ReplicaId {
  std::string gpu_uuid;
  int replica = 0;
};
absl::StatusOr<ReplicaId> ParseDeviceId(const std::string& device_id);

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_CONTAINER_ALLOCATOR_H_
