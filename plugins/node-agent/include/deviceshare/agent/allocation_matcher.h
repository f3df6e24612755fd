// File: agent/allocation_matcher.h
//
// AllocationMatcher: decides, for each Allocate call of kubelet, which pod's
// container it is for, and answers with exactly the share the scheduler
// recorded for that container -- never another pod's.
//
// Kubelet's device plugin API does not say which pod an Allocate is for:
// it passes only device ids, and kubelet picks them. Upstream guesses "the
// oldest pending pod with the same device count" and hands one pod's limits
// to another when two such pods are in flight on a node. The protocol here:
//
//  1. Waiting containers: those of pods bound to this node with an
//     allocation record, bind-phase not failed, not finished, not served
//     yet -- in kubelet's admission order, which is the order the pods were
//     decided and bound (record time, then the order this agent's watch saw
//     them, which follows the same API server stream as kubelet's).
//  2. GetPreferredAllocation(size) answers with replicas of exactly the GPUs
//     of the first waiting container of that size. Device ids name their
//     GPU ("<gpu-uuid>::<replica>"), so the ids kubelet then passes to
//     Allocate name the GPUs the scheduler chose.
//  3. Allocate takes the first waiting container whose grants cover exactly
//     the GPUs of the ids (with multiplicity). Two waiting containers are
//     "confusable" when they ask the same number of devices with different
//     shares (GPUs, memory, cores, mode, MIG slot): no device id can tell
//     them apart. deviceshare's scheduler never binds a pod to a node while
//     a confusable pod is still in flight there (plugins/scheduler's bind),
//     so with it the first match is the right one. Containers with the same
//     share are interchangeable: whichever is taken, each gets exactly what
//     its own pod asked for.
//  4. Before answering, the match is written to the served journal
//     (agent/served_journal.h) with the device ids, so a restarted agent
//     neither serves a container twice nor forgets one. When every GPU
//     container of a pod is served, its bind-phase becomes "success" (which
//     ends its being in flight for the scheduler).
//  Signed records (options.record_keys): a pod whose record's signature
//     is missing (unless options.record_policy accepts unsigned records) or
//     wrong (trust/record_signature.h) never waits: an Allocate for its
//     GPUs is refused with PermissionDenied naming the pod and why, and the
//     pod gets one Warning Event (through `report`).
//  5. PreStartContainer (this plugin requires it) runs after kubelet has
//     recorded which pod holds the ids (agent/kubelet_checkpoint.h). If that
//     is not the pod served -- records written by another scheduler can
//     leave confusable pods in flight -- interchangeable shares only correct
//     the journal; otherwise the container is refused: it never runs with
//     another pod's limits.
//
// Thread safety: all methods may be called from any thread; one lock
// serializes matching (kubelet admits one container at a time anyway).
#ifndef DEVICESHARE_AGENT_ALLOCATION_MATCHER_H_
#define DEVICESHARE_AGENT_ALLOCATION_MATCHER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "deviceshare/agent/container_allocator.h"
#include "deviceshare/agent/pod_record.h"
#include "deviceshare/agent/served_journal.h"
#include "deviceshare/backend/sharing_backend.h"
#include "deviceshare/config/scheduler_config.h"
#include "deviceshare/model/gpu.h"
#include "deviceshare/trust/record_keys.h"
#include "deviceshare/trust/record_signature.h"

