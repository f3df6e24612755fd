#include "deviceshare/preemption/victim_search.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "deviceshare/status_macros.h"
#include "preemption/room_check.h"
#include "preemption/search_space.h"

namespace deviceshare::preemption {
namespace {

using internal::RoomCheck;
using internal::SearchSpace;
using internal::Victim;

// The pod's own share on the node it would get: its allocation's charge
// per GPU, in the unit of ShareMilli.
int64_t NeedMilli(const NodeState& node, const PodAllocation& allocation) {
  auto by_gpu = node.SharesByGpu(allocation);
  if (!by_gpu.ok()) return 0;
  int64_t milli = 0;
  for (const auto& [position, shares] : *by_gpu) {
    const PodCharge charge = ChargeOf(shares);
    milli += ShareMilli(charge.memory_mib, charge.cores,
                        node.inventory().gpus[position]);
  }
  return milli;
}

// The most GPUs a minimal set's victims can need, or 0 for no bound. A
// minimal set holds no victim it could do without. When the pod's GPUs
// come from one container, that container fits as soon as enough GPUs
// offer, so every victim sits on one of the (at most gpu_count) GPUs it
// takes; with the host short a victim may be there for its CPU or memory.
int32_t GpuBound(const PodRequest& pod, bool host_short) {
  if (host_short) return 0;
  int32_t bound = 0;
  int containers = 0;
  for (const ContainerRequest& container : pod.containers) {
    if (!container.wants_gpu()) continue;
    ++containers;
    bound = container.gpu_count;
  }
  return containers == 1 ? bound : 0;
}

// Where the victims chosen so far sit, for GpuBound: the GPUs they all
// share, and a greedy family of them with pairwise disjoint GPUs (no
// bound's worth of GPUs can serve more such victims than the family has).
struct Spread {
  uint64_t common = ~uint64_t{0};
  uint64_t packed = 0;
  int32_t disjoint = 0;

  Spread With(uint64_t gpu_mask) const {
    Spread next = *this;
    next.common &= gpu_mask;
    if ((packed & gpu_mask) == 0) {
      next.packed |= gpu_mask;
      ++next.disjoint;
    }
    return next;
  }
  bool Within(int32_t bound) const {
    if (bound == 0) return true;
    return disjoint <= bound && (bound > 1 || common != 0);
  }
};

// One search over one query's space: the sets by increasing size, cut by
// the order and the cheap conditions, each survivor tried through Filter.
class Searcher {
 public:
  Searcher(const DecisionPath& path, const BackendSet& backends,
           const PodCycle& cycle, const NodeState& node,
           const SearchSpace& space, const VictimBudget& budget)
      : path_(path),
        backends_(backends),
        cycle_(cycle),
        node_(node),
        space_(space),
        budget_(budget),
        room_(cycle.pod(), node, space.usable_mask),
        gpu_bound_(GpuBound(cycle.pod(), space.host_short)),
        group_taken_(space.group_left.size(), 0) {}

  VictimSet Run();

 private:
  // Filter on a copy of the node without `victims`; counts the call.
  NodeVerdict FilterWithout(absl::Span<const Victim* const> victims);
  bool OutOfBudget() const {
    return result_.filter_calls >= budget_.filter_calls ||
           result_.steps >= budget_.steps;
  }
  // Every set of `size` victims that extends chosen_, from victims[from].
  void Extend(size_t from, size_t size, const Spread& spread);
  void TrySet();
  // Whether a set whose key starts as (max_priority, freed) can still
  // beat the best: more victims only raise both.
  bool CanBeatBest(int32_t max_priority, int64_t freed) const;
  VictimSet NotFound(bool complete, std::string reason);

