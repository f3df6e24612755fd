// File: agent/discovery_json.h
//
// What `deviceshare-node-agent discover --output json` prints, and its
// inverse, which the inventory file source reads, so that
//   discover --output json > gpus.json; discover --inventory gpus.json
// reports the same GPUs. The document:
//
//   {"gpus": [{"uuid": "GPU-...", "index": 0, "model": "NVIDIA H100 80GB HBM3",
//     "memory_mib": 81559, "sm_count": 132, "numa": 0,
//     "pci_device_id": "0x2330", "pci_bus_id": "00000000:3B:00.0",
//     "compute_capability": "9.0",          // "" when unknown
//     "mig_capable": true, "mig_enabled": false,
//     "mig_profiles": [{"name": "1g.10gb", "id": 19, "slices": 1,
//       "instances": 7, "sm": 16, "memory_mib": 9984, "memory_slices": 1,
//       "starts": [0, 1, 2, 3, 4, 5, 6]}],
//     "mig_instances": [{"profile": "3g.40gb", "start": 4, "size": 4,
//       "gpu_instance_id": 2, "compute_instance_id": 0,
//       "mig_uuid": "MIG-..."}],
//     "links": [{"peer_index": 1, "nvlinks": 18, "same_numa": true,
//       "pcie": "numa"}],                   // pcie: PcieLevelName, optional
//     "health": "healthy", "health_reason": ""}]}
//
// Reading back, only uuid, model and memory_mib are required (memory_mib
// may be 0 only on an unhealthy GPU: NVML could not read it); index
// defaults to the position in the list; pci_device_id may also be an
// integer; health may be "healthy" / "unhealthy" / true / false. Unknown
// keys and values of the wrong type are InvalidArgument naming the path,
// e.g. `gpus[1].memory_mib: "x" is a string, want an integer`.
//
// Thread safety: pure functions.
#ifndef DEVICESHARE_AGENT_DISCOVERY_JSON_H_
#define DEVICESHARE_AGENT_DISCOVERY_JSON_H_

#include <vector>

#include "absl/status/statusor.h"
#include "deviceshare/agent/discovered_gpu.h"
#include "nlohmann/json.hpp"

namespace deviceshare::agent {

nlohmann::json DiscoveryJson(const std::vector<DiscoveredGpu>& gpus);

// The inverse of DiscoveryJson: a mapping with a list `gpus` (and nothing
// else). GPUs come back in index order; indexes and uuids must be unique.
absl::StatusOr<std::vector<DiscoveredGpu>> ParseDiscoveryJson(
    const nlohmann::json& document);

// One entry of `gpus`, at `path` ("gpus[3]") for error messages;
// `position` is the default index.
absl::StatusOr<DiscoveredGpu> ParseDiscoveredGpu(const nlohmann::json& entry,
                                                 const std::string& path,
                                                 int32_t position);

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_DISCOVERY_JSON_H_
