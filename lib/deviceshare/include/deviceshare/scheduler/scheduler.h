// File: scheduler/scheduler.h
//
// Scheduler: the facade every host uses -- simulate, the kube-scheduler
// extender, the coming C API and DRA allocator, or an embedding scheduler
// -- over a ClusterState that it owns and that events keep current. Every
// decision goes through the steps of scheduler/decision_path.h (prefilter,
// filter, score, reserve, and unreserve); hosts drive them in one of two
// ways:
//
//   The whole decision: Schedule(pod, {candidates}) picks the best node
//   (all nodes, or the candidates), reserves its devices and returns node,
//   devices per container, score, optionally the annotations to write in
//   the pod's dialect, and why the other nodes did not fit when none did.
//
//   The steps, for a host that runs its own loop -- one library call per
//   host call, in the shape of Volcano's deviceshare Devices interface
//   (FilterNode, ScoreNode, Allocate, Release, AddResource/SubResource)
//   and HAMi's filter-then-bind:
//     FilterNode(pod, node)  / Filter(pod, nodes)   verdict + reason
//     ScoreNode(pod, node)                          0..100, the node policy
//     Allocate(pod, node)    reserve on that node + the annotations
//     Reserve(pod, ranked candidates)               the first that fits
//     Release(pod uid)       unreserve, or a pod gone; idempotent
//     AddBoundPod(pod, annotations, node)           a pod bound elsewhere,
//                                                   from its record
//   Verdicts are remembered per pod while their node is unchanged (and
//   the pod's policies have learnt nothing since: PlacementPolicy::
//   scores_version), so FilterNode, ScoreNode and Allocate of one pod
//   filter a node once, and the replicas of a workload share verdicts
//   (src/scheduler/verdict_memory.h).
//
// DRA: a pod may use ResourceClaims (PodRequest::claims) beside or instead
// of annotated GPUs. The host feeds DeviceClasses, ResourceSlices and
// ResourceClaims as events; every step then allocates the pod's claims on
// the node with the DRA allocator (dra/node_allocator.h), scored by the
// pod's policies, and a placed pod's Decision lists each claim with its
// allocation (ClaimDecision: what to write to the claim's status).
//
// The node order is BetterVerdict(): least stranded capacity, then highest
// score, then the smaller node name.
//
// Thread safety: all methods are thread-safe. Filters run under a shared
// lock (many pods in parallel); Schedule, Reserve, Allocate, Release and
// the event methods take it exclusively, so a decision and its commit are
// atomic and two pods can never both take the last room on a GPU.
#ifndef DEVICESHARE_SCHEDULER_SCHEDULER_H_
#define DEVICESHARE_SCHEDULER_SCHEDULER_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "deviceshare/backend/backend_registry.h"
#include "deviceshare/backend/backend_set.h"
#include "deviceshare/clock.h"
#include "deviceshare/config/scheduler_config.h"
#include "deviceshare/model/gpu_quota.h"
#include "deviceshare/policy/policy_registry.h"
#include "deviceshare/policy/policy_set.h"
#include "deviceshare/scheduler/cluster_state.h"
#include "deviceshare/scheduler/decision.h"
#include "deviceshare/scheduler/decision_path.h"

namespace deviceshare::internal {
class TwinClasses;
class VerdictMemory;
}  // namespace deviceshare::internal

namespace deviceshare {

class Scheduler {
 public:
  // The registries are used only during construction. `clock` stamps the
  // annotations of Allocate() and of Schedule() with
  // ScheduleOptions::annotations; null: RealClock(). The first form uses
  // the built-in policies (policy/policy_registry.h).
  static absl::StatusOr<std::unique_ptr<Scheduler>> Create(
      const Config& config, const BackendRegistry& backends);
  // `new_share_id` names each share of a DRA device (a UID); unset:
  // random UUIDs. Called from filtering threads: it must be thread-safe.
  static absl::StatusOr<std::unique_ptr<Scheduler>> Create(
      const Config& config, const BackendRegistry& backends,
      const PolicyRegistry& policies, const Clock* clock = nullptr,
      std::function<std::string()> new_share_id = {});
  ~Scheduler();

  // ---- The whole decision -------------------------------------------------

