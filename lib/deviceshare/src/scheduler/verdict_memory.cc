#include "verdict_memory.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace deviceshare::internal {

std::string ShapeKey(const PodRequest& request) {
  std::string key = GpuShapeKey(request);
  absl::StrAppend(&key, "|", request.cpu_milli, "|", request.memory_mib);
  return key;
}

std::string GpuShapeKey(const PodRequest& request) {
  std::string key;
  for (const ContainerRequest& c : request.containers) {
    absl::StrAppend(&key, c.is_init ? "i" : "a", c.gpu_count, ",", c.memory_mib,
                    ",", c.memory_percent, ",", c.cores, ",", c.mig_profile,
                    ",", c.count_resource, ";");
  }
  absl::StrAppend(
      &key, "|", request.mode ? SharingModeName(*request.mode) : "", "|",
      request.modes_text, "|", absl::StrJoin(request.use_models, ","), "|",
      absl::StrJoin(request.avoid_models, ","), "|",
      absl::StrJoin(request.use_uuids, ","), "|",
      absl::StrJoin(request.avoid_uuids, ","), "|", request.numa_bind, "|",
      request.spread_group, "|", request.group_key, "|",
      request.node_policy.value_or(""), "|", request.gpu_policy.value_or(""),
      "|", request.scoring_weights.value_or(""));
  return key;
}

uint64_t ScoresVersion(const PolicySet& policies, const PodCycle& cycle) {
  // A policy made for the pod alone does not answer for its parts.
  const uint64_t gpu = cycle.own_gpu_policy != nullptr
                           ? policies.ScoresVersion()
                           : cycle.placement.gpu_policy->scores_version();
  return cycle.placement.node_policy->scores_version() + gpu;
}

VerdictMemory::PodVerdicts& VerdictMemory::ForPod(const std::string& uid,
                                                  const std::string& shape,
                                                  uint64_t scores_version) {
  size_t verdicts = 0;
  for (const auto& [other, pod] : pods_) verdicts += pod.verdicts.size();
  if (verdicts > kMaxPodVerdicts) {
    absl::erase_if(pods_,
                   [&](const auto& entry) { return entry.first != uid; });
  }
  auto it = pods_.find(uid);
  if (it == pods_.end()) {
    if (pods_.size() >= kMaxPods) pods_.clear();
    it = pods_.emplace(uid, Pod{shape, scores_version, {}}).first;
  } else if (it->second.shape != shape ||
             it->second.scores_version != scores_version) {
    it->second = Pod{shape, scores_version, {}};
  }
  return it->second.verdicts;
}

VerdictMemory::PodVerdicts* VerdictMemory::FindPod(absl::string_view uid,
                                                   uint64_t scores_version) {
  auto it = pods_.find(uid);
  if (it == pods_.end() || it->second.scores_version != scores_version) {
    return nullptr;
  }
  return &it->second.verdicts;
}

VerdictMemory::ShapeVerdicts& VerdictMemory::ForShape(const std::string& shape,
                                                      uint64_t scores_version) {
  if (shapes_.size() >= kMaxShapes && !shapes_.contains(shape)) {
    shapes_.clear();
  }
  Shape& remembered = shapes_[shape];
  if (remembered.scores_version != scores_version) {
    remembered = Shape{scores_version, {}};
  }
  return remembered.verdicts;
}

void VerdictMemory::ForgetPod(absl::string_view uid) { pods_.erase(uid); }

}  // namespace deviceshare::internal
