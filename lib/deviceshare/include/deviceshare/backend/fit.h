// File: backend/fit.h
//
// NodeFit: the verdict of a backend's fit check for one pod on one node.
// "Does not fit" is not an error: it is a verdict with a machine-readable
// reason code (model/reason_code.h) and the numbers behind it, per node and
// per GPU (model/gpu_verdict.h).
#ifndef DEVICESHARE_BACKEND_FIT_H_
#define DEVICESHARE_BACKEND_FIT_H_

#include <string>
#include <vector>

#include "deviceshare/model/gpu_verdict.h"
#include "deviceshare/model/pod_allocation.h"
#include "deviceshare/model/reason_code.h"

namespace deviceshare {

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