  // Picks the best of the candidates (every node when none are given) and
  // reserves it. A pod that fits nowhere is not an error: the decision has
  // no allocation and the reasons. AlreadyExists if the pod is already
  // placed; InvalidArgument from the prefilter step.
  absl::StatusOr<Decision> Schedule(const PodRequest& request,
                                    const ScheduleOptions& options = {})
      ABSL_LOCKS_EXCLUDED(mu_);

  // ---- The steps ----------------------------------------------------------

  // Verdicts for `node_names` (all nodes, by name, when empty), in the given
  // order, with their reasons, scored when they fit. The allocations stay
  // here for Reserve/Allocate (the verdicts carry none). Pure.
  absl::StatusOr<std::vector<NodeVerdict>> Filter(
      const PodRequest& request,
      absl::Span<const std::string> node_names = {}) const
      ABSL_LOCKS_EXCLUDED(mu_, memory_mu_);
  // Filter() for a host that reserves next, with Reserve() and the nodes
  // that fit in BetterVerdict() order (the extender): the same verdicts,
  // but of the pod's own only the best fitting node's is remembered, with
  // its allocation for the reserve step (all of them when none fits).
  // Remembering a verdict per node cost more than filtering an unchanged
  // one; a node beyond the first that Reserve() tries is filtered again.
  // Names are views, so that a host need not copy each into a string.
  absl::StatusOr<std::vector<NodeVerdict>> FilterForReserve(
      const PodRequest& request,
      absl::Span<const absl::string_view> node_names = {}) const
      ABSL_LOCKS_EXCLUDED(mu_, memory_mu_);
  // What FilterBriefly() gives per node: the code and a rejection's
  // reason (the message, else NodeFit::Reason()); a fit's score, stranded
  // capacity and mode.
  struct BriefVerdict {
    ReasonCode code = ReasonCode::kFits;
    int score = 0;
    int stranded_percent = 0;
    SharingMode mode;
    std::string reason;  // rejections only

    bool fits() const { return code == ReasonCode::kFits; }
  };
  // FilterForReserve() for a host that holds the names itself (the
  // extender): one BriefVerdict per name, in order, from the same verdicts
  // and leaving the same memory for Reserve(), but without a name or a
  // NodeVerdict per node. No names: none (after the prefilter step).
  absl::StatusOr<std::vector<BriefVerdict>> FilterBriefly(
      const PodRequest& request,
      absl::Span<const absl::string_view> node_names) const
      ABSL_LOCKS_EXCLUDED(mu_, memory_mu_);
  absl::StatusOr<NodeVerdict> FilterNode(const PodRequest& request,
                                         const std::string& node) const
      ABSL_LOCKS_EXCLUDED(mu_, memory_mu_);
  // FilterNode as if the pods `released` (uids) were gone from `node`: what
  // a host's preemption simulation asks (kube-scheduler's
  // PreFilterExtensions.RemovePod). They are released from a copy of the
  // node as RemovePod releases a pod (every backend, then its host CPU and
  // memory); a uid of a pod not placed on the node is ignored. No verdict
  // memo (each call filters its own copy), and the namespace's GPU quota
  // is checked as it is now. No released pods: FilterNode.
  absl::StatusOr<NodeVerdict> FilterNodeWithout(
      const PodRequest& request, const std::string& node,
      absl::Span<const std::string> released) const
      ABSL_LOCKS_EXCLUDED(mu_, memory_mu_);
  // The node policy's score, 0..100; FailedPrecondition (with the reason)
  // when the pod does not fit the node.
  absl::StatusOr<int> ScoreNode(const PodRequest& request,
                                const std::string& node) const
      ABSL_LOCKS_EXCLUDED(mu_, memory_mu_);

  // Reserves the pod on `node` and returns the decision with the
  // annotations to write on the pod; when it does not fit, a decision
  // without allocation whose reasons say why. AlreadyExists if the pod is
  // placed.
  absl::StatusOr<Decision> Allocate(const PodRequest& request,
                                    const std::string& node)
      ABSL_LOCKS_EXCLUDED(mu_, memory_mu_);

  // Reserves the pod on the first of `candidates`, in that order, that
  // fits; check and commit happen under one exclusive lock. The reserve
  // step of a host that filtered and ranked first (the extender). A pod
  // already placed is AlreadyExists, unless `replace`: then its placement
  // is released first and put back unchanged when no candidate fits, all
  // under the same lock.
  absl::StatusOr<ReserveOutcome> Reserve(
      const PodRequest& request, absl::Span<const std::string> candidates,
      bool replace = false) ABSL_LOCKS_EXCLUDED(mu_, memory_mu_);

