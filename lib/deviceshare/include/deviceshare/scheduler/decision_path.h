// File: scheduler/decision_path.h
//
// DecisionPath: the steps every decision takes -- simulate, the extender,
// the step API of hosts that run their own loop -- shaped like
// kube-scheduler's framework:
//
//   PreFilter(pod)          once per pod: the policies it names exist; the
//                           backends that may serve it (PodCycle)
//   Filter(cycle, node)     per node: a verdict with its reason (never an
//                           error), scored by the node policy when it fits
//   Search(cycle, state)    the best node of the cluster (BetterVerdict)
//                           without filtering every node
//   Explain(cycle, state)   why a pod fits nowhere, per node
//
// The reserve and unreserve steps are ClusterState::AddPod / RemovePod;
// the Scheduler (scheduler/scheduler.h) runs them under its lock, and
// remembers verdicts between the steps of one pod.
//
// Filter: node CPU and memory (when the inventory has them) are checked
// first. The pod's own mode picks one backend; a pod that names no mode is
// offered to every enabled backend whose mode some registered GPU runs
// (PreFilter), and of those that fit the node the
// one whose placement strands the least capacity serves it
// (policy/stranded_capacity.h), then the higher score, then config order.
//
// Search reaches the choice of a full scan without evaluating every node:
// backends give a cheap necessary fit test and score upper bounds (through
// the policy's ScoreBound), and the cluster's node index is visited best
// bound first (see decision_path.cc).
//
// Search remembers, between calls, which nodes of the last state it
// searched are twins (scheduler/bucket_twins.h), and starts over when
// asked of another state (ClusterState::id()): one path may search several
// states, one after another.
//
// Thread safety: every method is const and safe to call concurrently on a
// ClusterState (and NodeStates) that nobody changes meanwhile; what Search
// remembers is synchronised.
#ifndef DEVICESHARE_SCHEDULER_DECISION_PATH_H_
#define DEVICESHARE_SCHEDULER_DECISION_PATH_H_

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/backend/backend_set.h"
#include "deviceshare/config/scheduler_config.h"
#include "deviceshare/policy/policy_set.h"
#include "deviceshare/scheduler/bucket_tally.h"
#include "deviceshare/scheduler/bucket_twins.h"
#include "deviceshare/scheduler/cluster_state.h"
#include "deviceshare/scheduler/decision.h"
#include "deviceshare/scheduler/pod_cycle.h"

namespace deviceshare {

class DecisionPath {
 public:
  // All three must outlive the path.
  DecisionPath(const Config* config, const BackendSet* backends,
               const PolicySet* policies);

  // InvalidArgument when the pod names a policy that is not registered
  // (the message names the annotation and the value), or a sharing mode no
  // registered backend serves. A pod with claims is checked against
  // `state`'s DRA objects (without a state every node says ClaimNotReady).
  absl::StatusOr<PodCycle> PreFilter(const PodRequest& request,
                                     const ClusterState* state = nullptr) const;

  // Without `explain`, an unfit verdict may carry its code alone (no
  // message): much cheaper when most nodes are rejected.
  NodeVerdict Filter(const PodCycle& cycle, const NodeState& node,
                     bool explain) const;

  // Filter(explain=false)'s code alone (kFits when the node fits), without
  // building the verdict: what counting a failed pod's reasons asks of
  // every node.
  ReasonCode FilterCode(const PodCycle& cycle, const NodeState& node) const;

  // The verdict for a node the state does not know.
  static NodeVerdict UnknownNode(absl::string_view name);

  // The nodes that may serve a pod's claims: the node of an allocated
  // claim, else every node with DRA devices; every node when the pod asks
  // for annotated GPUs too. By name.
  static std::vector<const NodeState*> ClaimCandidates(
      const PodCycle& cycle, const ClusterState& state);

  // The best node of `state` for the pod, by BetterVerdict; nullopt when it
  // fits nowhere. `tallies` (optional): the pod's GPU shape's bucket
  // tallies; a bucket whose current tally has no node whose GPUs fit is
  // skipped.
  std::optional<NodeVerdict> Search(
      const PodCycle& cycle, const ClusterState& state,
      const BucketTallies* tallies = nullptr) const;

  // Fills the decision's reasons and counts for a pod that fits none of
  // `nodes` (sorted by name).
  void Explain(const PodCycle& cycle,
               const std::vector<const NodeState*>& nodes,
               const ScheduleOptions& options, Decision& decision) const;

