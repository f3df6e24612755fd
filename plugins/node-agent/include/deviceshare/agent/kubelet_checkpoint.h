// File: agent/kubelet_checkpoint.h
//
// Reads kubelet's device manager checkpoint
// (<device-plugin-dir>/kubelet_internal_checkpoint): which pod container
// holds which device ids of which resource. Kubelet writes it after each
// Allocate and before PreStartContainer, so it is the one place on the node
// that ties the device ids of an Allocate call to a pod UID. Format (kubelet
// >= 1.20; DeviceIDs keyed by NUMA node; older kubelets wrote a plain list,
// also accepted):
//   {"Data":{"PodDeviceEntries":[{"PodUID":"..","ContainerName":"c",
//     "ResourceName":"nvidia.com/gpu","DeviceIDs":{"-1":["GPU-a::0"]},
//     "AllocResp":"<base64>"}],"RegisteredDevices":{..}},"Checksum":N}
// It is kubelet's internal file: the checksum is not verified and unknown
// members are ignored.
#ifndef DEVICESHARE_AGENT_KUBELET_CHECKPOINT_H_
#define DEVICESHARE_AGENT_KUBELET_CHECKPOINT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace deviceshare::agent {

struct CheckpointEntry {
  std::string pod_uid;
  std::string container_name;
  std::vector<std::string> device_ids;  // sorted

  bool operator==(const CheckpointEntry& other) const = default;
};

// The entries of `resource_name`. NotFound when the file does not exist;
// DataLoss when it is not the format above.
absl::StatusOr<std::vector<CheckpointEntry>> ReadKubeletCheckpoint(
    const std::string& path, const std::string& resource_name);

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_KUBELET_CHECKPOINT_H_