  // Forgets a pod and frees its shares: the unreserve step, and a pod that
  // is gone. Idempotent.
  void Release(absl::string_view pod_uid) ABSL_LOCKS_EXCLUDED(mu_);

  // Records a placement decided elsewhere (a pod event, a bind of a
  // filtered placement).
  absl::Status Bind(const PodRequest& request, const PodAllocation& allocation)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Records a pod bound elsewhere from its allocation record (either
  // dialect, k8s/pod_annotations.h); false when it carries none. A MIG
  // record that does not read is left out and its GPUs held whole (fail
  // closed); its error is appended to `unread` when that is given.
  absl::StatusOr<bool> AddBoundPod(
      const PodRequest& request,
      const std::map<std::string, std::string>& annotations,
      const std::string& node, std::vector<absl::Status>* unread = nullptr)
      ABSL_LOCKS_EXCLUDED(mu_);

  // ---- Events and queries -------------------------------------------------

  absl::StatusOr<std::vector<std::string>> UpsertNode(NodeInventory inventory)
      ABSL_LOCKS_EXCLUDED(mu_);
  void RemoveNode(absl::string_view name) ABSL_LOCKS_EXCLUDED(mu_);

  // DRA objects (dra/dra_cluster.h has what each event does). Bad input is
  // InvalidArgument naming the object and the field; the other objects
  // stay as they were.
  void UpsertDeviceClass(dra::DeviceClass device_class)
      ABSL_LOCKS_EXCLUDED(mu_);
  void RemoveDeviceClass(const std::string& name) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status UpsertResourceSlice(dra::ResourceSlice slice)
      ABSL_LOCKS_EXCLUDED(mu_);
  void RemoveResourceSlice(const std::string& name) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status UpsertResourceClaim(dra::ResourceClaim claim)
      ABSL_LOCKS_EXCLUDED(mu_);
  // `key`: "namespace/name".
  void RemoveResourceClaim(const std::string& key) ABSL_LOCKS_EXCLUDED(mu_);

  // GPU quotas (model/gpu_quota.h): a ResourceQuota object's GPU limits,
  // added or replaced, and removed by namespace and name. A pod whose
  // placement would take its namespace past a limit is not placed
  // (QuotaExceeded on every node). Filter() refuses by the least the pod
  // can hold (LeastQuotaUseOf), the reserve and schedule steps by what its
  // placement holds.
  void UpsertQuota(GpuQuota quota) ABSL_LOCKS_EXCLUDED(mu_);
  void RemoveQuota(absl::string_view namespace_name, absl::string_view name)
      ABSL_LOCKS_EXCLUDED(mu_);

  // The node a pod is placed on, if it is.
  std::optional<std::string> PodNode(absl::string_view pod_uid) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // What the node agent injects into container `container_index`: its
  // backend's edits, or GpulessContainerEdits for a container without GPUs.
  absl::StatusOr<ContainerEdits> Edits(const PodAllocation& allocation,
                                       size_t container_index,
                                       const EditOptions& options) const;

  // Runs `reader` with the state under the shared lock.
  void Inspect(const std::function<void(const ClusterState&)>& reader) const
      ABSL_LOCKS_EXCLUDED(mu_);

  const Config& config() const { return config_; }
  // The decision path and backends every step uses (immutable), for hosts
  // that ask more of the state under Inspect (preemption's victim search).
  const DecisionPath& path() const { return path_; }
  const BackendSet& backends() const { return backends_; }

  // Filter() without any remembered verdict, allocations included: what
  // every node says now. Empty when the prefilter step fails.
  std::vector<NodeVerdict> FilterFreshForTest(
      const PodRequest& request,
      absl::Span<const std::string> node_names = {}) const
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  Scheduler(Config config, BackendSet backends, PolicySet policies,
            const Clock* clock, std::function<std::string()> new_share_id);

  absl::StatusOr<ReserveOutcome> ReserveLocked(
      const PodCycle& cycle, absl::Span<const std::string> candidates)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) ABSL_LOCKS_EXCLUDED(memory_mu_);
  // The best of `candidates` (all nodes when empty), filtered afresh.
  std::optional<NodeVerdict> BestOf(
      const PodCycle& cycle, absl::Span<const std::string> candidates) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  Decision DecisionFor(const PodRequest& request, NodeVerdict placed,
                       std::vector<ClaimDecision> claims,
                       bool annotations) const;
  // A placed pod's claims with their allocations.
  std::vector<ClaimDecision> ClaimsOf(const PodRequest& request,
                                      const NodeVerdict& placed) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // A candidate node for a pod with claims and an upper bound of its score
  // (dra::DraCluster::Bound through the node policy's ScoreBound).
  struct RankedNode {
    int bound = 100;
    const NodeState* node = nullptr;
  };
  // The candidates that may fit, best bound first (names ascending within
  // a bound).
  std::vector<RankedNode> RankClaimCandidates(const PodCycle& cycle) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // The best node for a pod with claims: candidates in bound order, from
  // the verdicts remembered for its shape where a node is unchanged, until
  // no bound can beat the best; the winner filtered afresh.
  std::optional<NodeVerdict> SearchClaims(const PodCycle& cycle)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) ABSL_LOCKS_EXCLUDED(memory_mu_);
  // Why `want` more would take the pod's namespace past its quota (the
  // pod's own placement, if it has one, not counted); nullopt if it fits.
  std::optional<std::string> QuotaRefusal(const PodRequest& request,
                                          const GpuQuotaUse& want) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // The decision for a pod its quota refuses: every candidate (every node
  // when none are named) says `why`.
  Decision QuotaRefused(const std::string& why,
                        const ScheduleOptions& options) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // The key of the tallies of the pod's GPU shape: what its GPU steps
  // depend on (a pod with claims is never tallied).
  static std::string TallyKeyOf(const PodCycle& cycle);
  // The shape's tallies, marked used (emptied when taken at another
  // scores version, internal::ScoresVersion); nullptr when none are kept.
  BucketTallies* FindTallies(const std::string& key, uint64_t scores_version)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The shape's tallies, made (empty) when none are kept.
  BucketTallies& KeepTallies(std::string key, uint64_t scores_version)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The verdict memory's key for the pod: its request shape and, for its
  // claims, what the filter reads of them.
  std::string ShapeOf(const PodRequest& request) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // The walk FilterForReserve() and FilterBriefly() share
  // (src/scheduler/filter_walk.h): `emit` per named node, from the pod's
  // and its shape's memory at the pod's scores version, under memory_mu_.
  template <typename Emit>
  void WalkRemembered(const PodCycle& cycle,
                      absl::Span<const absl::string_view> node_names,
                      Emit emit) const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  const Config config_;
  const BackendSet backends_;
  const PolicySet policies_;
  const Clock* const clock_;
  const DecisionPath path_;
  mutable absl::Mutex mu_;
  ClusterState state_ ABSL_GUARDED_BY(mu_);
  // Taken after mu_ (shared or exclusive), never before.
  mutable absl::Mutex memory_mu_ ABSL_ACQUIRED_AFTER(mu_);
  std::unique_ptr<internal::VerdictMemory> memory_ ABSL_GUARDED_BY(memory_mu_);
  // Which nodes are twins, so that a filter evaluates each kind of
  // untouched node once per request (src/scheduler/twin_classes.h).
  std::unique_ptr<internal::TwinClasses> twin_classes_
      ABSL_GUARDED_BY(memory_mu_);
  // Bucket tallies by GPU shape (TallyKeyOf), of shapes that fit nowhere
  // twice with reasons counted (scheduler/bucket_tally.h); at most
  // kMaxTalliedShapes shapes (each holds a code per node), the least
  // recently used dropped first.
  struct ShapeTallies {
    BucketTallies tallies;
    uint64_t scores_version = 0;
    uint64_t last_used = 0;
  };
  static constexpr size_t kMaxTalliedShapes = 256;
  absl::flat_hash_map<std::string, ShapeTallies> tallies_ ABSL_GUARDED_BY(mu_);
  uint64_t tally_uses_ ABSL_GUARDED_BY(mu_) = 0;
  // GPU shapes that failed once with reasons counted (the second failure
  // starts their tallies); at most kMaxFailedOnceShapes.
  static constexpr size_t kMaxFailedOnceShapes = 4096;
  absl::flat_hash_set<std::string> failed_once_ ABSL_GUARDED_BY(mu_);
};

}  // namespace deviceshare

#endif  // DEVICESHARE_SCHEDULER_SCHEDULER_H_
