// File: extender/extender.h
//
// Extender: the kube-scheduler extender's logic (filter, prioritize, bind)
// over a Scheduler that watches keep current, with no I/O of its own
// besides the PodWriter. The HTTP server (extender_server.h) decodes
// requests and encodes answers around it.
//
// How a pod goes through it:
//  - /filter evaluates the pod on the candidate nodes (under the
//    Scheduler's shared lock, so filters of many pods run in parallel),
//    then reserves it on the best node that fits: the Scheduler's Place()
//    checks and commits in one step, so two pods can never both take the
//    last room on a GPU. The reservation expires after `reservation_ttl`
//    unless a bind follows.
//  - /prioritize answers 10 for the reserved node and 0..9 for the other
//    nodes that fit (their score), steering kube-scheduler to the
//    reservation without hiding the alternatives.
//  - /bind takes the reservation over (or, when kube-scheduler picked
//    another node or the reservation expired, moves it there in one atomic
//    step, or fails if it no longer fits), writes the allocation record in
//    the pod's dialect (both projects' node agents read it), creates the
//    Binding, and on any failure releases the reservation, removes the
//    record and reports the error.
//  - Pods with DRA ResourceClaims (spec.resourceClaims; for clusters whose
//    kube-scheduler profile disables DynamicResources and leaves the claims
//    to the extender) go the same way: /filter allocates their claims on
//    the node it reserves (the Scheduler's DRA allocator), and /bind writes
//    each newly allocated claim's status.allocation and the pod into every
//    claim's status.reservedFor (claim_binder.h) before the Binding; a
//    failed bind removes what it wrote. Claims already allocated (by
//    anyone) are honoured: they pin the pod to their node.
//  - /bind also refuses, for now, a pod that the node agent could confuse
//    with another pod still in flight on the same node (see below); the
//    pod's reservation is rolled back as for a failed bind and
//    kube-scheduler retries it.
// There is no node-wide lock: reservations are per pod, and nothing is held
// across an API call except the pod's own reservation.
//
// One pod in flight per confusable share and node. Kubelet's Allocate call
// carries device ids but no pod, so the node agent serves containers in
// kubelet's admission order and verifies at PreStartContainer
// (agent/allocation_matcher.h). That can only go wrong while two pods bound
// to one node are in flight -- bound, record written, node agent not done
// (bind-phase "allocating", in either dialect) -- and a container of one
// and a container of the other ask for the same number of devices with
// different shares (GPU uuids, memory, cores, mode or MIG slot). So /bind
// of pod Q to node N fails with "node N is still handing out pod P's GPUs
// (same device count, different share); retry" while such a P is in flight
// on N; containers with identical shares are interchangeable and do not
// count. P stops counting when the watch shows bind-phase "success" or
// "failed", when P finishes or is deleted, or `in_flight_timeout` after it
// was bound (a dead node agent must not block a node forever; its PreStart
// check still protects after that). A pod bound here counts from the moment
// its bind passes this check (before the watch shows it), so two concurrent
// binds cannot both pass. Pods in flight are indexed per node
// (extender/in_flight.h): the check never scans the cluster's pods.
// Refusals are counted (deviceshare_extender_binds_deferred_total) and
// logged, one line each.
//
// Watches feed it Node and Pod events (OnNode*, OnPod*): nodes register
// from their annotation in either dialect; a pod that carries an allocation
// record is charged, a deleted or finished pod released. DeviceClasses,
// ResourceSlices and ResourceClaims go to the DRA feed (dra_feed.h); a
// claim's status.allocation is charged from the claim itself. A restarted
// extender rebuilds everything from the first list.
//
// Signed records (ExtenderOptions::record_keys): /bind signs each record
// it writes (trust/record_signature.h), and a record read from the watch
// whose signature is missing or wrong is not charged -- the node agent will
// not serve it -- unless the pod is already Running (its containers hold
// GPUs, whoever gave them) or, for unsigned ones, unsigned records are
// accepted. Such records are logged, counted
// (deviceshare_extender_refused_records_total{verdict}) and reported in an
// Event once per pod.
//
// Thread safety: every method is thread-safe.
#ifndef DEVICESHARE_EXTENDER_EXTENDER_H_
#define DEVICESHARE_EXTENDER_EXTENDER_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "deviceshare/clock.h"
#include "deviceshare/extender/claim_writer.h"
#include "deviceshare/extender/dra_feed.h"
#include "deviceshare/extender/extender_wire.h"
#include "deviceshare/extender/in_flight.h"
#include "deviceshare/extender/metrics.h"
#include "deviceshare/extender/pod_writer.h"
#include "deviceshare/extender/quota_feed.h"
#include "deviceshare/extender/reservation.h"
#include "deviceshare/scheduler/scheduler.h"
#include "deviceshare/trust/record_keys.h"
#include "deviceshare/trust/record_signature.h"
#include "nlohmann/json.hpp"