  // Explain over every node of `state`, the same reasons and counts,
  // bucket by bucket from the index, which keeps beside each node what
  // rules most nodes out without reading them (IndexedNode). With
  // `tallies` (those of the pod's GPU shape: pods that differ only in CPU
  // and memory may share them), a bucket that did not change since its
  // tally was taken is counted from it, buckets without a current tally
  // are tallied, and `tallies` is left with the tallies of the buckets as
  // they are. Without options.count_reasons it is Explain (nothing to
  // tally).
  void ExplainAll(const PodCycle& cycle, const ClusterState& state,
                  const ScheduleOptions& options, BucketTallies* tallies,
                  Decision& decision) const;

 private:
  // Node CPU and memory: kFits, kInsufficientCpu or kInsufficientNodeMemory.
  static ReasonCode HostCode(const PodRequest& request, const NodeState& node);
  // The annotated GPUs: the backends' verdicts, the least stranding wins.
  void FilterGpus(const PodCycle& cycle, const NodeState& node, bool explain,
                  NodeVerdict& verdict) const;
  // FilterCode past the host check.
  ReasonCode GpuFilterCode(const PodCycle& cycle, const NodeState& node) const;
  // The claims, on a verdict that fits so far.
  void FilterClaims(const PodCycle& cycle, const NodeState& node,
                    NodeVerdict& verdict) const;
  std::optional<NodeVerdict> SearchClaims(const PodCycle& cycle,
                                          const ClusterState& state) const;
  // Into `runs` (cleared first): the index's runs of buckets of one shape
  // and utilisation, best score bound first.
  struct BucketRun;
  void RunsFor(const PodCycle& cycle, const ClusterState& state,
               std::vector<BucketRun>& runs) const;
  // Whether some node of `bucket` may hold the pod: its largest host room
  // and GPU headroom, and its current tally (bucket_tally.h), if any.
  bool BucketMayHold(const PodCycle& cycle, const NodeShape& shape,
                     const IndexBucket& bucket,
                     const BucketTallies* tallies) const;
  // The GPU code (GpuFilterCode) of every node of `bucket`; the code of a
  // node `before` (an older tally of the bucket, or nullptr) holds at the
  // node's version is taken from it.
  // Into `tally` (cleared first; not `before`), whose capacity is reused.
  void TallyOf(const PodCycle& cycle, const IndexBucket& bucket,
               const BucketTally* before, BucketTally& tally) const;
  class ReasonTally;
  // Adds the codes Filter gives `pod` on the nodes of `bucket`, from its
  // current `tally` and the host room beside each node.
  static void CountBucket(const PodRequest& pod, const IndexBucket& bucket,
                          const BucketTally& tally, ReasonTally& reasons);
  // The counts of `reasons` into the decision, then ExplainChosen with
  // each code's first node.
  void ExplainCounted(const PodCycle& cycle,
                      const std::vector<const NodeState*>& nodes,
                      const ReasonTally& reasons,
                      const ScheduleOptions& options, Decision& decision) const;
  // Full reasons for up to options.max_explained_nodes nodes: the first of
  // each code, then `nodes` (by name) in order.
  void ExplainChosen(const PodCycle& cycle,
                     const std::vector<const NodeState*>& nodes,
                     const std::map<ReasonCode, const NodeState*>& first,
                     const ScheduleOptions& options, Decision& decision) const;
  // Over the cycle's backends; -1 when there are none.
  int UpperBound(const PodCycle& cycle, const NodeState& node) const;
  bool MayFit(const PodCycle& cycle, const NodeState& node) const;
  bool MayFitHeadroom(const PodCycle& cycle, const NodeShape& shape,
                      const GpuHeadroom& headroom) const;
  // The policy a pod's annotation names: `fallback` (the config's) when it
  // names none, the registered one, or `unknown` for a name that is not
  // registered: HAMi's own default for the level (binpack for nodes, spread
  // for GPUs; node_policy.go and gpu_policy.go Less), as HAMi takes any
  // value.
  const PlacementPolicy* PolicyFor(const std::optional<std::string>& name,
                                   const PlacementPolicy& fallback,
                                   const PlacementPolicy& unknown) const;
  // The pod's GPU policy: the registered one it names (or the config's),
  // or, for a comma list or device-scoring-weights, a chain made for it and
  // kept in `cycle`.
  absl::Status ChooseGpuPolicy(const PodRequest& request,
                               PodCycle& cycle) const;

  const Config* config_;
  const BackendSet* backends_;
  const PolicySet* policies_;
  // What Search learnt of the last state's buckets (bucket_twins.h);
  // shared by copies, synchronised.
  std::shared_ptr<BucketTwins> twins_;
};

}  // namespace deviceshare

#endif  // DEVICESHARE_SCHEDULER_DECISION_PATH_H_
