// File: scheduler/scheduler.h
//
// Scheduler: the facade every front end uses (the kube-scheduler extender,
// simulate, an embedding C++ scheduler). It filters a pod over nodes,
// scores the nodes that fit, commits the best placement, and releases pods,
// over a ClusterState that it owns and that events keep current.
//
// For each node, the pod's own mode picks the backend; a pod that names no
// mode is offered to every enabled backend, and of those that fit the node
// the one whose placement strands the least capacity serves it
// (policy/stranded_capacity.h), then the higher score, then config order.
// Node CPU and memory (when the inventory has them) are checked before any
// backend.
//
// Node choice: least stranded capacity (0 for hami-core and mps shares),
// then highest score, then the smaller node name, so a decision is
// deterministic and a tight placement beats a wasteful one. Schedule()
// reaches that choice without evaluating every node in full: backends give a
// cheap necessary fit test and a score upper bound, and nodes are visited best
// bound first (see scheduler.cc). The outcome's reasons are filled only when
// nothing fits.
//
// Thread safety: all methods are thread-safe. Filter runs under a shared
// lock; Schedule, Bind, Release and the event methods take the lock
// exclusively, so a decision and its commit are atomic.
#ifndef DEVICESHARE_SCHEDULER_SCHEDULER_H_
#define DEVICESHARE_SCHEDULER_SCHEDULER_H_

#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "deviceshare/backend/backend_set.h"
#include "deviceshare/backend/fit.h"
#include "deviceshare/config/scheduler_config.h"
#include "deviceshare/scheduler/cluster_state.h"

namespace deviceshare {

// The verdict for one node.
struct NodeVerdict {
  std::string node;
  NodeFit fit;
  int score = 0;  // in [0, 100]; meaningful only when fit.fits()
  SharingMode mode = SharingMode::kHamiCore;  // backend that fits
  int stranded_percent = 0;                   // policy/stranded_capacity.h
  // For a pod that names no mode, when more than one backend was asked and
  // explaining: why this mode, e.g. "mode mig chosen (least stranded
  // capacity) from hami-core: InsufficientMemory ...; mig: fits, ...".
  std::string mode_choice;
};

struct ScheduleOptions {
  // When nothing fits, how many nodes get a full reason in
  // ScheduleOutcome::reasons: every reason code once (its first node by
  // name), then further nodes by name. reason_counts always covers every
  // node. Explaining is the costly part of a failed decision.
  size_t max_explained_nodes = std::numeric_limits<size_t>::max();
  // When nothing fits, count every node's reason code (O(nodes x GPUs));
  // false leaves reason_counts empty and makes a failed decision about as
  // cheap as a successful one.
  bool count_reasons = true;
};

struct ScheduleOutcome {
  // Set when the pod was placed (and committed).
  std::optional<PodAllocation> allocation;
  int score = 0;
  SharingMode mode = SharingMode::kHamiCore;
  std::string mode_choice;  // NodeVerdict::mode_choice of the chosen node
  // When nothing fits: why, per node (node name -> reason starting with its
  // code), for up to ScheduleOptions::max_explained_nodes nodes ...
  std::map<std::string, std::string> reasons;
  // ... and how many nodes gave each reason code ("InsufficientMemory").
  std::map<std::string, int64_t> reason_counts;
};

// What Place() did.
struct PlaceOutcome {
  // The verdict of the node that took the pod (fit.allocation is what was
  // committed); unset when no candidate fits.
  std::optional<NodeVerdict> placed;
  // The verdicts of the candidates tried before the one that took the pod
  // (all of them when none did), in the given order: a caller that
  // filtered earlier learns which nodes stopped fitting meanwhile.
  std::vector<NodeVerdict> rejected;
  // The pod's placement that `replace` released (and, when nothing fit,
  // put back), if it had one.
  std::optional<PodAllocation> replaced;
};

class Scheduler {
 public:
  // `registry` is used only during construction.
  static absl::StatusOr<std::unique_ptr<Scheduler>> Create(
      const Config& config, const BackendRegistry& registry);

  // Verdicts for `node_names` (all nodes when empty), in the given order
  // (sorted by name for all nodes). Pure. Without `explain`, an unfit
  // verdict may carry its code alone (no message), which is much cheaper
  // when most nodes are rejected or when only the fits matter.
  std::vector<NodeVerdict> Filter(const PodRequest& request,
                                  absl::Span<const std::string> node_names = {},
                                  bool explain = true) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // Filter(request, node_names, /*explain=*/false), remembered: a node's
  // verdict for a request of the same shape (the PodRequest without its
  // identity) is reused while the node is unchanged
  // (ClusterState::NodeVersion), so filtering the replicas of a workload
  // over thousands of nodes costs a lookup per unchanged node. Verdicts
  // carry code, score, stranded capacity and mode only: no allocation, no
  // message. The memory is bounded (kMaxScreenShapes request shapes).
  std::vector<NodeVerdict> Screen(
      const PodRequest& request, absl::Span<const std::string> node_names) const
      ABSL_LOCKS_EXCLUDED(mu_, screen_mu_);
  static constexpr size_t kMaxScreenShapes = 256;

