// File: model/reason_code.h
//
// ReasonCode: why a pod does not fit a GPU or a node, machine-readable.
// "Does not fit" is not an error: it is a verdict with a reason code and
// the numbers behind it. Reason strings always start with the CamelCase
// code name, e.g.
//   InsufficientMemory gpu=GPU-ab12 free=2048MiB want=4096MiB
//
// The set is open: the core defines the generic codes below, and each
// backend defines the codes of its own mode next to it (the mig backend's
// MigNoSlot, the mps backend's MpsClientsExhausted) as a constant
// ReasonInfo. A code is a pointer to its ReasonInfo: cheap to copy and
// compare, and its name and properties travel with it.
//
// Thread safety: value type over immutable constants.
#ifndef DEVICESHARE_MODEL_REASON_CODE_H_
#define DEVICESHARE_MODEL_REASON_CODE_H_

#include "absl/strings/string_view.h"

namespace deviceshare {

// What one reason code is. Define it once, as an `inline constexpr`
// constant, and make codes of it with ReasonCode(info).
struct ReasonInfo {
  // CamelCase; every reason text of the code starts with it.
  const char* name;
  // Where the code sorts among codes (tallies break ties to the lower, and
  // listings follow it), and its identity: unique per code. The core's
  // codes keep the numbers they had when the set was closed, so that
  // nothing printed changed; a backend picks unused numbers (mps 11, mig
  // 12-14, DRA 22-25; the core leaves 30-99 free for itself, 100 and up to
  // others). ReasonCodeTest.EveryOrderIsUnique holds them apart.
  int order;
  // Making room on the node (preempting pods) would not help: the node or
  // its GPUs can never serve the pod (kube-scheduler's
  // UnschedulableAndUnresolvable).
  bool unresolvable;
};

namespace reasons {
// clang-format off
inline constexpr ReasonInfo kFits{"Fits", 0, false};
// Per GPU.
inline constexpr ReasonInfo kGpuUnhealthy{"GpuUnhealthy", 1, true};
// The GPU runs another sharing mode (or MIG and other shares would mix).
inline constexpr ReasonInfo kModeMismatch{"ModeMismatch", 2, true};
inline constexpr ReasonInfo kTypeMismatch{"TypeMismatch", 3, true};  // model allow/deny list
inline constexpr ReasonInfo kUuidMismatch{"UuidMismatch", 4, true};  // uuid allow/deny list
inline constexpr ReasonInfo kSplitExhausted{"SplitExhausted", 5, false};  // tenants == split count
inline constexpr ReasonInfo kInsufficientMemory{"InsufficientMemory", 6, false};
inline constexpr ReasonInfo kInsufficientCores{"InsufficientCores", 7, false};
// cores=100 wants an empty GPU, or the GPU is held exclusively.
inline constexpr ReasonInfo kExclusiveConflict{"ExclusiveConflict", 8, false};
// All SM share is taken; a 0-core tenant would not run.
inline constexpr ReasonInfo kComputeExhausted{"ComputeExhausted", 9, false};
// A container gets each GPU at most once.
inline constexpr ReasonInfo kAlreadyOnGpu{"AlreadyOnGpu", 10, false};
// The memory slices of a hardware partition (a MIG instance) are taken.
inline constexpr ReasonInfo kPartitionTaken{"PartitionTaken", 21, false};
// A pod of the same podgroup holds the GPU and the pod asks its group to be
// spread (Volcano's volcano.sh/vgpu-podgroup-policy: spread).
inline constexpr ReasonInfo kGroupOnGpu{"GroupOnGpu", 26, false};
// The node's hami.io/device-cordon lists the GPU.
inline constexpr ReasonInfo kGpuCordoned{"GpuCordoned", 27, true};
// Per pod: the namespace's GPU quota (a ResourceQuota's limits.<gpu
// resource>, model/gpu_quota.h) would be exceeded; pods of the namespace
// leaving would make room.
inline constexpr ReasonInfo kQuotaExceeded{"QuotaExceeded", 28, false};
// Per node.
inline constexpr ReasonInfo kNoGpus{"NoGpus", 15, true};  // node registered no GPU
// Fewer usable GPUs than the container wants.
inline constexpr ReasonInfo kInsufficientGpus{"InsufficientGpus", 16, false};
// numa-bind: no NUMA node has enough usable GPUs.
inline constexpr ReasonInfo kNumaNotFit{"NumaNotFit", 17, false};
inline constexpr ReasonInfo kInsufficientCpu{"InsufficientCpu", 18, false};
inline constexpr ReasonInfo kInsufficientNodeMemory{"InsufficientNodeMemory", 19, false};
inline constexpr ReasonInfo kNodeUnknown{"NodeUnknown", 20, true};  // not in the cluster state
// The node's allocatable advertises GPU count resources, but not the one
// the pod asks by: kubelet would admit the pod there without calling any
// device plugin, and it would run without its share.
inline constexpr ReasonInfo kResourceNotServed{"ResourceNotServed", 29, true};
// clang-format on
}  // namespace reasons

class ReasonCode {
 public:
  // Fits.
  constexpr ReasonCode() : info_(&reasons::kFits) {}
  constexpr explicit ReasonCode(const ReasonInfo& info) : info_(&info) {}

