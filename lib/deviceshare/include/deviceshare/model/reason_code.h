// File: model/reason_code.h
//
// ReasonCode: why a pod does not fit a GPU or a node, machine-readable.
// "Does not fit" is not an error: it is a verdict with a reason code and
// the numbers behind it. Reason strings always start with the CamelCase
// code name, e.g.
//   InsufficientMemory gpu=GPU-ab12 free=2048MiB want=4096MiB
#ifndef DEVICESHARE_MODEL_REASON_CODE_H_
#define DEVICESHARE_MODEL_REASON_CODE_H_

#include "absl/strings/string_view.h"

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

}  // namespace deviceshare

#endif  // DEVICESHARE_MODEL_REASON_CODE_H_
