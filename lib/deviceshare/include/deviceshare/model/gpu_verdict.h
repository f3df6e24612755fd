// File: model/gpu_verdict.h
//
// GpuVerdict: whether one GPU can serve one container, and if not, why
// (a ReasonCode and the numbers). DeviceLedger::CheckPod returns it.
#ifndef DEVICESHARE_MODEL_GPU_VERDICT_H_
#define DEVICESHARE_MODEL_GPU_VERDICT_H_

#include <cstdint>
#include <string>

#include "deviceshare/model/reason_code.h"

namespace deviceshare {

// Why one GPU cannot serve one container.
struct GpuVerdict {
  ReasonCode code = ReasonCode::kFits;
  int32_t gpu_index = -1;
  std::string detail;  // "free=2048MiB want=4096MiB"

  bool fits() const { return code == ReasonCode::kFits; }
};

}  // namespace deviceshare

#endif  // DEVICESHARE_MODEL_GPU_VERDICT_H_
