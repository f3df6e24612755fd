// Extender::Preempt, the preempt verb: kube-scheduler's proposed nodes
// (with the victims its own plugins chose, by CPU, memory and the like)
// answered with the victims that free room the pod's GPUs can use, from
// the library's victim search (preemption/victim_search.h).
//
// Candidates come from the extender's own state: every pod charged on the
// node and bound there (the watch shows its Binding, or our bind created
// it) whose spec.priority is below the pending pod's. kube-scheduler's
// victims are not a limit: it picks them without seeing GPU shares, so they
// may free nothing on a GPU the pod could use. No pod is marked not
// evictable and no disruption budget is read yet (NumPDBViolations is 0).
//
// Nothing is released here. kube-scheduler deletes the victims it settles
// on; each frees its room when the watch reports it gone, as any deleted
// pod does. The pending pod's own earlier filter reservation is dropped
// first, as a new /filter would: it must not count against the pod.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "deviceshare/extender/extender.h"
#include "deviceshare/k8s/pod_parser.h"
#include "deviceshare/preemption/victim_search.h"
#include "extender_log.h"
#include "pod_fields.h"
#include "spec_priority.h"

namespace deviceshare::extender {
namespace {

using preemption::VictimCandidate;
using preemption::VictimQuery;
using preemption::VictimSearch;
using preemption::VictimSet;

// One node's search: the candidates still bound on `node` in `state` (the
// watch may have moved on since they were read), then Find.
absl::StatusOr<VictimSet> SearchNode(
    const Scheduler& scheduler, const ClusterState& state,
    const PodRequest& request, int32_t priority, const std::string& node,
    const std::vector<std::pair<std::string, int32_t>>& bound) {
  absl::StatusOr<PodCycle> cycle = scheduler.path().PreFilter(request, &state);
  if (!cycle.ok()) return cycle.status();
  VictimQuery query;
  query.cycle = &*cycle;
  query.priority = priority;
  query.node = node;
  for (const auto& [uid, pod_priority] : bound) {
    if (pod_priority >= priority || uid == request.uid) continue;
    const PodRecord* record = state.FindPod(uid);
    if (record == nullptr || !record->on_ledger ||
        record->allocation.node_name != node) {
      continue;
    }
    query.candidates.push_back(VictimCandidate{uid, pod_priority});
  }
  const VictimSearch search(&scheduler.path(), &scheduler.backends());
  return search.Find(state, query);
}

}  // namespace

std::map<std::string, std::vector<std::pair<std::string, int32_t>>>
Extender::BoundPodsOn(const std::map<std::string, MetaVictims>& nodes) const {
  std::map<std::string, std::vector<std::pair<std::string, int32_t>>> bound;
  absl::MutexLock lock(&mu_);
  for (const auto& [uid, watched] : watched_pods_) {
    if (!nodes.contains(watched.node)) continue;
    // Bound by the watch, or by our Binding that the watch has not shown.
    bool is_bound = watched.bound;
    if (!is_bound) {
      auto reservation = reservations_.find(uid);
      is_bound = reservation != reservations_.end() &&
                 reservation->second.state == ReservationState::kBound &&
                 reservation->second.node == watched.node;
    }
    if (is_bound) bound[watched.node].emplace_back(uid, watched.priority);
  }
  for (auto& [node, pods] : bound) std::sort(pods.begin(), pods.end());
  return bound;
}

absl::StatusOr<PreemptionResult> Extender::Preempt(const PreemptionArgs& args) {
  absl::StatusOr<int32_t> priority = SpecPriority(args.pod);
  if (!priority.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ExtenderPreemptionArgs.Pod.", priority.status().message()));
  }
  PreemptionResult result;
  const std::string key = PodKey(args.pod);
  absl::StatusOr<PodRequest> request =
      ParsePodRequest(args.pod, scheduler_->config().device);
  if (!request.ok()) {
    // /filter rejected it on every node for the same reason.
    LogPod(LogLevel::kInfo, key, "",
           absl::StrCat("preempt: no node: ", request.status().message()));
    return result;
  }
  // Pods without annotated GPUs or claims are not ours to judge.
  if (!request->HasGpuRequest() && !request->HasClaims()) {
    result.node_victims = args.node_victims;
    return result;
  }
  if (std::optional<std::string> busy = StartFilterLocked(*request)) {
    LogPod(LogLevel::kInfo, key, "", absl::StrCat("preempt: no node: ", *busy));
    return result;
  }
  const auto bound = BoundPodsOn(args.node_victims);
  const std::vector<std::pair<std::string, int32_t>> none;
  std::vector<std::string> dropped;
  for (const auto& entry : args.node_victims) {
    // Named, not a structured binding: the lambda below captures it (clang
    // before 16 refuses to capture a structured binding).
    const std::string& node = entry.first;
    const MetaVictims& proposed = entry.second;
    auto pods = bound.find(node);
    absl::StatusOr<VictimSet> set = absl::NotFoundError("unknown node");
    scheduler_->Inspect([&](const ClusterState& state) {
      if (state.FindNode(node) == nullptr) return;
      set = SearchNode(*scheduler_, state, *request, *priority, node,
                       pods == bound.end() ? none : pods->second);
    });
    if (!set.ok() || !set->found) {
      dropped.push_back(node);
      LogPod(LogLevel::kDebug, key, node,
             absl::StrCat("preempt: node left out: ",
                          set.ok() ? set->reason : set.status().message()));
      continue;
    }
    if (!set->complete) {
      LogPod(LogLevel::kInfo, key, node,
             absl::StrFormat("preempt: search budget spent after %d filter "
                             "calls; best set so far",
                             set->filter_calls));
    }
    // The GPUs fit as they are: kube-scheduler's own victims stand.
    result.node_victims[node] =
        set->victims.empty() ? proposed : MetaVictims{set->victims, 0};
  }
  LogPod(LogLevel::kInfo, key, "",
         absl::StrFormat("preempt: %d of %d nodes kept%s%s",
                         result.node_victims.size(), args.node_victims.size(),
                         dropped.empty() ? "" : "; left out: ",
                         absl::StrJoin(dropped, ", ")));
  return result;
}

}  // namespace deviceshare::extender
