#include "deviceshare/simulate/preemptor.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/model/reason_code.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::simulate {
namespace {

// kube-scheduler adds MaxInt32 + 1 to each victim's priority before
// summing, so that a few negative-priority victims never beat fewer ones.
constexpr int64_t kPriorityOffset =
    int64_t{std::numeric_limits<int32_t>::max()} + 1;

// Whether the pod's namespace quota refused it (every node then says so).
bool QuotaRefused(const Decision& failed) {
  const absl::string_view code = reasons::kQuotaExceeded.name;
  if (failed.reason_counts.contains(std::string(code))) return true;
  return std::any_of(failed.reasons.begin(), failed.reasons.end(),
                     [code](const auto& entry) {
                       return absl::StartsWith(entry.second, code);
                     });
}

}  // namespace

bool PreferredForPreemption(const PreemptionCandidate& a,
                            const PreemptionCandidate& b) {
  if (a.violations != b.violations) return a.violations < b.violations;
  if (a.max_priority != b.max_priority) {
    return a.max_priority < b.max_priority;
  }
  if (a.sum_priority != b.sum_priority) {
    return a.sum_priority < b.sum_priority;
  }
  if (a.victims.size() != b.victims.size()) {
    return a.victims.size() < b.victims.size();
  }
  if (a.earliest_top_start != b.earliest_top_start) {
    return a.earliest_top_start > b.earliest_top_start;
  }
  return a.node < b.node;
}

Preemptor::Preemptor(Config config, const input::PodPriorityMap* priorities,
                     const BudgetGroups* budgets)
    : config_(std::move(config)), priorities_(priorities), budgets_(budgets) {}

absl::StatusOr<std::unique_ptr<Preemptor>> Preemptor::Create(
    const Config& config, const input::PodPriorityMap* priorities,
    const BudgetGroups* budgets) {
  std::unique_ptr<Preemptor> preemptor(
      new Preemptor(config, priorities, budgets));
  DS_RETURN_IF_ERROR(RegisterBuiltinBackends(preemptor->registry_));
  DS_ASSIGN_OR_RETURN(BackendSet backends,
                      BackendSet::Create(preemptor->registry_, config));
  DS_ASSIGN_OR_RETURN(PolicySet policies,
                      PolicySet::Create(BuiltinPolicies(), config));
  preemptor->backends_ = std::make_unique<BackendSet>(std::move(backends));
  preemptor->policies_ = std::make_unique<PolicySet>(std::move(policies));
  preemptor->path_ = std::make_unique<DecisionPath>(&preemptor->config_,
                                                    preemptor->backends_.get(),
                                                    preemptor->policies_.get());
  preemptor->search_ = std::make_unique<preemption::VictimSearch>(
      preemptor->path_.get(), preemptor->backends_.get());
  return preemptor;
}

input::PodPriorityInfo Preemptor::PriorityOf(const std::string& uid) const {
  if (priorities_ == nullptr) return {};
  auto it = priorities_->find(uid);
  return it == priorities_->end() ? input::PodPriorityInfo{} : it->second;
}

void Preemptor::Placed(const PodRequest& pod, const std::string& node,
                       std::optional<size_t> workload_index) {
  const int32_t priority = PriorityOf(pod.uid).priority;
  std::string group;
  if (budgets_ != nullptr) {
    auto it = budgets_->group_of.find(pod.uid);
    if (it != budgets_->group_of.end()) group = it->second;
  }
  if (!group.empty()) ++group_tenants_[group];
  tenants_[node][pod.uid] = {pod.Key(), priority, next_start_++, workload_index,
                             std::move(group)};
  ++tenant_priorities_[priority];
}

int32_t Preemptor::DisruptionsLeft(const std::string& group) const {
  auto healthy = group_tenants_.find(group);
  const int64_t placed = healthy == group_tenants_.end() ? 0 : healthy->second;
  const int64_t left = placed - budgets_->min_healthy.at(group);
  return static_cast<int32_t>(std::clamp<int64_t>(left, 0, INT32_MAX));
}

PreemptionCandidate Preemptor::Figures(const std::string& node,
                                       const preemption::VictimSet& set) const {
  PreemptionCandidate candidate;
  candidate.node = node;
  candidate.victims = set.victims;
  candidate.max_priority = std::numeric_limits<int32_t>::lowest();
  const auto& on_node = tenants_.find(node)->second;
  for (const std::string& uid : set.victims) {
    const Tenant& tenant = on_node.at(uid);
    candidate.max_priority = std::max(candidate.max_priority, tenant.priority);
    candidate.sum_priority += tenant.priority + kPriorityOffset;
  }
  candidate.earliest_top_start = std::numeric_limits<int64_t>::max();
  for (const std::string& uid : set.victims) {
    const Tenant& tenant = on_node.at(uid);
    if (tenant.priority != candidate.max_priority) continue;
    candidate.earliest_top_start =
        std::min(candidate.earliest_top_start, tenant.start);
  }
  return candidate;
}

