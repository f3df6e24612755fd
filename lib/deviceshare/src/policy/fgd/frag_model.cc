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
  for (int32_t left : node.gpu_milli_left) {
    if (left < pod.gpu_milli) unusable += left;
  }
  return unusable;
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