namespace deviceshare::agent {

struct AllocationMatcherOptions {
  std::string node_name;
  std::string resource_name = "nvidia.com/gpu";
  std::string hook_path = "/usr/local/vgpu";
  std::string mps_root = "/run/deviceshare/mps";
  // kubelet_internal_checkpoint; "" skips the PreStart check.
  std::string kubelet_checkpoint_path;
  // When set (e.g. "nvidia.com/gpu"), containers also get CDI device names
  // "<kind>=<uuid>" for every GPU or MIG uuid they see.
  std::string cdi_kind;
  // Kubelet and the agent watch pods separately, so kubelet may admit a pod
  // a moment before the agent's watch delivers it: a GetPreferredAllocation
  // or Allocate that matches no waiting container waits this long for pod
  // events before answering without a match.
  absl::Duration pod_watch_grace = absl::Seconds(2);
  // The node's pods read afresh from the API server (a LIST), asked once
  // when the grace has passed without a match: a watch that comes back
  // after an API server restart can lag kubelet's by longer than the grace,
  // and refusing would fail the pod's admission for good. Empty: no second
  // look.
  std::function<absl::StatusOr<std::vector<nlohmann::json>>()> list_pods;
  // While list_pods fails (the API server is down or restarting), it is
  // asked again every list_retry_interval for up to api_unreachable_wait
  // before the call is answered without a match. Kubelet turns a refused
  // Allocate into the pod's failed admission, for good, so waiting out an
  // API server restart is the lesser harm; kubelet sets no deadline on the
  // call.
  absl::Duration api_unreachable_wait = absl::Seconds(60);
  absl::Duration list_retry_interval = absl::Seconds(1);
  // Set: serve only records these keys signed (not owned). Null: any.
  trust::RecordKeySource* record_keys = nullptr;
  trust::RecordPolicy record_policy;
  // Told once per pod whose record is refused ("namespace/name", uid, the
  // message), outside the matcher's lock: an Event, say. May be empty.
  std::function<void(const std::string& pod_key, const std::string& pod_uid,
                     const std::string& message)>
      report_refused_record;
};

// Completes a pod's MIG grants (mig_uuid, instance ids) before its edits are
// made: creates or adopts the instances. Gets every live record, so that it
// knows which instances are held.
using MigPreparer = std::function<absl::Status(
    const PodRecord& record, int32_t container_index,
    std::vector<DeviceGrant>& grants, const std::vector<PodRecord>& live)>;

// Writes annotations to a pod: "namespace/name" and a merge patch's
// metadata.annotations (null deletes). Must not block for long; the
// agent's PodPatchQueue retries in the background.
using PodAnnotator =
    std::function<void(const std::string& pod_key, const std::string& pod_uid,
                       const nlohmann::json& annotations)>;

struct MatcherStats {
  int64_t served = 0;
  int64_t refused = 0;     // Allocate calls answered with an error
  int64_t confusable = 0;  // matches among differing candidates
  int64_t swapped = 0;     // journal corrections at PreStart
  int64_t prestart_refused = 0;
};

class AllocationMatcher : public ContainerAllocator {
 public:
  // `config` makes the backends whose edits containers get. `journal` is
  // owned; `annotate` and `prepare_mig` may be empty.
  static absl::StatusOr<std::unique_ptr<AllocationMatcher>> Create(
      AllocationMatcherOptions options, const Config& config,
      std::unique_ptr<ServedJournal> journal, PodAnnotator annotate,
      MigPreparer prepare_mig);

  // The node's GPUs as registered: a grant's mode comes from its GPU (an
  // MPS GPU's grants are MPS whatever the record's strings say).
  void SetGpus(const std::vector<Gpu>& gpus);

  // The pod watch: every pod bound to the node (replace) and changes.
  void ReplacePods(const std::vector<nlohmann::json>& pods);
  void ApplyPod(absl::string_view type, const nlohmann::json& pod);

  // ContainerAllocator.
  absl::StatusOr<std::vector<std::string>> Preferred(
      const std::vector<std::string>& available,
      const std::vector<std::string>& must_include, int size) override;
  absl::StatusOr<ContainerGrant> Allocate(
      const std::vector<std::string>& device_ids) override;
  absl::Status PreStart(const std::vector<std::string>& device_ids) override;

  // Records of live pods (for tests).
  std::vector<PodRecord> LiveRecords() const;
  // Runs `work` on the live records while no Allocate can run: the orphan
  // MIG sweep must not destroy an instance a new pod is being given.
  void WithLiveRecords(
      const std::function<void(const std::vector<PodRecord>&)>& work);
  MatcherStats stats() const;

 private:
  struct PodState {
    PodRecord record;
    // Set when the record is not served: its signature's verdict and why.
    std::optional<trust::RecordCheck> refused;
    int64_t sequence = 0;  // watch arrival, breaks decided_at ties
  };
  struct Candidate {
    const PodState* pod;
    int32_t container_index;
  };

