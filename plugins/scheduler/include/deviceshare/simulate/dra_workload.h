// File: simulate/dra_workload.h
//
// The DRA side of a simulated workload:
//   - nodes of the short cluster form with `dra: true` publish their GPUs
//     as the node agent would with `serve --dra` (agent/resource_slices.h:
//     one pool per node, driver gpu.deviceshare.io), and register no GPU
//     annotation;
//   - when the cluster names no DeviceClass, the classes the deploy
//     example installs (examples/deploy/dra/deviceclasses.yaml) are used;
//   - a pod's claim from a ResourceClaimTemplate gets the claim Kubernetes'
//     claim controller would make for it, named "<pod>-<claim>" (the
//     controller adds a random suffix; a fixed name keeps reports stable).
//
// Thread safety: pure functions over the workload.
#ifndef DEVICESHARE_SIMULATE_DRA_WORKLOAD_H_
#define DEVICESHARE_SIMULATE_DRA_WORKLOAD_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "deviceshare/config/scheduler_config.h"
#include "deviceshare/dra/claim_spec.h"
#include "deviceshare/dra/device_class.h"
#include "deviceshare/simulate/workload.h"

namespace deviceshare::simulate {

// Moves the GPUs of the named nodes of `workload.nodes` into ResourceSlices
// (workload.slices). InvalidArgument naming the node when a GPU cannot be
// described.
absl::Status PublishDraNodes(const std::vector<std::string>& dra_nodes,
                             const Config& config, Workload& workload);

// The DeviceClasses of the deploy example, for driver gpu.deviceshare.io.
std::vector<dra::DeviceClass> DefaultDeviceClasses();

// Gives each pod claim of a template its generated claim (added to
// workload.claims). A template missing from `templates` leaves the claim
// uncreated (the pod waits, as in a cluster), with a note.
void CreateTemplateClaims(
    const std::vector<dra::ResourceClaimTemplate>& templates,
    Workload& workload);

// The deterministic share ids of a simulation: UUID-shaped, counting up.
std::string SimulatedShareId(uint64_t n);

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_DRA_WORKLOAD_H_
