#include "deviceshare/model/reason_code.h"

namespace deviceshare {

absl::string_view ReasonCodeName(ReasonCode code) {
  switch (code) {
    case ReasonCode::kFits:
      return "Fits";
    case ReasonCode::kGpuUnhealthy:
      return "GpuUnhealthy";
    case ReasonCode::kModeMismatch:
      return "ModeMismatch";
    case ReasonCode::kTypeMismatch:
      return "TypeMismatch";
    case ReasonCode::kUuidMismatch:
      return "UuidMismatch";
    case ReasonCode::kSplitExhausted:
      return "SplitExhausted";
    case ReasonCode::kInsufficientMemory:
      return "InsufficientMemory";
    case ReasonCode::kInsufficientCores:
      return "InsufficientCores";
    case ReasonCode::kExclusiveConflict:
      return "ExclusiveConflict";
    case ReasonCode::kComputeExhausted:
      return "ComputeExhausted";
    case ReasonCode::kAlreadyOnGpu:
      return "AlreadyOnGpu";
    case ReasonCode::kMpsClientsExhausted:
      return "MpsClientsExhausted";
    case ReasonCode::kMigUnknownModel:
      return "MigUnknownModel";
    case ReasonCode::kMigNoProfile:
      return "MigNoProfile";
    case ReasonCode::kMigNoSlot:
      return "MigNoSlot";
    case ReasonCode::kNoGpus:
      return "NoGpus";
    case ReasonCode::kInsufficientGpus:
      return "InsufficientGpus";
    case ReasonCode::kNumaNotFit:
      return "NumaNotFit";
    case ReasonCode::kInsufficientCpu:
      return "InsufficientCpu";
    case ReasonCode::kInsufficientNodeMemory:
      return "InsufficientNodeMemory";
    case ReasonCode::kNodeUnknown:
      return "NodeUnknown";
  }
  return "Unknown";
}

}  // namespace deviceshare
