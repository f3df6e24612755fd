// File: simulate/dra_workload.h
//
// The DRA side of a simulated workload:
//   - nodes of the short cluster form with `dra: true` publish their GPUs
//     as the node agent would with `serve --dra` (agent/resource_slices.h:
//     one pool per node, driver gpu.deviceshare.io), and register no GPU
//     annotation;
//   - when the cluster names no DeviceClass, the classes the deploy
//     example installs (deploy/dra/deviceclasses.yaml) are used;
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

// `simulate --dra`: the whole workload through DRA. Every node's GPUs are
// published as the node agent's ResourceSlices (as `dra: true`), and each
// container's annotated GPU request becomes a ResourceClaim of its pod,
// "<pod>-<container>", as HAMi-DRA's webhook writes them: one request
// "gpu" of class gpu.deviceshare.io, count = GPUs, capacity memory (MiB in
// bytes; omitted for a whole card, so the default takes all of it) and
// cores (a 0-core share asks the 1 % minimum). Unlike HAMi-DRA, a request
// for several GPUs gets distinctAttribute uuid, so its shares land on
// different GPUs. The containers then ask no annotated GPU. A memory
// percentage below 100 has no DRA form (capacity requests are amounts):
// InvalidArgument naming the pod.
absl::Status ConvertToDra(const Config& config, Workload& workload);

// The deterministic share ids of a simulation: UUID-shaped, counting up.
std::string SimulatedShareId(uint64_t n);

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_DRA_WORKLOAD_H_