  const DecisionPath& path_;
  const BackendSet& backends_;
  const PodCycle& cycle_;
  const NodeState& node_;
  const SearchSpace& space_;
  const VictimBudget& budget_;
  const RoomCheck room_;
  const int32_t gpu_bound_;
  std::vector<int32_t> group_taken_;
  std::vector<const Victim*> chosen_;
  int32_t chosen_max_priority_ = std::numeric_limits<int32_t>::lowest();
  int64_t chosen_freed_ = 0;
  std::optional<VictimSetKey> best_;
  // The budget ran out before the search was done.
  bool stopped_ = false;
  VictimSet result_;
};

NodeVerdict Searcher::FilterWithout(absl::Span<const Victim* const> victims) {
  ++result_.filter_calls;
  if (victims.empty()) return path_.Filter(cycle_, node_, /*explain=*/false);
  // Released as ClusterState::RemovePod releases a pod on the ledger: every
  // backend (a share may carry its GPU's mode), then its host usage.
  NodeState copy = node_;
  for (const Victim* victim : victims) {
    for (const auto& backend : backends_.all()) {
      backend->Release(victim->uid(), copy);
    }
    copy.SubtractHostUsage(victim->record->request.cpu_milli,
                           victim->record->request.memory_mib);
  }
  return path_.Filter(cycle_, copy, /*explain=*/false);
}

bool Searcher::CanBeatBest(int32_t max_priority, int64_t freed) const {
  if (!best_) return true;
  return max_priority < best_->max_priority ||
         (max_priority == best_->max_priority && freed <= best_->freed_milli);
}

void Searcher::Extend(size_t from, size_t size, const Spread& spread) {
  const std::vector<Victim>& victims = space_.victims;
  if (chosen_.size() == size) {
    TrySet();
    return;
  }
  const size_t still = size - chosen_.size();
  for (size_t i = from; i + still <= victims.size(); ++i) {
    if (OutOfBudget()) {
      stopped_ = true;
      return;
    }
    ++result_.steps;
    const Victim& victim = victims[i];
    const Spread next = spread.With(victim.gpu_mask);
    if (!next.Within(gpu_bound_)) continue;
    if (victim.group >= 0 &&
        group_taken_[victim.group] == space_.group_left[victim.group]) {
      continue;
    }
    const int32_t max_priority =
        std::max(chosen_max_priority_, victim.priority);
    // Sorted by priority: every later victim raises the maximum as much.
    if (best_ && max_priority > best_->max_priority) return;
    if (!CanBeatBest(max_priority, chosen_freed_ + victim.freed_milli)) {
      continue;
    }
    const int32_t saved_priority = chosen_max_priority_;
    chosen_.push_back(&victim);
    chosen_max_priority_ = max_priority;
    chosen_freed_ += victim.freed_milli;
    if (victim.group >= 0) ++group_taken_[victim.group];
    Extend(i + 1, size, next);
    if (victim.group >= 0) --group_taken_[victim.group];
    chosen_freed_ -= victim.freed_milli;
    chosen_max_priority_ = saved_priority;
    chosen_.pop_back();
  }
}

void Searcher::TrySet() {
  if (!room_.MayFit(chosen_)) return;
  NodeVerdict verdict = FilterWithout(chosen_);
  if (!verdict.fit.fits()) return;
  VictimSetKey key{.count = static_cast<int64_t>(chosen_.size()),
                   .max_priority = chosen_max_priority_,
                   .freed_milli = chosen_freed_};
  for (const Victim* victim : chosen_) key.uids.push_back(victim->uid());
  std::sort(key.uids.begin(), key.uids.end());
  if (best_ && !key.BetterThan(*best_)) return;
  best_ = std::move(key);
  result_.verdict = std::move(verdict);
}

VictimSet Searcher::NotFound(bool complete, std::string reason) {
  result_.found = false;
  result_.complete = complete;
  result_.reason = std::move(reason);
  return std::move(result_);
}

VictimSet Searcher::Run() {
  if (budget_.filter_calls < 1) {
    return NotFound(false, "the budget allows no Filter call");
  }
  NodeVerdict as_is = FilterWithout({});
  if (as_is.fit.fits()) {
    result_.found = result_.complete = true;
    result_.excess_milli = -NeedMilli(node_, as_is.fit.allocation);
    result_.verdict = std::move(as_is);
    return std::move(result_);
  }
  const std::vector<Victim>& victims = space_.victims;
  if (victims.empty()) {
    return NotFound(
        true, absl::StrFormat("no candidate may be evicted and holds what "
                              "the pod needs (%d left out); as is: %s",
                              space_.dropped, as_is.fit.Reason()));
  }
  std::vector<const Victim*> everyone;
  for (const Victim& victim : victims) everyone.push_back(&victim);
  if (OutOfBudget()) {
    return NotFound(false,
                    "budget spent before the check with every "
                    "candidate gone");
  }
  if (NodeVerdict all_gone = FilterWithout(everyone); !all_gone.fit.fits()) {
    return NotFound(true,
                    absl::StrFormat("does not fit even with all %d candidates "
                                    "gone: %s",
                                    victims.size(), all_gone.fit.Reason()));
  }
  for (size_t size = 1; size <= victims.size() && !best_ && !stopped_; ++size) {
    Extend(0, size, Spread{});
  }
  const bool complete = !stopped_;
  if (!best_) {
    return NotFound(complete,
                    absl::StrFormat("budget spent (%d Filter calls, %d steps) "
                                    "before a set was found",
                                    result_.filter_calls, result_.steps));
  }
  result_.found = true;
  result_.complete = complete;
  result_.victims = best_->uids;
  result_.max_priority = best_->max_priority;
  result_.freed_milli = best_->freed_milli;
  result_.excess_milli =
      best_->freed_milli - NeedMilli(node_, result_.verdict.fit.allocation);
  return std::move(result_);
}

}  // namespace

VictimSearch::VictimSearch(const DecisionPath* path, const BackendSet* backends)
    : path_(path), backends_(backends) {}

absl::StatusOr<VictimSet> VictimSearch::Find(const ClusterState& state,
                                             const VictimQuery& query) const {
  if (query.cycle == nullptr || query.cycle->request == nullptr) {
    return absl::InvalidArgumentError(
        "cycle: null (want the pending pod's "
        "PodCycle from DecisionPath::PreFilter)");
  }
  const NodeState* node = state.FindNode(query.node);
  if (node == nullptr) {
    return absl::NotFoundError(
        absl::StrFormat("node \"%s\": not in the cluster state", query.node));
  }
  DS_ASSIGN_OR_RETURN(SearchSpace space,
                      internal::BuildSearchSpace(state, *node, query));
  Searcher searcher(*path_, *backends_, *query.cycle, *node, space,
                    query.budget);
  return searcher.Run();
}

}  // namespace deviceshare::preemption
