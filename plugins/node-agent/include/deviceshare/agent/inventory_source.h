// File: agent/inventory_source.h
//
// A GpuSource that reads the node's GPUs from a file instead of NVML: for
// machines without a driver (CI, a laptop), for demos, and for nodes whose
// GPUs an operator wants to pin by hand. YAML or JSON, either
//
//   gpus:                     # what `discover --output json` prints
//   - {uuid: GPU-0, index: 0, model: "NVIDIA H100 80GB HBM3",
//      memory_mib: 81559, sm_count: 132, numa: 0, pci_device_id: "0x2330",
//      mig_capable: true, health: healthy}
//
// (every key of agent/discovery_json.h; uuid, model and memory_mib are
// required), or the short cluster form of `deviceshare-scheduler simulate`
// (input/short_cluster.h):
//
//   nodes:
//   - name: gpu-a
//     gpus: [{model: "NVIDIA A100-SXM4-80GB", memory_mib: 81920, count: 8}]
//
// where the node named by InventorySourceOptions::node_name is taken (the
// first node when no name is given); `mode: mig` there means MIG capable
// and enabled. Unknown keys and bad values are InvalidArgument naming the
// path, e.g. `gpus[1].memory_mib: "x" is a string, want an integer`.
//
// Discover() and CheckHealth() re-read the file each time, so editing
// `health:` in it acts like a real failure or recovery. A GPU that
// Discover() returned and the file no longer lists is reported unhealthy.
//
// Thread safety: every method may be called from any thread.
#ifndef DEVICESHARE_AGENT_INVENTORY_SOURCE_H_
#define DEVICESHARE_AGENT_INVENTORY_SOURCE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/agent/gpu_source.h"

namespace deviceshare::agent {

struct InventorySourceOptions {
  // Short cluster form only: the node to take; "" = the first.
  std::string node_name;
};

// Reads and checks the file once, so a bad file fails here.
absl::StatusOr<std::unique_ptr<GpuSource>> OpenInventorySource(
    const std::string& path, const InventorySourceOptions& options = {});

// Parses inventory text (either form) as OpenInventorySource does; errors
// are prefixed with `path`.
absl::StatusOr<std::vector<DiscoveredGpu>> ParseInventory(
    absl::string_view text, const std::string& path,
    const InventorySourceOptions& options = {});

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_INVENTORY_SOURCE_H_
