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
                    ";");
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

VerdictMemory::PodVerdicts& VerdictMemory::ForPod(const std::string& uid,
                                                  const std::string& shape) {
  size_t verdicts = 0;
  for (const auto& [other, pod] : pods_) verdicts += pod.verdicts.size();
  if (verdicts > kMaxPodVerdicts) {
    absl::erase_if(pods_,
                   [&](const auto& entry) { return entry.first != uid; });
  }
  auto it = pods_.find(uid);
  if (it == pods_.end()) {
    if (pods_.size() >= kMaxPods) pods_.clear();
    it = pods_.emplace(uid, Pod{shape, {}}).first;
  } else if (it->second.shape != shape) {
    it->second = Pod{shape, {}};
  }
  return it->second.verdicts;
}

VerdictMemory::PodVerdicts* VerdictMemory::FindPod(absl::string_view uid) {
  auto it = pods_.find(uid);
  return it == pods_.end() ? nullptr : &it->second.verdicts;
}

VerdictMemory::ShapeVerdicts& VerdictMemory::ForShape(
    const std::string& shape) {
  if (shapes_.size() >= kMaxShapes && !shapes_.contains(shape)) {
    shapes_.clear();
  }
  return shapes_[shape];
}

void VerdictMemory::ForgetPod(absl::string_view uid) { pods_.erase(uid); }

}  // namespace deviceshare::internal
