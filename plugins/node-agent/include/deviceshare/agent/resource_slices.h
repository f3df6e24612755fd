// File: agent/resource_slices.h
//
// The node's DRA ResourceSlices (resource.k8s.io/v1, Kubernetes 1.35 and
// later): one pool named after the node, built from the same discovery and
// registration as the device plugin path. Each healthy GPU contributes what
// its sharing backend describes (SharingBackend::DraDevices: one shared
// device for hami-core and mps, one partitionable device per MIG placement
// with a counter set per GPU), plus the facts every GPU carries
// (GpuAttributes).
//
// The pool is packed as 1.35+ requires and NVIDIA's DRA driver does it: a
// slice holds counter sets or devices, never both. The counter sets come
// first, at most 8 to a slice; then the devices, in GPU order, in
// device-only slices of at most 64 devices when any of them consumes
// counters, else 128 (dra/slice_limits.h). A GPU's devices stay in one
// slice: a new slice starts where the next GPU's would not fit, and only a
// GPU with more devices than a slice may hold is split. Every slice is
// checked, and the pool as a whole (every consumed counter set is
// published), before anything is returned. An 8 x H100 node with 4 MIG
// GPUs (25 placements each) and 4 hami-core GPUs is 3 slices: the 4
// counter sets; GPUs 0-1's 50 devices; GPUs 2-3's 50 and the 4 shared
// devices (when the MIG GPUs come first).
//
// An unhealthy GPU is withdrawn rather than tainted (a taint would also
// lower its slice's cap to 64); it comes back when healthy.
//
// Device names: "gpu-<index>" for our driver; with HAMi's driver name
// (kHamiDraDriver) "hami-gpu-<index>" and HAMi's attributes and capacities,
// so HAMi's DeviceClass and webhook-made claims select them unchanged.
//
// Thread safety: pure functions.
#ifndef DEVICESHARE_AGENT_RESOURCE_SLICES_H_
#define DEVICESHARE_AGENT_RESOURCE_SLICES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "deviceshare/agent/discovered_gpu.h"
#include "deviceshare/backend/backend_set.h"
#include "deviceshare/dra/resource_slice.h"
#include "deviceshare/model/gpu.h"

namespace deviceshare::agent {

inline constexpr char kDefaultDraDriver[] = "gpu.deviceshare.io";
inline constexpr char kHamiDraDriver[] = "hami-core-gpu.project-hami.io";

struct SliceOptions {
  std::string driver = kDefaultDraDriver;
  std::string node_name;
  int64_t generation = 1;
};

struct NodeSlices {
  std::vector<dra::ResourceSlice> slices;
  // GPUs left out, each with why ("GPU-...: unhealthy (xid 79)").
  std::vector<std::string> withdrawn;
};

// The name of a GPU's own device under `driver`.
std::string GpuDeviceName(const std::string& driver, int32_t index);

// A driver version or compute capability as semver 2.0: up to three
// numeric parts without leading zeros ("535.104.05" -> "535.104.5",
// "9.0" -> "9.0.0"); "" when `text` has no leading number.
std::string AsSemver(absl::string_view text);

// NVIDIA's architecture name for a compute capability ("Hopper" for 9.0);
// "" when unknown.
std::string ArchitectureOf(int32_t cc_major, int32_t cc_minor);

// The attributes every device of `gpu` carries.
std::map<std::string, dra::DeviceAttribute> GpuAttributes(
    const DiscoveredGpu& gpu, const std::string& driver);

// `discovered` and `registered` are parallel (RegisteredGpus). InvalidArgument
// when they are not, or for an empty node name; a GPU whose backend has no
// DRA shape is withdrawn, not an error.
absl::StatusOr<NodeSlices> BuildResourceSlices(
    const std::vector<DiscoveredGpu>& discovered,
    const std::vector<Gpu>& registered, const BackendSet& backends,
    const SliceOptions& options);

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_RESOURCE_SLICES_H_