  AllocationMatcher(AllocationMatcherOptions options,
                    std::unique_ptr<ServedJournal> journal,
                    PodAnnotator annotate, MigPreparer prepare_mig);

  void ReplacePodsUnreported(const std::vector<nlohmann::json>& pods)
      ABSL_LOCKS_EXCLUDED(mu_);
  void UpsertLocked(const nlohmann::json& pod)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The signature's verdict when the record of `pod` must not be served
  // (nullopt when it may), queueing the report of a newly refused one.
  std::optional<trust::RecordCheck> CheckSignatureLocked(
      const nlohmann::json& pod, const PodRecord& record)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Hands the queued refusal reports over; call without the lock.
  void ReportRefusals() ABSL_LOCKS_EXCLUDED(mu_);
  // GPU containers of pods whose record is refused.
  std::vector<Candidate> RefusedLocked() const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The refusal for `gpus` when only refused records wait for them.
  std::optional<absl::Status> RefusedRecordFor(
      const std::vector<std::string>& gpus) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ForgetLocked(const std::string& uid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ServedLocked(const std::string& uid, int32_t container) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Upserts the pods options_.list_pods reads (the lock is released
  // meanwhile), retrying a failed read as options_ say; false when there is
  // no list_pods or every read failed.
  bool RefreshFromApiLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Waits for the pod watch's next event until `deadline`; false when none
  // came.
  bool AwaitPodEventLocked(absl::Time deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // GetPreferredAllocation's match against the containers waiting now: true
  // with the replicas of the first waiting container of `size`'s GPUs;
  // false with any valid answer when none waits.
  bool PreferredLocked(const std::vector<std::string>& available,
                       const std::vector<std::string>& must_include,
                       const std::vector<std::string>& included_gpus, int size,
                       std::vector<std::string>* answer)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Waiting containers in decision order.
  std::vector<Candidate> WaitingLocked() const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<PodRecord> LiveRecordsLocked() const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<ContainerGrant> EditsLocked(const PodState& pod,
                                             int32_t container_index)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MaybeFinishLocked(const PodState& pod)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes bind-phase=allocating back on a pod whose success this agent
  // wrote and a PreStart swap took back.
  void MarkAllocatingLocked(const PodRecord& record)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const AllocationMatcherOptions options_;
  const PodAnnotator annotate_;
  const MigPreparer prepare_mig_;
  std::map<SharingMode, std::unique_ptr<SharingBackend>> backends_;
  DeviceConfig device_config_;

  mutable absl::Mutex mu_;
  std::unique_ptr<ServedJournal> journal_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, PodState> pods_ ABSL_GUARDED_BY(mu_);
  // Counts pod-watch deliveries, for Allocate's wait on a miss.
  int64_t pod_events_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, Gpu> gpus_ ABSL_GUARDED_BY(mu_);
  // Pods whose bind-phase=success from this agent stands: every container
  // served (MaybeFinishLocked writes it once).
  std::set<std::string> finished_ ABSL_GUARDED_BY(mu_);
  // Pods this agent ever marked bind-phase=success, kept while they live: a
  // success it did not write means another plugin served the pod, one it
  // wrote is overruled by the journal (a PreStart swap can take a served
  // container back).
  std::set<std::string> marked_success_ ABSL_GUARDED_BY(mu_);
  int64_t next_sequence_ ABSL_GUARDED_BY(mu_) = 0;
  // Ids offered by GetPreferredAllocation and not yet allocated, with when
  // the offer lapses: a second admission running meanwhile is offered other
  // replicas (kubelet admits one at a time, a stress test may not).
  std::map<std::string, absl::Time> offered_ ABSL_GUARDED_BY(mu_);
  MatcherStats stats_ ABSL_GUARDED_BY(mu_);
  struct RefusalReport {
    std::string pod_key, pod_uid, message;
  };
  std::vector<RefusalReport> refusal_reports_ ABSL_GUARDED_BY(mu_);
};

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_ALLOCATION_MATCHER_H_
