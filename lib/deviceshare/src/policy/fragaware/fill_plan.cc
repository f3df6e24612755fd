#include "deviceshare/policy/fragaware/fill_plan.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <utility>

namespace deviceshare {
namespace {

// The plan packs this many GPUs' worth of the mix, or fewer where that
// would take more than kMostPlannedPods pods (a mix of tiny shares): enough
// that a size with a thousandth of the GPU demand still has a pod in it.
constexpr double kPlannedGpus = 1000;
constexpr double kMostPlannedPods = 4000;

bool IsSingleShare(const WorkloadShape& shape) {
  return shape.gpu_count == 1 && shape.gpu_milli > 0 &&
         shape.gpu_milli < FillPlan::kGpuMilli && shape.share > 0;
}

// How many pods of each size to plan, largest size first: each in
// proportion to its share of the pods.
std::vector<std::pair<int32_t, int64_t>> PodsToPlan(
    absl::Span<const WorkloadShape> shapes) {
  std::map<int32_t, double, std::greater<>> share_of_size;
  double milli = 0;
  double pods = 0;
  for (const WorkloadShape& shape : shapes) {
    if (!IsSingleShare(shape)) continue;
    share_of_size[shape.gpu_milli] += shape.share;
    milli += shape.share * shape.gpu_milli;
    pods += shape.share;
  }
  if (milli <= 0) return {};
  const double scale = std::min(kPlannedGpus * FillPlan::kGpuMilli / milli,
                                kMostPlannedPods / pods);
  std::vector<std::pair<int32_t, int64_t>> sizes;
  for (const auto& [size, share] : share_of_size) {
    sizes.emplace_back(size, std::llround(share * scale));
  }
  return sizes;
}

// Best fit decreasing: each pod, largest first, to the GPU it leaves the
// least room on, a new GPU where none has room. GPUs are kept by the milli
// they have left, with the set of rooms some GPU has.
FillPlan::Fillings PackBestFitDecreasing(
    absl::Span<const std::pair<int32_t, int64_t>> sizes) {
  std::vector<std::vector<int32_t>> gpus;
  std::vector<std::vector<size_t>> with_room(FillPlan::kGpuMilli + 1);
  std::set<int32_t> rooms;  // those with_room has GPUs for, below a GPU
  for (const auto& [size, count] : sizes) {
    for (int64_t n = 0; n < count; ++n) {
      const auto fits = rooms.lower_bound(size);
      size_t gpu = gpus.size();
      int32_t room = FillPlan::kGpuMilli;
      if (fits == rooms.end()) {
        gpus.emplace_back();
      } else {
        room = *fits;
        gpu = with_room[room].back();
        with_room[room].pop_back();
        if (with_room[room].empty()) rooms.erase(fits);
      }
      gpus[gpu].push_back(size);
      with_room[room - size].push_back(gpu);
      rooms.insert(room - size);
    }
  }
  FillPlan::Fillings fillings;
  for (std::vector<int32_t>& shares : gpus) ++fillings[std::move(shares)];
  return fillings;
}

}  // namespace

FillPlan FillPlan::Of(absl::Span<const WorkloadShape> shapes,
                      const std::map<int32_t, Needs>& needs_by_size) {
  std::map<int32_t, Needs> needs = needs_by_size;
  for (const WorkloadShape& shape : shapes) {
    if (!IsSingleShare(shape) || needs_by_size.contains(shape.gpu_milli)) {
      continue;
    }
    auto [it, added] =
        needs.try_emplace(shape.gpu_milli, Needs{shape.cpu_milli, 0});
    it->second.cpu_milli = std::min(it->second.cpu_milli, shape.cpu_milli);
  }
  return FillPlan(PackBestFitDecreasing(PodsToPlan(shapes)), needs);
}

FillPlan::FillPlan(Fillings fillings,
                   const std::map<int32_t, Needs>& needs_by_size)
    : fillings_(std::move(fillings)) {
  for (const auto& [shares, count] : fillings_) {
    for (size_t i = 0; i < shares.size(); ++i) {
      if (i > 0 && shares[i] == shares[i - 1]) continue;  // done already
      // Sums of the other shares, each taken or not.
      Levels held;
      held.set(0);
      for (size_t j = 0; j < shares.size(); ++j) {
        if (j != i) held |= held << shares[j];
      }
      levels_[shares[i]] |= held;
    }
  }
  if (levels_.empty()) return;
  partners_.resize(kGpuMilli + 1);
  for (const auto& [size, levels] : levels_) {
    const auto needs = needs_by_size.find(size);
    for (int32_t used = 0; used <= kGpuMilli; ++used) {
      if (!levels.test(used)) continue;
      partners_[used].push_back(needs != needs_by_size.end() ? needs->second
                                                             : Needs{});
    }
  }
}

bool FillPlan::PartnerFits(int32_t used_milli, int64_t cpu_milli_left,
                           int64_t memory_mib_left) const {
  if (used_milli < 0 || used_milli > kGpuMilli || partners_.empty()) {
    return true;
  }
  const std::vector<Needs>& partners = partners_[used_milli];
  if (partners.empty()) return true;
  for (const Needs& needs : partners) {
    if (needs.cpu_milli <= cpu_milli_left &&
        needs.memory_mib <= memory_mib_left) {
      return true;
    }
  }
  return false;
}

bool FillPlan::Planned(int32_t used_milli, int32_t share_milli) const {
  if (used_milli < 0 || used_milli > kGpuMilli) return false;
  const auto it = levels_.find(share_milli);
  return it != levels_.end() && it->second.test(used_milli);
}

}  // namespace deviceshare
