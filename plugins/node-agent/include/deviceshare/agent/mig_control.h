// File: agent/mig_control.h
//
// MigControl: the MIG operations the node agent needs, on one node's GPUs
// (NVML's GPU/compute-instance calls behind agent/nvml_source.h, or a fake).
// Every call names the physical GPU by uuid. Creating needs the privileges
// NVML asks for; MIG mode itself is never changed here.
//
// Thread safety: calls may come from several threads; implementations
// serialize what NVML needs serialized.
#ifndef DEVICESHARE_AGENT_MIG_CONTROL_H_
#define DEVICESHARE_AGENT_MIG_CONTROL_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "deviceshare/agent/discovered_gpu.h"

namespace deviceshare::agent {

class MigControl {
 public:
  virtual ~MigControl() = default;

  // The GPU and compute instances that exist on `gpu_uuid` now.
  virtual absl::StatusOr<std::vector<MigInstanceInfo>> ListInstances(
      const std::string& gpu_uuid) = 0;

  // Creates a GPU instance of `profile` ("3g.40gb") at memory slice
  // `start`, and one compute instance spanning it. FailedPrecondition when
  // MIG is off or the slices are taken; InvalidArgument for an unknown
  // profile or a start the profile does not allow.
  virtual absl::StatusOr<MigInstanceInfo> CreateInstance(
      const std::string& gpu_uuid, const std::string& profile,
      int32_t start) = 0;

  // Destroys the GPU instance `gpu_instance_id` and its compute instances.
  // NotFound when it does not exist.
  virtual absl::Status DestroyInstance(const std::string& gpu_uuid,
                                       int32_t gpu_instance_id) = 0;
};

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_MIG_CONTROL_H_