namespace deviceshare::extender {

struct ExtenderOptions {
  // How long a /filter reservation waits for its /bind, and how long an
  // unbound allocation record read from a pod counts before it is dropped.
  absl::Duration reservation_ttl = absl::Seconds(30);
  // How long a bound pod whose node agent has not handed out its GPUs yet
  // (bind-phase "allocating") keeps binds of confusable pods off its node.
  // Zero turns the rule off.
  absl::Duration in_flight_timeout = absl::Seconds(60);
  // Set: sign the records /bind writes and check those the watch reads
  // (not owned; outlives the extender). Null: neither.
  trust::RecordKeySource* record_keys = nullptr;
  trust::RecordPolicy record_policy;
};

// Counters for /metrics, read with Extender::stats().
struct ExtenderStats {
  // Nodes rejected by /filter and /bind, by reason code.
  std::map<std::string, int64_t> rejections;
  // Failed binds by stage: NoFit, PodGone, Patch, Claims, Binding, ...
  std::map<std::string, int64_t> bind_failures;
  int64_t reservations_in_flight = 0;  // kFiltered + kBinding
  int64_t reservations_expired = 0;
  int64_t binds = 0;
  // Binds refused because a confusable pod was in flight on the node.
  int64_t binds_deferred = 0;
  // Bound pods whose node agent has not handed out their GPUs yet.
  int64_t pods_allocating = 0;
  // Pods whose allocation record could not be charged (it names unknown
  // GPUs or does not fit the ledger): counted nowhere, so worth an alert.
  int64_t unaccounted_pods = 0;
};

class ClaimBinder;
struct ClaimWrite;
class NameOrder;

class Extender {
 public:
  // `scheduler`, `writer`, `clock` and `claims` must outlive the extender.
  // Without `claims`, /bind fails for pods with ResourceClaims.
  Extender(Scheduler* scheduler, PodWriter* writer, const Clock* clock,
           ExtenderOptions options, ClaimWriter* claims = nullptr);
  ~Extender();

  FilterResult Filter(const ExtenderArgs& args);
  std::vector<HostPriority> Prioritize(const ExtenderArgs& args);
  // Prioritize()'s answer as EncodePriorityList writes it; from the
  // filter's ranking without a HostPriority per node.
  std::string PrioritizeJson(const ExtenderArgs& args);
  // Returns the error for ExtenderBindingResult; empty on success.
  std::string Bind(const BindingArgs& args);
  // The preempt verb (extender_preempt.cc): for each node kube-scheduler
  // proposes, the fewest lower-priority pods bound there whose eviction
  // lets the pod's GPUs fit (preemption/victim_search.h), chosen among
  // every pod charged on the node, not only kube-scheduler's victims; a
  // node where none helps, or that the extender does not know, is left
  // out. Where the pod's GPUs fit already, kube-scheduler's own victims
  // stand. Nothing is released here: victims free their room when the
  // watch shows them gone. InvalidArgument for a pod whose spec.priority
  // is not an int32.
  absl::StatusOr<PreemptionResult> Preempt(const PreemptionArgs& args);

  // Watch events. `*Replaced` follows a (re)list with the full set; the
  // object of a DELETED event is the last state of the object.
  void OnNodesReplaced(const std::vector<nlohmann::json>& nodes);
  void OnNodeEvent(absl::string_view type, const nlohmann::json& node);
  void OnPodsReplaced(const std::vector<nlohmann::json>& pods);
  void OnPodEvent(absl::string_view type, const nlohmann::json& pod);
  void OnDeviceClassesReplaced(const std::vector<nlohmann::json>& classes) {
    dra_feed_.OnClassesReplaced(classes);
  }
  void OnDeviceClassEvent(absl::string_view type, const nlohmann::json& cls) {
    dra_feed_.OnClassEvent(type, cls);
  }
  void OnResourceSlicesReplaced(const std::vector<nlohmann::json>& slices) {
    dra_feed_.OnSlicesReplaced(slices);
  }
  void OnResourceSliceEvent(absl::string_view type,
                            const nlohmann::json& slice) {
    dra_feed_.OnSliceEvent(type, slice);
  }
  void OnResourceClaimsReplaced(const std::vector<nlohmann::json>& claims) {
    dra_feed_.OnClaimsReplaced(claims);
  }
  void OnResourceClaimEvent(absl::string_view type,
                            const nlohmann::json& claim) {
    dra_feed_.OnClaimEvent(type, claim);
  }
  void OnResourceQuotasReplaced(const std::vector<nlohmann::json>& quotas) {
    quota_feed_.OnQuotasReplaced(quotas);
  }
  void OnResourceQuotaEvent(absl::string_view type,
                            const nlohmann::json& quota) {
    quota_feed_.OnQuotaEvent(type, quota);
  }

