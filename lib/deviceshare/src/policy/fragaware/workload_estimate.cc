#include "deviceshare/policy/fragaware/workload_estimate.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_join.h"
#include "deviceshare/policy/fgd/frag_memo.h"

namespace deviceshare {
namespace {

constexpr int32_t kWholeGpuMilli = 1000;
// Seen uids kept before the set starts over: a pod counted twice after
// that many others is noise, an unbounded set in a long-lived extender is
// not.
constexpr size_t kMostRememberedUids = size_t{1} << 20;

int32_t PerGpuMilli(const ContainerRequest& container) {
  if (container.exclusive()) return kWholeGpuMilli;
  const int32_t percent = std::max(container.cores, container.memory_percent);
  if (percent > 0) return std::min(kWholeGpuMilli, percent * 10);
  if (container.memory_mib > 0) return kMemoryOnlyShareMilli;
  return kWholeGpuMilli;  // neither named: the whole card (memory 0 = all)
}

// What a pod's app containers ask of GPUs: the largest milli of one GPU
// and the GPUs in all.
struct GpuAsk {
  int32_t milli = 0;
  int32_t count = 0;
};

GpuAsk GpuAskOf(const PodRequest& pod) {
  GpuAsk ask;
  for (const ContainerRequest& container : pod.containers) {
    if (container.is_init || !container.wants_gpu()) continue;
    ask.milli = std::max(ask.milli, PerGpuMilli(container));
    ask.count += container.gpu_count;
  }
  return ask;
}

int32_t SingleShareOf(const GpuAsk& ask) {
  return ask.count == 1 && ask.milli < kWholeGpuMilli ? ask.milli : 0;
}

}  // namespace

WorkloadShape ShapeOfPod(const PodRequest& pod) {
  const GpuAsk ask = GpuAskOf(pod);
  WorkloadShape shape;
  shape.cpu_milli = pod.cpu_milli;
  shape.gpu_milli = ask.milli;
  shape.gpu_count = ask.count;
  if (shape.gpu_count > 0) shape.models = pod.use_models;
  return shape;
}

int32_t SingleShareMilli(const PodRequest& pod) {
  return SingleShareOf(GpuAskOf(pod));
}

std::string MigProfileOfPod(const PodRequest& pod) {
  for (const ContainerRequest& container : pod.containers) {
    if (container.is_init || !container.wants_gpu()) continue;
    if (!container.mig_profile.empty()) return container.mig_profile;
  }
  return "";
}

std::shared_ptr<const WorkloadSnapshot> MakeWorkloadSnapshot(
    std::vector<WorkloadShape> shapes, WeighShapes weigh) {
  std::vector<std::string> no_profiles(shapes.size());
  auto plan = std::make_shared<const FillPlan>(FillPlan::Of(shapes));
  if (weigh != nullptr) shapes = weigh(std::move(shapes));
  return std::make_shared<const WorkloadSnapshot>(
      WorkloadSnapshot{fgd::NewWorkloadId(), std::move(shapes),
                       std::move(no_profiles), std::move(plan)});
}

WorkloadEstimate::WorkloadEstimate(Weigh weigh)
    : weigh_(weigh),
      snapshot_(std::make_shared<const WorkloadSnapshot>(
          WorkloadSnapshot{fgd::NewWorkloadId(), {}})),
      snapshot_id_(snapshot_->id) {}

void WorkloadEstimate::Observe(const PodRequest& pod) {
  std::string uid = pod.uid.empty() ? pod.Key() : pod.uid;
  WorkloadShape shape = ShapeOfPod(pod);
  Key key{shape.cpu_milli, shape.gpu_milli, shape.gpu_count,
          absl::StrJoin(shape.models, "|"), MigProfileOfPod(pod)};
  absl::MutexLock lock(&mu_);
  if (seen_.size() >= kMostRememberedUids) seen_.clear();
  if (!seen_.insert(std::move(uid)).second) return;
  const int32_t share = SingleShareOf({shape.gpu_milli, shape.gpu_count});
  if (share > 0 && std::get<4>(key).empty()) {
    auto [needs, first] = share_needs_.try_emplace(
        share, FillPlan::Needs{pod.cpu_milli, pod.memory_mib});
    needs->second.cpu_milli = std::min(needs->second.cpu_milli, pod.cpu_milli);
    needs->second.memory_mib =
        std::min(needs->second.memory_mib, pod.memory_mib);
  }
  auto [it, added] = counts_.try_emplace(std::move(key), std::move(shape), 0);
  ++it->second.second;
  ++total_;
  if (total_ >= next_rebuild_) RebuildLocked();
}

std::vector<WorkloadShape> WorkloadEstimate::Weighed(
    std::vector<WorkloadShape> shapes) const {
  return weigh_ != nullptr ? weigh_(std::move(shapes)) : shapes;
}

void WorkloadEstimate::RebuildLocked() {
  // fgd::TypicalPodsOf at 100 % popularity, with the MIG profile as a
  // fifth part of the key: every shape, most pods first, equal counts the
  // larger key first (the profile last, so shapes naming none keep fgd's
  // order), each with its count over all pods.
  std::vector<const std::pair<const Key, std::pair<WorkloadShape, int64_t>>*>
      order;
  order.reserve(counts_.size());
  for (const auto& entry : counts_) order.push_back(&entry);
  std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    if (a->second.second != b->second.second) {
      return a->second.second > b->second.second;
    }
    return a->first > b->first;
  });
  std::vector<WorkloadShape> shapes;
  std::vector<std::string> profiles;
  shapes.reserve(order.size());
  profiles.reserve(order.size());
  for (const auto* entry : order) {
    WorkloadShape shape = entry->second.first;
    shape.share =
        static_cast<double>(entry->second.second) / static_cast<double>(total_);
    shapes.push_back(std::move(shape));
    profiles.push_back(std::get<4>(entry->first));
  }
  if (total_ >= next_plan_) {
    // The plan is re-made as the count grows by a quarter (at every one of
    // the first 16 pods): a mix that has settled plans the same fillings,
    // and a plan costs a thousand GPUs packed.
    std::vector<WorkloadShape> plain;  // MIG profiles are not planned
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (profiles[i].empty()) plain.push_back(shapes[i]);
    }
    plan_ = std::make_shared<const FillPlan>(FillPlan::Of(plain, share_needs_));
    next_plan_ = total_ < 16 ? total_ + 1 : total_ + total_ / 4;
  }
  snapshot_ = std::make_shared<const WorkloadSnapshot>(
      WorkloadSnapshot{fgd::NewWorkloadId(), Weighed(std::move(shapes)),
                       std::move(profiles), plan_});
  snapshot_id_.store(snapshot_->id, std::memory_order_release);
  next_rebuild_ = total_ < 16 ? total_ + 1 : total_ + total_ / 16;
}

std::shared_ptr<const WorkloadSnapshot> WorkloadEstimate::Snapshot() const {
  absl::MutexLock lock(&mu_);
  return snapshot_;
}

int64_t WorkloadEstimate::pods_counted() const {
  absl::MutexLock lock(&mu_);
  return total_;
}

}  // namespace deviceshare
