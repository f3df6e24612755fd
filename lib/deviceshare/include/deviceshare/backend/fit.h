// File: backend/fit.h
//
// The verdicts of a fit check. "Does not fit" is not an error: it is a
// verdict with a machine-readable reason code and the numbers behind it,
// per node and per GPU, e.g.
//   InsufficientMemory gpu=GPU-ab12 free=2048MiB want=4096MiB
// Reason strings always start with the CamelCase code name.
#ifndef DEVICESHARE_BACKEND_FIT_H_
#define DEVICESHARE_BACKEND_FIT_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "deviceshare/model/pod_allocation.h"

namespace deviceshare {

enum class ReasonCode {
  kFits,
  // Per GPU.
  kGpuUnhealthy,
  kModeMismatch,    // GPU runs another sharing mode
  kTypeMismatch,    // model allow/deny list
  kUuidMismatch,    // uuid allow/deny list
  kSplitExhausted,  // tenants == split count
  kInsufficientMemory,
  kInsufficientCores,
  kExclusiveConflict,    // cores=100 wants an empty GPU, or a GPU is held
  kComputeExhausted,     // all SM share taken; a 0-core tenant won't run
  kAlreadyOnGpu,         // a container gets each GPU at most once
  kMpsClientsExhausted,  // an MPS server takes at most 48 clients
  kMigUnknownModel,      // no MIG profile table for the GPU's model
  kMigNoProfile,         // no allowed MIG profile is large enough
  kMigNoSlot,            // no free legal start (or geometry position) left
  // Per node.
  kNoGpus,            // node registered no GPU
  kInsufficientGpus,  // fewer usable GPUs than the container wants
  kNumaNotFit,        // numa-bind: no NUMA node has enough usable GPUs
  kInsufficientCpu,
  kInsufficientNodeMemory,
  kNodeUnknown,  // not in the cluster state
};

// "InsufficientMemory", ...
absl::string_view ReasonCodeName(ReasonCode code);

// Why one GPU cannot serve one container.
struct GpuVerdict {
  ReasonCode code = ReasonCode::kFits;
  int32_t gpu_index = -1;
  std::string detail;  // "free=2048MiB want=4096MiB"

  bool fits() const { return code == ReasonCode::kFits; }
};

// The verdict for one pod on one node. When it fits, `allocation` is the
// placement the backend would commit (node_name set); otherwise `code` and
// `message` say why, and `gpu_verdicts` holds each rejected GPU's reason for
// the container that failed.
struct NodeFit {
  ReasonCode code = ReasonCode::kFits;
  std::string message;
  std::vector<GpuVerdict> gpu_verdicts;
  PodAllocation allocation;

  bool fits() const { return code == ReasonCode::kFits; }
  // The message, or the code's name when the verdict carries none (an
  // unexplained one).
  std::string Reason() const {
    return message.empty() ? std::string(ReasonCodeName(code)) : message;
  }
};

}  // namespace deviceshare

#endif  // DEVICESHARE_BACKEND_FIT_H_
