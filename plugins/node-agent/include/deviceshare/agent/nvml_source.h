// File: agent/nvml_source.h
//
// The GpuSource and MigControl of a node with the NVIDIA driver: NVML
// (libnvidia-ml.so.1) loaded with dlopen at run time, so the agent builds
// and runs without the CUDA toolkit and says clearly when there is no
// driver.
//
// What Discover() reads per GPU: uuid, index, name, PCI bus id and device
// id, memory (MiB), compute capability, SM count (nvmlDeviceGetAttributes_v2
// where the driver answers it for a whole GPU, else 0), NUMA node (sysfs,
// not NVML: <sysfs_root>/bus/pci/devices/<0000:3b:00.0>/numa_node, -1 and
// absent read as 0), MIG mode, profiles with placements, and the MIG
// instances that exist with their MIG device UUIDs. Between every pair of
// GPUs a GpuLink: `nvlinks` counts the active NVLinks whose remote PCI bus
// id is the peer's; `same_numa` is true when nvmlDeviceGetTopologyCommon
// Ancestor answers NODE (40) or closer (the path never crosses the CPU
// interconnect), and falls back to equal sysfs NUMA nodes when NVML cannot
// tell. Calls a driver lacks (older driver, the tests' fake) leave their
// fields at "unknown" instead of failing. A GPU whose name, PCI info or
// memory cannot be read is reported unhealthy with the NVML error; one
// whose UUID cannot be read has an empty uuid.
//
// Health (CheckHealth(), and Discover() too): a GPU is unhealthy while
// nvmlDeviceGetHandleByUUID + nvmlDeviceGetMemoryInfo fail (GPU_IS_LOST or
// any other error; the reason is NVML's error string). Where the driver
// has the event API, XID critical-error events are collected (registered
// once per source, drained without waiting); application xids (13, 31, 43,
// 45, 68, 109), as NVIDIA's device plugin ignores them, do not count. A GPU
// with a critical xid is unhealthy ("xid 79") until a poll at least
// `xid_quiet_period` (30 s) after its last critical xid finds it answering:
// a new xid restarts the wait. An event NVML cannot attribute to a GPU
// marks them all, as the device plugin does.
//
// Thread safety: every method may be called from any thread; each source
// serializes its own NVML calls.
#ifndef DEVICESHARE_AGENT_NVML_SOURCE_H_
#define DEVICESHARE_AGENT_NVML_SOURCE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "deviceshare/agent/gpu_source.h"
#include "deviceshare/agent/mig_control.h"
#include "deviceshare/clock.h"

namespace deviceshare::agent {

struct NvmlSourceOptions {
  // dlopen()ed as given: a bare name goes through the loader's search path.
  std::string library_path = "libnvidia-ml.so.1";
  // Where NUMA nodes are read; tests point it at a directory of their own.
  std::string sysfs_root = "/sys";
  // Time for the XID rule; nullptr = RealClock(). Not owned; must outlive
  // the source.
  const Clock* clock = nullptr;
  absl::Duration xid_quiet_period = absl::Seconds(30);
};

// Loads NVML and calls nvmlInit_v2 (nvmlShutdown when the source is
// destroyed). FailedPrecondition when the library cannot be loaded --
// `cannot load NVML "libnvidia-ml.so.1": <dlerror> -- is the NVIDIA driver
// installed? (use --inventory FILE on machines without one)` -- or NVML
// does not initialize.
absl::StatusOr<std::unique_ptr<GpuSource>> OpenNvmlSource(
    const NvmlSourceOptions& options);

// The MIG operations through NVML (a library handle and nvmlInit of its
// own). CreateInstance maps the profile name to NVML's profile id through
// the GPU's profile infos, creates the GPU instance at exactly `start`
// (nvmlDeviceCreateGpuInstanceWithPlacement), then one compute instance
// spanning it (the compute-instance profile with the GPU instance's slice
// count, shared engines); if that fails the GPU instance is destroyed
// again. NVML's INSUFFICIENT_RESOURCES (slices taken) and NOT_SUPPORTED
// (MIG off) are FailedPrecondition, NO_PERMISSION PermissionDenied.
// DestroyInstance destroys the compute instances, then the GPU instance.
// Unimplemented when the driver lacks the MIG calls.
absl::StatusOr<std::unique_ptr<MigControl>> OpenNvmlMigControl(
    const NvmlSourceOptions& options);

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_NVML_SOURCE_H_
