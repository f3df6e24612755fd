#include "deviceshare/policy/fragaware/fill_plan.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
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

// The most of `room` that shares of `counts` (at most that many of each
// size) can fill, as those shares: a bounded subset sum over the milli,
// each total reached first kept with the size that reached it.
std::vector<int32_t> FullestSubset(int32_t room,
                                   const std::map<int32_t, int64_t>& counts) {
  std::vector<int32_t> reached_by(room + 1, 0);  // 0: not reached
  std::vector<int64_t> copies(room + 1, 0);      // of the pass's size
  reached_by[0] = -1;
  for (const auto& [size, count] : counts) {
    if (count <= 0) continue;
    std::fill(copies.begin(), copies.end(), 0);
    for (int32_t total = size; total <= room; ++total) {
      const int32_t from = total - size;
      if (reached_by[total] != 0 || reached_by[from] == 0) continue;
      if (reached_by[from] == size && copies[from] >= count) continue;
      reached_by[total] = size;
      copies[total] = reached_by[from] == size ? copies[from] + 1 : 1;
    }
  }
  int32_t total = room;
  while (reached_by[total] == 0) --total;
  std::vector<int32_t> shares;
  for (; total > 0; total -= reached_by[total]) {
    shares.push_back(reached_by[total]);
  }
  return shares;
}

// Minimum bin slack (Gupta and Ho's heuristic for bin packing): each GPU
// takes the largest share left and the subset of the others that fills it
// most. On the Alibaba traces' mixes its fillings steer placement as well
// as the packing LP's (bench/README.md), where best fit decreasing puts
// each 320 beside a 550 and leaves the 230s and 220s to GPUs of their own
// instead of making 550 + 230 + 220. A filling is repeated while its
// shares last, since the same subset is then still the fullest.
FillPlan::Fillings PackMinimumSlack(
    absl::Span<const std::pair<int32_t, int64_t>> sizes) {
  std::map<int32_t, int64_t> left;
  for (const auto& [size, count] : sizes) {
    if (count > 0) left[size] += count;
  }
  FillPlan::Fillings fillings;
  while (!left.empty()) {
    const int32_t largest = left.rbegin()->first;
    --left[largest];
    std::vector<int32_t> filling =
        FullestSubset(FillPlan::kGpuMilli - largest, left);
    ++left[largest];
    filling.push_back(largest);
    std::sort(filling.begin(), filling.end(), std::greater<>());
    std::map<int32_t, int64_t> takes;
    for (const int32_t share : filling) ++takes[share];
    int64_t times = std::numeric_limits<int64_t>::max();
    for (const auto& [share, n] : takes) {
      times = std::min(times, left[share] / n);
    }
    // At least once (the subset fits what is left beside the largest);
    // never loop on a filling that cannot be made.
    if (times <= 0) break;
    for (const auto& [share, n] : takes) {
      if ((left[share] -= n * times) == 0) left.erase(share);
    }
    fillings[std::move(filling)] += times;
  }
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
  return FillPlan(PackMinimumSlack(PodsToPlan(shapes)), needs);
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

bool FillPlan::PartnerFits(int32_t used_milli, const HostRoom& room) const {
  if (used_milli < 0 || used_milli > kGpuMilli || partners_.empty()) {
    return true;
  }
  const std::vector<Needs>& partners = partners_[used_milli];
  return partners.empty() ||
         std::any_of(partners.begin(), partners.end(), [&](const Needs& n) {
           return room.Holds(n.cpu_milli, n.memory_mib);
         });
}

bool FillPlan::Planned(int32_t used_milli, int32_t share_milli) const {
  if (used_milli < 0 || used_milli > kGpuMilli) return false;
  const auto it = levels_.find(share_milli);
  return it != levels_.end() && it->second.test(used_milli);
}

}  // namespace deviceshare
