// File: agent/gpu_source.h
//
// GpuSource: where the node agent learns its GPUs. Two implementations:
// NVML loaded with dlopen (agent/nvml_source.h) and an inventory file
// (agent/inventory_source.h). The rest of the agent sees only this.
//
// Thread safety: implementations must allow Discover() and CheckHealth()
// from different threads at once.
#ifndef DEVICESHARE_AGENT_GPU_SOURCE_H_
#define DEVICESHARE_AGENT_GPU_SOURCE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "deviceshare/agent/discovered_gpu.h"

namespace deviceshare::agent {

struct GpuHealth {
  std::string uuid;
  bool healthy = true;
  std::string reason;  // empty when healthy

  bool operator==(const GpuHealth& other) const = default;
};

class GpuSource {
 public:
  virtual ~GpuSource() = default;

  // Every GPU of the node, in index order. An error means the source could
  // not be read at all (no driver, unreadable file); a GPU that answers
  // badly is reported unhealthy instead.
  virtual absl::StatusOr<std::vector<DiscoveredGpu>> Discover() = 0;

  // The health of every GPU Discover() returned, cheaply (polling and any
  // XID events seen since the last call). A GPU that recovered is healthy
  // again.
  virtual absl::StatusOr<std::vector<GpuHealth>> CheckHealth() = 0;

  // For logs: "nvml /usr/lib/.../libnvidia-ml.so.1 (driver 580.1)" or
  // "inventory /etc/gpus.yaml".
  virtual std::string Describe() const = 0;
};

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_GPU_SOURCE_H_
