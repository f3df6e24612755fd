#include "deviceshare/policy/fgd/frag_model.h"

#include <algorithm>
#include <limits>

#include "deviceshare/model/model_match.h"

namespace deviceshare::fgd {

bool ModelAccepts(absl::Span<const std::string> pod_models,
                  const std::string& node_model) {
  bool names_any = false;
  for (const std::string& model : pod_models) {
    if (model.empty()) continue;
    names_any = true;
    if (ModelNames(node_model, model)) return true;
  }
  // A pod naming models never fits a node without one (no GPUs).
  return !names_any;
}

namespace {

// Whether `pod.gpu_count` GPUs each have `pod.gpu_milli` left.
bool GpusFit(const FragNode& node, const TypicalPod& pod) {
  const auto enough =
      std::count_if(node.gpu_milli_left.begin(), node.gpu_milli_left.end(),
                    [&](int32_t left) { return left >= pod.gpu_milli; });
  return enough >= std::max(pod.gpu_count, 1);
}

// The milli of `fitting` (on GPUs each holding a pod of `pod`) that the
// pods of `pod` the node's CPU holds would not take; 0 when CPU does not
// count or holds enough. Kept in integers: untracked CPU is 2^60.
int64_t BeyondCpuReach(const FragNode& node, const TypicalPod& pod,
                       int64_t fitting) {
  if (!pod.counted_by_cpu || pod.cpu_milli <= 0 || fitting <= 0) return 0;
  const int64_t per_pod = int64_t{std::max(pod.gpu_count, 1)} * pod.gpu_milli;
  const int64_t pods_needed = (fitting + per_pod - 1) / per_pod;
  const int64_t pods_held = node.cpu_milli_left / pod.cpu_milli;
  return pods_held < pods_needed ? fitting - pods_held * per_pod : 0;
}

}  // namespace

FragClass Classify(const FragNode& node, const TypicalPod& pod) {
  const bool cpu_fits = node.cpu_milli_left >= pod.cpu_milli;
  if (pod.gpu_milli == 0) {
    return cpu_fits ? FragClass::kCpuOnlyFits : FragClass::kCpuOnlyLacksCpu;
  }
  if (!ModelAccepts(pod.models, node.model)) return FragClass::kNoAccess;
  if (GpusFit(node, pod)) {
    return cpu_fits ? FragClass::kSatisfied : FragClass::kLackCpu;
  }
  return cpu_fits ? FragClass::kLackGpu : FragClass::kLackBoth;
}

int64_t IdleMilli(const FragNode& node) {
  int64_t idle = 0;
  for (int32_t left : node.gpu_milli_left) idle += left;
  return idle;
}

int64_t FragMilliFor(const FragNode& node, const TypicalPod& pod) {
  if (Classify(node, pod) != FragClass::kSatisfied) return IdleMilli(node);
  int64_t unusable = 0;
  int64_t fitting = 0;
  for (int32_t left : node.gpu_milli_left) {
    (left < pod.gpu_milli ? unusable : fitting) += left;
  }
  return unusable + BeyondCpuReach(node, pod, fitting);
}

double FragMilli(const FragNode& node, absl::Span<const TypicalPod> workload) {
  double frag = 0;
  for (const TypicalPod& pod : workload) {
    frag += pod.share * static_cast<double>(FragMilliFor(node, pod));
  }
  return frag;
}

double FragGainBound(const FragNode& node,
                     absl::Span<const TypicalPod> workload, int64_t most_drop) {
  const int64_t drop = std::clamp<int64_t>(most_drop, 0, IdleMilli(node));
  double bound = 0;
  for (const TypicalPod& pod : workload) {
    if (!(pod.share >= 0)) return std::numeric_limits<double>::infinity();
    int64_t gain = drop;
    if (Classify(node, pod) == FragClass::kSatisfied) {
      gain = std::min(gain, FragMilliFor(node, pod));
    }
    bound += pod.share * static_cast<double>(gain);
  }
  return bound;
}

}  // namespace deviceshare::fgd
