// File: simulate/preemptor.h
//
// Preemptor: simulate's --preemption, kube-scheduler's PostFilter step
// (DefaultPreemption) with deviceshare's victim search. When a pod fits
// nowhere and may preempt (its preemptionPolicy is not Never), then:
//
//   1. For every node that holds pods of strictly lower priority (pods the
//      run placed and running pods it charged), the library's VictimSearch
//      (preemption/victim_search.h) finds the best victim set there: fewest
//      victims, then the lowest highest priority, then the least share
//      freed beyond the need. Every such pod is evictable and simulate has
//      no disruption budgets. Unlike kube-scheduler, which dry-runs a
//      random sample of at least 10% (and 100) of the nodes, every node is
//      tried, in name order, so runs are reproducible.
//      PodDisruptionBudgets (simulate/disruption_budgets.h) are kept where
//      they can be, as kube-scheduler keeps them: a node's set is first
//      sought within every budget's disruptionsAllowed; only where none
//      exists is it sought without them, and the budgets it breaks are
//      counted (kube-scheduler's violating victims).
//   2. Of the nodes with a set, one is picked as kube-scheduler's
//      pickOneNodeForPreemption picks: fewest disruption-budget violations,
//      then the lowest highest victim priority, then the
//      smallest sum of victim priorities (each counted as priority + 2^31),
//      then the fewest victims, then the latest start of the
//      highest-priority victims (the earliest of them; start = the order in
//      which the run charged or placed them), then the smaller node name
//      (kube-scheduler takes the first candidate of a map: no fixed order).
//   3. The victims are deleted (Scheduler::Release) and the pod is placed
//      on that node through the scheduler's decision path (Allocate);
//      kube-scheduler nominates the node and binds in a later cycle. If the
//      pod does not fit after the evictions, that is a bug: Internal.
//
// Pods refused by their namespace's GPU quota are not preempted for
// (QuotaExceeded: the victim search checks the node, not the quota; in
// kube-scheduler ResourceQuota is an admission matter and never reaches
// preemption).
//
// Thread safety: one thread at a time, like the simulation.
#ifndef DEVICESHARE_SIMULATE_PREEMPTOR_H_
#define DEVICESHARE_SIMULATE_PREEMPTOR_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "deviceshare/backend/backend_registry.h"
#include "deviceshare/backend/backend_set.h"
#include "deviceshare/config/scheduler_config.h"
#include "deviceshare/input/pod_priorities.h"
#include "deviceshare/policy/policy_set.h"
#include "deviceshare/preemption/victim_search.h"
#include "deviceshare/scheduler/decision_path.h"
#include "deviceshare/scheduler/scheduler.h"
#include "deviceshare/simulate/disruption_budgets.h"

namespace deviceshare::simulate {

// A pod the preemptor deleted.
struct EvictedPod {
  std::string uid;
  std::string key;  // "namespace/name"
  std::string node;
  // Its index in the workload's pods; unset for a running pod.
  std::optional<size_t> workload_index;
};

// A node with a victim set and the figures step 2 compares.
struct PreemptionCandidate {
  std::string node;
  std::vector<std::string> victims;  // uids, sorted
  // Victims beyond their budget's disruptionsAllowed.
  int64_t violations = 0;
  int32_t max_priority = 0;  // of the victims
  int64_t sum_priority = 0;  // sum of (priority + 2^31)
  // The earliest start among the victims of max_priority.
  int64_t earliest_top_start = 0;
};

// Whether kube-scheduler's pick (step 2) prefers `a` to `b`.
bool PreferredForPreemption(const PreemptionCandidate& a,
                            const PreemptionCandidate& b);

struct PreemptionOutcome {
  std::string node;
  std::vector<EvictedPod> evicted;  // by uid
  Decision decision;                // the pod's placement there
};

class Preemptor {
 public:
  // `priorities` and `budgets` (null: none) must outlive the preemptor.
  static absl::StatusOr<std::unique_ptr<Preemptor>> Create(
      const Config& config, const input::PodPriorityMap* priorities,
      const BudgetGroups* budgets = nullptr);

  // A pod that now holds resources on `node`: a running pod charged, or a
  // pod the run placed (`workload_index`). Its start is the call order.
  void Placed(const PodRequest& pod, const std::string& node,
              std::optional<size_t> workload_index);

  // For a pod whose Schedule decision `failed` placed it nowhere: evicts
  // the victims and places it (nullopt when preemption cannot help, or the
  // pod may not preempt). Errors are the run's: a victim search refusing
  // its query, or the pod not fitting after the evictions.
  absl::StatusOr<std::optional<PreemptionOutcome>> Preempt(
      Scheduler& scheduler, const PodRequest& pod, const Decision& failed);

 private:
  struct Tenant {
    std::string key;
    int32_t priority = 0;
    int64_t start = 0;
    std::optional<size_t> workload_index;
    std::string group;  // its disruption budget; "" for none
  };
  Preemptor(Config config, const input::PodPriorityMap* priorities,
            const BudgetGroups* budgets);

  input::PodPriorityInfo PriorityOf(const std::string& uid) const;
  // The best node (step 2), searched under the scheduler's shared lock.
  absl::StatusOr<std::optional<PreemptionCandidate>> Choose(
      const Scheduler& scheduler, const PodRequest& pod,
      int32_t priority) const;
  absl::StatusOr<std::optional<PreemptionCandidate>> ChooseIn(
      const ClusterState& state, const PodRequest& pod, int32_t priority) const;
  PreemptionCandidate Figures(const std::string& node,
                              const preemption::VictimSet& set) const;
  // The best set on one node (kept within the budgets if it can be);
  // nullopt when none helps.
  absl::StatusOr<std::optional<PreemptionCandidate>> OnNode(
      const ClusterState& state, const PodCycle& cycle, const std::string& node,
      int32_t priority) const;
  // A budget's disruptionsAllowed now.
  int32_t DisruptionsLeft(const std::string& group) const;

  const Config config_;
  const input::PodPriorityMap* priorities_;
  const BudgetGroups* budgets_;
  BackendRegistry registry_;
  std::unique_ptr<BackendSet> backends_;
  std::unique_ptr<PolicySet> policies_;
  std::unique_ptr<DecisionPath> path_;
  std::unique_ptr<preemption::VictimSearch> search_;
  // Pods holding resources, by node and uid.
  std::map<std::string, std::map<std::string, Tenant>, std::less<>> tenants_;
  // How many tenants hold each priority: a pod no tenant is below skips
  // the search (every pod of a run without priorities).
  std::map<int32_t, int64_t> tenant_priorities_;
  // Tenants per disruption budget.
  std::map<std::string, int64_t, std::less<>> group_tenants_;
  int64_t next_start_ = 0;
};

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_PREEMPTOR_H_