absl::StatusOr<std::optional<PreemptionCandidate>> Preemptor::OnNode(
    const ClusterState& state, const PodCycle& cycle, const std::string& node,
    int32_t priority) const {
  preemption::VictimQuery query;
  query.cycle = &cycle;
  query.priority = priority;
  query.node = node;
  for (const auto& [uid, tenant] : tenants_.find(node)->second) {
    if (tenant.priority >= priority) continue;
    query.candidates.push_back({uid, tenant.priority, true, tenant.group});
    if (!tenant.group.empty()) {
      query.disruptions_left.emplace(tenant.group,
                                     DisruptionsLeft(tenant.group));
    }
  }
  if (query.candidates.empty()) return std::nullopt;
  DS_ASSIGN_OR_RETURN(preemption::VictimSet set, search_->Find(state, query));
  int64_t violations = 0;
  if (!set.found && !query.disruptions_left.empty()) {
    // No set keeps every budget: kube-scheduler then evicts anyway and
    // counts the victims its budgets did not allow.
    preemption::VictimQuery relaxed = query;
    relaxed.disruptions_left.clear();
    for (preemption::VictimCandidate& candidate : relaxed.candidates) {
      candidate.disruption_group.clear();
    }
    DS_ASSIGN_OR_RETURN(set, search_->Find(state, relaxed));
    std::map<std::string, int64_t> taken;
    for (const std::string& uid : set.victims) {
      const std::string& group = tenants_.find(node)->second.at(uid).group;
      if (!group.empty()) ++taken[group];
    }
    for (const auto& [group, count] : taken) {
      violations += std::max<int64_t>(0, count - query.disruptions_left[group]);
    }
  }
  // An empty set would mean the pod fits as is, which the failed decision
  // ruled out; such a node is left alone.
  if (!set.found || set.victims.empty()) return std::nullopt;
  PreemptionCandidate candidate = Figures(node, set);
  candidate.violations = violations;
  return candidate;
}

absl::StatusOr<std::optional<PreemptionCandidate>> Preemptor::ChooseIn(
    const ClusterState& state, const PodRequest& pod, int32_t priority) const {
  DS_ASSIGN_OR_RETURN(PodCycle cycle, path_->PreFilter(pod, &state));
  std::optional<PreemptionCandidate> best;
  for (const auto& on_node : tenants_) {
    DS_ASSIGN_OR_RETURN(std::optional<PreemptionCandidate> candidate,
                        OnNode(state, cycle, on_node.first, priority));
    if (candidate && (!best || PreferredForPreemption(*candidate, *best))) {
      best = std::move(candidate);
    }
  }
  return best;
}

absl::StatusOr<std::optional<PreemptionCandidate>> Preemptor::Choose(
    const Scheduler& scheduler, const PodRequest& pod, int32_t priority) const {
  absl::StatusOr<std::optional<PreemptionCandidate>> best = std::nullopt;
  scheduler.Inspect([&](const ClusterState& state) {
    best = ChooseIn(state, pod, priority);
  });
  return best;
}

absl::StatusOr<std::optional<PreemptionOutcome>> Preemptor::Preempt(
    Scheduler& scheduler, const PodRequest& pod, const Decision& failed) {
  const input::PodPriorityInfo info = PriorityOf(pod.uid);
  if (!info.preempts || QuotaRefused(failed)) return std::nullopt;
  if (tenant_priorities_.empty() ||
      tenant_priorities_.begin()->first >= info.priority) {
    return std::nullopt;
  }
  DS_ASSIGN_OR_RETURN(std::optional<PreemptionCandidate> best,
                      Choose(scheduler, pod, info.priority));
  if (!best) return std::nullopt;
  PreemptionOutcome outcome;
  outcome.node = best->node;
  auto& on_node = tenants_.find(best->node)->second;
  for (const std::string& uid : best->victims) {
    auto it = on_node.find(uid);
    outcome.evicted.push_back(
        {uid, it->second.key, best->node, it->second.workload_index});
    scheduler.Release(uid);
    if (--tenant_priorities_[it->second.priority] == 0) {
      tenant_priorities_.erase(it->second.priority);
    }
    if (!it->second.group.empty()) --group_tenants_[it->second.group];
    on_node.erase(it);
  }
  DS_ASSIGN_OR_RETURN(outcome.decision, scheduler.Allocate(pod, best->node));
  if (!outcome.decision.allocation) {
    auto reason = outcome.decision.reasons.find(best->node);
    return absl::InternalError(absl::StrFormat(
        "preemption: pod %s does not fit node %s after evicting %s: %s",
        pod.Key(), best->node, absl::StrJoin(best->victims, ", "),
        reason == outcome.decision.reasons.end() ? "no reason given"
                                                 : reason->second));
  }
  return outcome;
}

}  // namespace deviceshare::simulate
