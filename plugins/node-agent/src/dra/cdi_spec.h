// File: dra/cdi_spec.h
//
// The CDI spec (Container Device Interface, cdiVersion 0.6.0) the DRA
// driver writes for one prepared claim: one CDI device per GPU of the
// claim, holding its device node, and the claim-wide edits (environment,
// mounts, the control device nodes) in the spec's own containerEdits,
// which the runtime applies whenever a container gets any device of the
// spec. The claim-wide environment carries the per-GPU limits indexed by
// the order the container sees its GPUs (sorted by NVML index, with
// CUDA_DEVICE_ORDER=PCI_BUS_ID), so the index never depends on map order.
//
// Files are written to a temporary name and renamed, so a reader (the
// container runtime) never sees half a spec, and a repeat writes the same
// bytes to the same name.
//
// Thread safety: pure functions, and file writes of distinct claims.
#ifndef DEVICESHARE_AGENT_DRA_CDI_SPEC_H_
#define DEVICESHARE_AGENT_DRA_CDI_SPEC_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "deviceshare/backend/container_edits.h"
#include "nlohmann/json.hpp"

namespace deviceshare::agent {

inline constexpr char kCdiVersion[] = "0.6.0";

struct CdiGpuDevice {
  std::string name;         // "<claim uid>-gpu-0"
  std::string device_node;  // "/dev/nvidia0"
};

// "<driver>/claim", the CDI kind of every claim spec of `driver`.
std::string CdiKind(const std::string& driver);
// "<kind>=<name>", what kubelet passes to the runtime.
std::string CdiDeviceId(const std::string& driver, const std::string& name);
// "<cdi_dir>/<driver>-claim-<uid>.json".
std::string CdiSpecPath(const std::string& cdi_dir, const std::string& driver,
                        const std::string& claim_uid);

nlohmann::json CdiSpecJson(const std::string& driver,
                           const std::vector<CdiGpuDevice>& devices,
                           const ContainerEdits& claim_edits);

// Writes `text` to `path` through a temporary file in the same folder and a
// rename; creates the folder.
absl::Status WriteFileAtomically(const std::string& path,
                                 const std::string& text);

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_DRA_CDI_SPEC_H_