  // Filters all nodes, picks the best, commits it. A pod that fits nowhere
  // is not an error: the outcome has no allocation and the reasons.
  // AlreadyExists if the pod is already placed.
  absl::StatusOr<ScheduleOutcome> Schedule(const PodRequest& request,
                                           const ScheduleOptions& options = {})
      ABSL_LOCKS_EXCLUDED(mu_);

  // Evaluates the pod on `candidates`, in that order, and commits it to the
  // first that fits; check and commit happen under one exclusive lock, so
  // two concurrent calls can never both take the last room on a GPU. This
  // is the reservation step of a front end that decides in two phases (the
  // extender's filter, then bind). A pod already placed is AlreadyExists,
  // unless `replace`: then its placement is released first and put back
  // unchanged when no candidate fits, all under the same lock.
  absl::StatusOr<PlaceOutcome> Place(const PodRequest& request,
                                     absl::Span<const std::string> candidates,
                                     bool replace = false)
      ABSL_LOCKS_EXCLUDED(mu_);

  // The node a pod is placed on, if it is.
  std::optional<std::string> PodNode(absl::string_view pod_uid) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // The node choice of Schedule() and Place() callers that rank verdicts
  // themselves: less stranded capacity, higher score, smaller name.
  static bool Better(const NodeVerdict& a, const NodeVerdict& b);

  // Records a placement decided elsewhere (a pod event, an allocation read
  // back from annotations, a bind of a filtered placement).
  absl::Status Bind(const PodRequest& request, const PodAllocation& allocation)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Forgets a pod and frees its shares. Idempotent.
  void Release(absl::string_view pod_uid) ABSL_LOCKS_EXCLUDED(mu_);

  absl::StatusOr<std::vector<std::string>> UpsertNode(NodeInventory inventory)
      ABSL_LOCKS_EXCLUDED(mu_);
  void RemoveNode(absl::string_view name) ABSL_LOCKS_EXCLUDED(mu_);

  // What the node agent injects into container `container_index`.
  absl::StatusOr<ContainerEdits> Edits(const PodAllocation& allocation,
                                       size_t container_index,
                                       const EditOptions& options) const;

  // Runs `reader` with the state under the shared lock.
  void Inspect(const std::function<void(const ClusterState&)>& reader) const
      ABSL_LOCKS_EXCLUDED(mu_);

  const Config& config() const { return config_; }

 private:
  Scheduler(Config config, BackendSet backends);

  NodeVerdict Evaluate(const PodRequest& request, const NodeState& node,
                       const PlacementOptions& options) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  std::vector<NodeVerdict> FilterLocked(
      const PodRequest& request, absl::Span<const std::string> node_names,
      bool explain = true) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  PlacementOptions OptionsFor(const PodRequest& request) const;
  PlaceOutcome PlaceLocked(const PodRequest& request,
                           absl::Span<const std::string> candidates)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Fills the outcome's reasons and counts for a pod that fits nowhere.
  void Explain(const PodRequest& request, const PlacementOptions& placement,
               const ScheduleOptions& options, ScheduleOutcome& outcome) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Whether `backend` may serve the pod: its mode, when the pod names one.
  static bool Serves(const PodRequest& request, const SharingBackend& backend);
  // Node CPU and memory: kFits, kInsufficientCpu or kInsufficientNodeMemory.
  static ReasonCode HostCode(const PodRequest& request, const NodeState& node);
  // Over the backends that may serve the pod; -1 when none may.
  int UpperBound(const PodRequest& request, const NodeState& node,
                 const PlacementOptions& options) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  bool MayFit(const PodRequest& request, const NodeState& node) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  bool MayFitHeadroom(const PodRequest& request, const NodeShape& shape,
                      const GpuHeadroom& headroom) const;

  // One node's remembered Screen() verdict.
  struct ScreenEntry {
    uint64_t version = 0;
    ReasonCode code = ReasonCode::kFits;
    int score = 0;
    int stranded_percent = 0;
    SharingMode mode = SharingMode::kHamiCore;
  };

  const Config config_;
  const BackendSet backends_;
  mutable absl::Mutex mu_;
  ClusterState state_ ABSL_GUARDED_BY(mu_);
  // Taken after mu_ (shared), never before.
  mutable absl::Mutex screen_mu_ ABSL_ACQUIRED_AFTER(mu_);
  mutable absl::flat_hash_map<
      std::string, absl::flat_hash_map<const NodeState*, ScreenEntry>>
      screen_cache_ ABSL_GUARDED_BY(screen_mu_);
};

}  // namespace deviceshare

#endif  // DEVICESHARE_SCHEDULER_SCHEDULER_H_