  absl::string_view name() const { return info_->name; }
  int order() const { return info_->order; }
  bool unresolvable() const { return info_->unresolvable; }

  // The same code: the same ReasonInfo, or one with the same order. Each
  // is an inline constant, usually one object per program, so comparing
  // codes mostly reads no memory (the filter compares codes for every GPU
  // it looks at). But a shared library built with hidden visibility (the
  // C API's libdeviceshare_c.so beside a shared libdeviceshare_core.so)
  // keeps copies of its own, so the order, unique per code, decides.
  friend bool operator==(ReasonCode a, ReasonCode b) {
    return a.info_ == b.info_ || a.info_->order == b.info_->order;
  }
  friend bool operator!=(ReasonCode a, ReasonCode b) { return !(a == b); }
  // By order (unique per code).
  friend bool operator<(ReasonCode a, ReasonCode b) {
    return a.info_->order < b.info_->order;
  }

  // The core's codes (see namespace reasons above).
  static const ReasonCode kFits;
  static const ReasonCode kGpuUnhealthy;
  static const ReasonCode kModeMismatch;
  static const ReasonCode kTypeMismatch;
  static const ReasonCode kUuidMismatch;
  static const ReasonCode kSplitExhausted;
  static const ReasonCode kInsufficientMemory;
  static const ReasonCode kInsufficientCores;
  static const ReasonCode kExclusiveConflict;
  static const ReasonCode kComputeExhausted;
  static const ReasonCode kAlreadyOnGpu;
  static const ReasonCode kPartitionTaken;
  static const ReasonCode kGroupOnGpu;
  static const ReasonCode kGpuCordoned;
  static const ReasonCode kQuotaExceeded;
  static const ReasonCode kNoGpus;
  static const ReasonCode kInsufficientGpus;
  static const ReasonCode kNumaNotFit;
  static const ReasonCode kInsufficientCpu;
  static const ReasonCode kInsufficientNodeMemory;
  static const ReasonCode kNodeUnknown;
  static const ReasonCode kResourceNotServed;

 private:
  const ReasonInfo* info_;
};

inline constexpr ReasonCode ReasonCode::kFits{reasons::kFits};
inline constexpr ReasonCode ReasonCode::kGpuUnhealthy{reasons::kGpuUnhealthy};
inline constexpr ReasonCode ReasonCode::kModeMismatch{reasons::kModeMismatch};
inline constexpr ReasonCode ReasonCode::kTypeMismatch{reasons::kTypeMismatch};
inline constexpr ReasonCode ReasonCode::kUuidMismatch{reasons::kUuidMismatch};
inline constexpr ReasonCode ReasonCode::kSplitExhausted{
    reasons::kSplitExhausted};
inline constexpr ReasonCode ReasonCode::kInsufficientMemory{
    reasons::kInsufficientMemory};
inline constexpr ReasonCode ReasonCode::kInsufficientCores{
    reasons::kInsufficientCores};
inline constexpr ReasonCode ReasonCode::kExclusiveConflict{
    reasons::kExclusiveConflict};
inline constexpr ReasonCode ReasonCode::kComputeExhausted{
    reasons::kComputeExhausted};
inline constexpr ReasonCode ReasonCode::kAlreadyOnGpu{reasons::kAlreadyOnGpu};
inline constexpr ReasonCode ReasonCode::kPartitionTaken{
    reasons::kPartitionTaken};
inline constexpr ReasonCode ReasonCode::kGroupOnGpu{reasons::kGroupOnGpu};
inline constexpr ReasonCode ReasonCode::kGpuCordoned{reasons::kGpuCordoned};
inline constexpr ReasonCode ReasonCode::kQuotaExceeded{reasons::kQuotaExceeded};
inline constexpr ReasonCode ReasonCode::kNoGpus{reasons::kNoGpus};
inline constexpr ReasonCode ReasonCode::kInsufficientGpus{
    reasons::kInsufficientGpus};
inline constexpr ReasonCode ReasonCode::kNumaNotFit{reasons::kNumaNotFit};
inline constexpr ReasonCode ReasonCode::kInsufficientCpu{
    reasons::kInsufficientCpu};
inline constexpr ReasonCode ReasonCode::kInsufficientNodeMemory{
    reasons::kInsufficientNodeMemory};
inline constexpr ReasonCode ReasonCode::kNodeUnknown{reasons::kNodeUnknown};
inline constexpr ReasonCode ReasonCode::kResourceNotServed{
    reasons::kResourceNotServed};

// "InsufficientMemory", ...: code.name().
inline absl::string_view ReasonCodeName(ReasonCode code) { return code.name(); }

}  // namespace deviceshare

#endif  // DEVICESHARE_MODEL_REASON_CODE_H_