  // Drops expired reservations; returns how many. Call it periodically.
  int ExpireReservations();

  ExtenderStats stats() const;
  const Scheduler& scheduler() const { return *scheduler_; }
  // The extender's counters (rejections by reason, bind failures by stage,
  // binds, expired reservations) and gauges computed per scrape
  // (reservations in flight, per-GPU allocated memory and cores); the
  // server adds its latency histograms.
  MetricsRegistry& metrics() { return metrics_; }

 private:
  // A pod known to carry an allocation record, from the watch.
  struct WatchedPod {
    std::string node;
    bool bound = false;
    int32_t priority = 0;  // spec.priority; 0 when absent
  };
  // The pods bound on each of `nodes` that are charged here, with their
  // priorities: /preempt's candidates before the priority cut.
  std::map<std::string, std::vector<std::pair<std::string, int32_t>>>
  BoundPodsOn(const std::map<std::string, MetaVictims>& nodes) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // `nodes` more nodes rejected for `code`.
  void CountRejection(absl::string_view code, int64_t nodes = 1)
      ABSL_LOCKS_EXCLUDED(stats_mu_);
  void CountBindFailure(absl::string_view stage) ABSL_LOCKS_EXCLUDED(stats_mu_);
  void CountUnaccounted() ABSL_LOCKS_EXCLUDED(stats_mu_);
  // Registers the counters and the per-scrape gauges.
  void InitMetrics();
  // The scores of `names` from the ranking the pod's filter left, if it
  // left one.
  std::optional<std::vector<int>> RankedScores(const ExtenderArgs& args,
                                               const NameList& names)
      ABSL_LOCKS_EXCLUDED(mu_);
  std::string FailBind(const PodName& pod, absl::string_view stage,
                       std::string message) ABSL_LOCKS_EXCLUDED(stats_mu_);
  // /filter's steps. Refuses (the error) a pod being bound or bound, else
  // drops the pod's own earlier reservation.
  std::optional<std::string> StartFilterLocked(const PodRequest& request)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Fills the rejected nodes' reasons (moving their messages out) and
  // counts their codes; returns the positions in `names` of the nodes that
  // fit, best first. `verdicts` are those of `names`, in their order.
  std::vector<uint32_t> RecordRejections(
      const NameList& names, std::vector<Scheduler::BriefVerdict>& verdicts,
      FilterResult& result, std::map<std::string, int>& codes)
      ABSL_LOCKS_EXCLUDED(stats_mu_);
  // Reserves the pod on the best of `order` (the fitting nodes, best
  // first) that still fits and records the reservation; returns the nodes
  // that still fit, best first.
  std::vector<std::string> ReserveBest(PodRequest request,
                                       std::vector<std::string> order,
                                       FilterResult& result)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Drops the pod's reservation and its ledger charge unless a bind is in
  // flight.
  void DropUnboundLocked(const std::string& uid)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ApplyPodLocked(const nlohmann::json& pod, bool deleted)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A pod's allocation record, parsed; defined in extender_feed.cc.
  struct RecordedPod;
  // Releases a deleted or finished pod, or marks its bind in flight to undo.
  void ReleaseEndedPodLocked(const nlohmann::json& pod, const std::string& uid,
                             bool deleted) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Releases a watched pod whose allocation record was removed.
  void ReleaseUnrecordedPodLocked(const nlohmann::json& pod,
                                  const std::string& uid)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // False (logged, counted, an Event once per pod) when the record's
  // signature is not one the options accept and the pod is not Running.
  bool RecordTrustedLocked(
      const nlohmann::json& pod, const std::string& uid,
      const std::map<std::string, std::string>& annotations,
      const std::string& node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Parses the pod's record; nullopt (logged and counted) when it cannot.
  std::optional<RecordedPod> ReadRecordLocked(
      const nlohmann::json& pod, const std::string& uid,
      std::map<std::string, std::string> annotations)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) ABSL_LOCKS_EXCLUDED(stats_mu_);
  // True when the pod's reservation decides; else drops that reservation.
  bool SettleReservationLocked(const RecordedPod& record)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Charges the record to the ledger; an unbound one holds room for a TTL.
  void ChargeRecordLocked(RecordedPod record) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_)
      ABSL_LOCKS_EXCLUDED(stats_mu_);
  // Keeps `uid` in the in-flight index while the pod is bound and its
  // record's bind-phase (in the record's dialect) is "allocating".
  void TrackInFlightLocked(
      const std::string& uid, const std::string& key,
      const std::map<std::string, std::string>& annotations,
      const std::string& node, bool bound, const PodAllocation& allocation)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts and logs a bind refused because `blocker` is in flight on
  // `node`; returns the error for kube-scheduler.
  std::string DeferBind(const PodName& pod, const std::string& node,
                        const InFlightPod& blocker)
      ABSL_LOCKS_EXCLUDED(stats_mu_);
  void ApplyNode(const nlohmann::json& node);
  // Undoes a bind that got as far as `stage`: the claims written (first,
  // while the reservation still holds their room), the reservation, the
  // record when `patched`.
  std::string UndoBind(const PodName& pod, const PodRequest& request,
                       bool patched, const std::vector<ClaimWrite>& claims,
                       absl::string_view stage, std::string message);
  // /bind's steps. Those that return an optional string return Bind's
  // answer when the bind ends there (refused, failed, or already done),
  // nullopt when it goes on.
  // Takes the pod's filter (or recorded) reservation over, setting `request`.
  std::optional<std::string> TakeOverReservation(
      const PodName& pod, const std::string& node,
      std::optional<PodRequest>& request) ABSL_LOCKS_EXCLUDED(mu_, stats_mu_);
  // Without a reservation: reads the request from the pod and starts one.
  std::optional<std::string> ReserveFromPod(const PodName& pod,
                                            const std::string& node,
                                            std::optional<PodRequest>& request,
                                            std::string& uid)
      ABSL_LOCKS_EXCLUDED(mu_, stats_mu_);
  // Binds a pod that asks no GPU and has no claim, which kube-scheduler
  // should not send here.
  std::string BindWithoutGpus(const PodName& pod, const std::string& node,
                              const std::string& uid)
      ABSL_LOCKS_EXCLUDED(mu_, stats_mu_);
  // Keeps, moves or makes the reservation on `node`; drops it on no fit.
  // Sets the pod's allocation and its claims' decisions.
  std::optional<std::string> ReserveOnNodeLocked(
      const PodName& pod, const std::string& node, const std::string& uid,
      const PodRequest& request, PodAllocation& allocation,
      std::vector<ClaimDecision>& claims) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_)
      ABSL_LOCKS_EXCLUDED(stats_mu_);
  // The in-flight check: returns a pod that blocks this one, else enters it.
  std::optional<InFlightPod> ClaimInFlightLocked(
      const std::string& node, const std::string& uid,
      const PodRequest& request, const PodAllocation& allocation)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes the allocation record onto the pod, undoing the bind on failure.
  std::optional<std::string> WriteRecord(const PodName& pod,
                                         const PodRequest& request,
                                         const PodAllocation& allocation)
      ABSL_LOCKS_EXCLUDED(mu_, stats_mu_);
  // Allocates and reserves the pod's claims on `node` (claim_binder.h),
  // undoing the bind (record included) on failure; `writes` says what to
  // undo later.
  std::optional<std::string> WriteClaims(
      const PodName& pod, const PodRequest& request, const std::string& node,
      const std::vector<ClaimDecision>& claims, std::vector<ClaimWrite>& writes)
      ABSL_LOCKS_EXCLUDED(mu_, stats_mu_);
  // Creates the Binding, undoing the bind (record and claims included) on
  // failure.
  std::optional<std::string> CreateBinding(
      const PodName& pod, const PodRequest& request, const std::string& node,
      const std::vector<ClaimWrite>& claims)
      ABSL_LOCKS_EXCLUDED(mu_, stats_mu_);
  // Marks the reservation bound (or releases a pod deleted meanwhile).
  void FinishBind(const PodName& pod, const std::string& node,
                  const std::string& uid) ABSL_LOCKS_EXCLUDED(mu_, stats_mu_);

  Scheduler* const scheduler_;
  PodWriter* const writer_;
  const Clock* const clock_;
  const ExtenderOptions options_;
  DraFeed dra_feed_;
  QuotaFeed quota_feed_;
  // Null without a ClaimWriter.
  std::unique_ptr<ClaimBinder> claim_binder_;
  // The candidates' name order, to rank the fitting nodes.
  const std::unique_ptr<NameOrder> name_order_;

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Reservation> reservations_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, WatchedPod> watched_pods_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> watched_nodes_ ABSL_GUARDED_BY(mu_);
  // Pods whose refused record was reported (one Event each).
  absl::flat_hash_set<std::string> refused_records_ ABSL_GUARDED_BY(mu_);
  InFlightIndex in_flight_ ABSL_GUARDED_BY(mu_);

  mutable absl::Mutex stats_mu_;
  ExtenderStats stats_ ABSL_GUARDED_BY(stats_mu_);

  MetricsRegistry metrics_;
  CounterFamily* rejections_total_ = nullptr;
  CounterFamily* bind_failures_total_ = nullptr;
  CounterFamily* binds_total_ = nullptr;
  CounterFamily* expired_total_ = nullptr;
  CounterFamily* unaccounted_total_ = nullptr;
  CounterFamily* refused_records_total_ = nullptr;
  CounterFamily* deferred_total_ = nullptr;
};

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_EXTENDER_H_
