// Extender's watch feed: Node and Pod events into the Scheduler.
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/extender/extender.h"
#include "deviceshare/k8s/node_parser.h"
#include "deviceshare/k8s/pod_annotations.h"
#include "deviceshare/k8s/pod_parser.h"
#include "extender_log.h"
#include "pod_fields.h"
#include "spec_priority.h"

namespace deviceshare::extender {
namespace {

// When the record was written (vgpu-time, unix seconds), if it says.
std::optional<absl::Time> DecisionTime(
    const std::map<std::string, std::string>& annotations) {
  for (const char* key : {keys::kHamiTime, keys::kVolcanoTime}) {
    auto it = annotations.find(key);
    int64_t seconds = 0;
    if (it != annotations.end() && absl::SimpleAtoi(it->second, &seconds) &&
        seconds > 0) {
      return absl::FromUnixSeconds(seconds);
    }
  }
  return std::nullopt;
}

// The node a record is for: the binding, else the record's node key.
std::string RecordNode(const nlohmann::json& pod,
                       const std::map<std::string, std::string>& annotations) {
  std::string node = BoundNode(pod);
  if (!node.empty()) return node;
  for (const char* key : {keys::kHamiNode, keys::kVolcanoNode}) {
    auto it = annotations.find(key);
    if (it != annotations.end() && !it->second.empty()) return it->second;
  }
  return "";
}

// Whether the record is in HAMi's dialect, as the node agent decides it
// (agent/pod_record.cc): its bind-phase and times are then read from
// HAMi's keys, else from Volcano's.
bool HamiRecord(const std::map<std::string, std::string>& annotations) {
  return annotations.count(keys::kHamiAllocated) ||
         annotations.count(keys::kHamiToAllocate);
}

std::string Annotation(const std::map<std::string, std::string>& annotations,
                       const char* key) {
  auto it = annotations.find(key);
  return it == annotations.end() ? "" : it->second;
}

// When the pod was bound: bind-time, else the decision time, of the
// record's dialect.
std::optional<absl::Time> BindTime(
    const std::map<std::string, std::string>& annotations) {
  const bool hami = HamiRecord(annotations);
  for (const char* key : {hami ? keys::kHamiBindTime : keys::kVolcanoBindTime,
                          hami ? keys::kHamiTime : keys::kVolcanoTime}) {
    int64_t seconds = 0;
    if (absl::SimpleAtoi(Annotation(annotations, key), &seconds) &&
        seconds > 0) {
      return absl::FromUnixSeconds(seconds);
    }
  }
  return std::nullopt;
}

// Whether the pod carries an allocation record, in either dialect.
bool HasRecord(const std::map<std::string, std::string>& annotations) {
  return annotations.count(keys::kHamiAllocated) ||
         annotations.count(keys::kHamiToAllocate) ||
         annotations.count(keys::kVolcanoAllocation) ||
         annotations.count(keys::kVolcanoToAllocate) ||
         annotations.count(keys::kHamiMigAllocations);
}

}  // namespace

void Extender::TrackInFlightLocked(
    const std::string& uid, const std::string& key,
    const std::map<std::string, std::string>& annotations,
    const std::string& node, bool bound, const PodAllocation& allocation) {
  const std::string phase = Annotation(
      annotations,
      HamiRecord(annotations) ? keys::kHamiBindPhase : keys::kVolcanoBindPhase);
  if (!bound || phase != keys::kBindPhaseAllocating) {
    in_flight_.Remove(uid);
    return;
  }
  // Counted from the bind, so that after a restart a pod whose node agent
  // died long ago does not block its node for another timeout. An entry
  // this extender made at its bind keeps its own deadline.
  const absl::Time now = clock_->Now();
  const absl::Time deadline =
      BindTime(annotations).value_or(now) + options_.in_flight_timeout;
  if (deadline <= now) {
    in_flight_.Remove(uid);
    return;
  }
  in_flight_.Upsert(uid,
                    InFlightPod{key, node, deadline, GpuShares(allocation)});
}

void Extender::ApplyNode(const nlohmann::json& node) {
  const std::string name = Text(node, {"metadata", "name"});
  if (name.empty()) return;
  absl::StatusOr<NodeInventory> inventory =
      ParseNodeInventory(node, scheduler_->config().device);
  if (!inventory.ok()) {
    if (inventory.status().code() != absl::StatusCode::kNotFound) {
      LogNode(LogLevel::kWarn, name,
              absl::StrCat("node registration ignored: ",
                           inventory.status().message()));
    }
    // No (valid) registration: the node offers no shareable GPU now. Its
    // pods stay recorded off the ledger until it registers again.
    bool known = false;
    {
      absl::MutexLock lock(&mu_);
      known = watched_nodes_.erase(name) > 0;
    }
    if (known) scheduler_->RemoveNode(name);
    return;
  }
  // Node status heartbeats re-send unchanged registrations many times a
  // minute; only a changed inventory rebuilds the node's ledgers.
  bool unchanged = false;
  scheduler_->Inspect([&](const ClusterState& state) {
    const NodeState* current = state.FindNode(name);
    unchanged = current != nullptr && current->inventory() == *inventory;
  });
  {
    absl::MutexLock lock(&mu_);
    watched_nodes_.insert(name);
  }
  if (unchanged) return;
  absl::StatusOr<std::vector<std::string>> evicted =
      scheduler_->UpsertNode(*std::move(inventory));
  if (!evicted.ok()) {
    LogNode(LogLevel::kWarn, name,
            absl::StrCat("node registration rejected: ",
                         evicted.status().message()));
    return;
  }
  for (const std::string& pod : *evicted) {
    LogPod(LogLevel::kWarn, pod, name,
           "no longer fits the node's new inventory; kept off the ledger");
  }
  LogNode(LogLevel::kDebug, name, "node registered");
}

void Extender::OnNodeEvent(absl::string_view type, const nlohmann::json& node) {
  if (type == "DELETED") {
    const std::string name = Text(node, {"metadata", "name"});
    {
      absl::MutexLock lock(&mu_);
      watched_nodes_.erase(name);
    }
    scheduler_->RemoveNode(name);
    LogNode(LogLevel::kInfo, name, "node deleted");
    return;
  }
  ApplyNode(node);
}

void Extender::OnNodesReplaced(const std::vector<nlohmann::json>& nodes) {
  absl::flat_hash_set<std::string> listed;
  for (const nlohmann::json& node : nodes) {
    listed.insert(Text(node, {"metadata", "name"}));
  }
  std::vector<std::string> gone;
  {
    absl::MutexLock lock(&mu_);
    for (const std::string& name : watched_nodes_) {
      if (!listed.contains(name)) gone.push_back(name);
    }
    for (const std::string& name : gone) watched_nodes_.erase(name);
  }
  for (const std::string& name : gone) scheduler_->RemoveNode(name);
  for (const nlohmann::json& node : nodes) ApplyNode(node);
}

// A pod's allocation record as the watch shows it, parsed and charged
// together.
struct Extender::RecordedPod {
  std::string uid;
  // The node the record is for (RecordNode).
  std::string node;
  // Whether the pod has a Binding.
  bool bound = false;
  std::map<std::string, std::string> annotations;
  PodRequest request;
  PodAllocation allocation;
  // spec.priority, for /preempt's candidates; 0 when absent or invalid.
  int32_t priority = 0;
};

void Extender::ReleaseEndedPodLocked(const nlohmann::json& pod,
                                     const std::string& uid, bool deleted) {
  auto reservation = reservations_.find(uid);
  if (reservation != reservations_.end() &&
      reservation->second.state == ReservationState::kBinding) {
    reservation->second.deleted = true;
    return;
  }
  if (reservation != reservations_.end() || watched_pods_.contains(uid)) {
    LogPod(LogLevel::kDebug, PodKey(pod), "",
           deleted ? "pod deleted: released" : "pod finished: released");
  }
  if (reservation != reservations_.end()) reservations_.erase(reservation);
  watched_pods_.erase(uid);
  refused_records_.erase(uid);
  in_flight_.Remove(uid);
  scheduler_->Release(uid);
}

void Extender::ReleaseUnrecordedPodLocked(const nlohmann::json& pod,
                                          const std::string& uid) {
  // Our own reservation may simply not be written yet -- or the pod's
  // devices are all in claims, which leave no record on the pod: its
  // reservation then lasts until the pod ends.
  if (reservations_.contains(uid)) return;
  in_flight_.Remove(uid);
  if (watched_pods_.erase(uid) > 0) {
    LogPod(LogLevel::kInfo, PodKey(pod), "",
           "allocation record removed: released");
    scheduler_->Release(uid);
  }
}

bool Extender::RecordTrustedLocked(
    const nlohmann::json& pod, const std::string& uid,
    const std::map<std::string, std::string>& annotations,
    const std::string& node) {
  if (options_.record_keys == nullptr) return true;
  const trust::RecordCheck check =
      trust::CheckRecord(*options_.record_keys->Keys(), annotations, uid, node);
  if (options_.record_policy.Accepts(check.verdict)) return true;
  // A Running pod's containers hold their GPUs whoever handed them out:
  // not charging them would overcommit.
  const bool running = Text(pod, {"status", "phase"}) == "Running";
  if (refused_records_.insert(uid).second) {
    const std::string message = absl::StrCat(
        "allocation record ", trust::VerdictName(check.verdict), ": ",
        check.reason,
        running ? "; charged anyway: the pod is Running"
                : "; not charged: the node agent will not serve it");
    LogPod(LogLevel::kWarn, PodKey(pod), node, message);
    if (refused_records_total_ != nullptr) {
      refused_records_total_->Increment({trust::VerdictName(check.verdict)});
    }
    writer_->Event(PodName{Text(pod, {"metadata", "namespace"}),
                           Text(pod, {"metadata", "name"}), uid},
                   "Warning", "AllocationRecordRefused", message);
  }
  return running;
}

std::optional<Extender::RecordedPod> Extender::ReadRecordLocked(
    const nlohmann::json& pod, const std::string& uid,
    std::map<std::string, std::string> annotations) {
  const std::string node = RecordNode(pod, annotations);
  if (!RecordTrustedLocked(pod, uid, annotations, node)) {
    ReleaseUnrecordedPodLocked(pod, uid);
    return std::nullopt;
  }
  absl::StatusOr<PodRequest> request =
      ParsePodRequest(pod, scheduler_->config().device);
  if (!request.ok()) {
    LogPod(LogLevel::kWarn, PodKey(pod), node,
           absl::StrCat("allocation record not charged: ",
                        request.status().message()));
    CountUnaccounted();
    // The node agent reads records with the same parser: it will not serve
    // this one either, so there is nothing for it to confuse.
    in_flight_.Remove(uid);
    return std::nullopt;
  }
  std::vector<absl::Status> unread;
  absl::StatusOr<std::optional<PodAllocation>> allocation =
      AllocationFromAnnotations(*request, annotations, node,
                                scheduler_->config().device.memory_factor,
                                &unread);
  for (const absl::Status& why : unread) {
    LogPod(LogLevel::kWarn, request->Key(), node,
           absl::StrCat("MIG record left out, the pod's MIG GPUs are held "
                        "whole until it leaves: ",
                        why.message()));
  }
  if (!allocation.ok() || !allocation->has_value()) {
    LogPod(LogLevel::kWarn, request->Key(), node,
           absl::StrCat(
               "allocation record not charged: ",
               allocation.ok() ? "empty" : allocation.status().message()));
    CountUnaccounted();
    in_flight_.Remove(uid);
    return std::nullopt;
  }
  return RecordedPod{uid,
                     node,
                     !BoundNode(pod).empty(),
                     std::move(annotations),
                     *std::move(request),
                     **std::move(allocation),
                     SpecPriority(pod).value_or(0)};
}

bool Extender::SettleReservationLocked(const RecordedPod& record) {
  auto reservation = reservations_.find(record.uid);
  if (reservation == reservations_.end()) return false;
  const std::string& uid = record.uid;
  Reservation& ours = reservation->second;
  switch (ours.state) {
    case ReservationState::kBinding: {
      // The watch beat the Binding's answer; the bind finishes the job.
      // Its in-flight entry is already there, unless the node agent was
      // even faster.
      watched_pods_[uid] =
          WatchedPod{record.node, record.bound, record.priority};
      const std::string phase =
          Annotation(record.annotations, HamiRecord(record.annotations)
                                             ? keys::kHamiBindPhase
                                             : keys::kVolcanoBindPhase);
      if (record.bound && (phase == keys::kBindPhaseSuccess ||
                           phase == keys::kBindPhaseFailed)) {
        in_flight_.Remove(uid);
      }
      return true;
    }
    case ReservationState::kBound:
    case ReservationState::kRecorded:
      if (record.bound && ours.node == record.node) {
        reservations_.erase(reservation);  // confirmed
        watched_pods_[uid] = WatchedPod{record.node, true, record.priority};
        TrackInFlightLocked(uid, record.request.Key(), record.annotations,
                            record.node, true, record.allocation);
        return true;
      }
      if (!record.bound) return true;
      break;  // bound elsewhere: the API server is the truth
    case ReservationState::kFiltered:
      // Unbound record of an earlier run beside a fresh filter
      // reservation: the reservation wins; bind rewrites the record.
      if (!record.bound) return true;
      break;
  }
  reservations_.erase(reservation);
  return false;
}

void Extender::ChargeRecordLocked(RecordedPod record) {
  const std::string& uid = record.uid;
  const std::string& node = record.node;
  // Before the charge: a record the ledger cannot hold is still one the
  // node agent serves.
  TrackInFlightLocked(uid, record.request.Key(), record.annotations, node,
                      record.bound, record.allocation);
  const std::optional<std::string> current = scheduler_->PodNode(uid);
  if (!current || *current != node) {
    if (current) scheduler_->Release(uid);
    absl::Status charged = scheduler_->Bind(record.request, record.allocation);
    if (!charged.ok()) {
      LogPod(
          LogLevel::kError, record.request.Key(), node,
          absl::StrCat("allocation record not charged: ", charged.message()));
      watched_pods_.erase(uid);
      CountUnaccounted();
      return;
    }
  }
  watched_pods_[uid] = WatchedPod{node, record.bound, record.priority};
  if (!record.bound) {
    // A record without a Binding: an earlier run's bind that may never have
    // finished. It holds its room for one TTL from when it was written.
    Reservation& recorded = reservations_[uid];
    recorded.state = ReservationState::kRecorded;
    recorded.node = node;
    recorded.deadline =
        DecisionTime(record.annotations).value_or(clock_->Now()) +
        options_.reservation_ttl;
    recorded.request = std::move(record.request);
    recorded.allocation = std::move(record.allocation);
  }
}

void Extender::ApplyPodLocked(const nlohmann::json& pod, bool deleted) {
  const std::string uid = PodUid(pod);
  const std::string phase = Text(pod, {"status", "phase"});
  if (deleted || phase == "Succeeded" || phase == "Failed") {
    ReleaseEndedPodLocked(pod, uid, deleted);
    return;
  }
  std::map<std::string, std::string> annotations = PodAnnotationMap(pod);
  // Pods that carry no record and have no reservation are not ours to track
  // (most pods of a cluster ask for no GPU): skip parsing them.
  if (!HasRecord(annotations)) {
    ReleaseUnrecordedPodLocked(pod, uid);
    return;
  }
  std::optional<RecordedPod> record =
      ReadRecordLocked(pod, uid, std::move(annotations));
  if (!record) return;
  if (SettleReservationLocked(*record)) return;
  ChargeRecordLocked(*std::move(record));
}

void Extender::OnPodEvent(absl::string_view type, const nlohmann::json& pod) {
  absl::MutexLock lock(&mu_);
  ApplyPodLocked(pod, type == "DELETED");
}

void Extender::OnPodsReplaced(const std::vector<nlohmann::json>& pods) {
  absl::flat_hash_set<std::string> listed;
  for (const nlohmann::json& pod : pods) listed.insert(PodUid(pod));
  absl::MutexLock lock(&mu_);
  // A pod this extender bound that no watch event has shown yet may be
  // newer than the list's snapshot: its events come next, on the watch
  // from the list's resourceVersion. Dropping its charge now would offer
  // its GPUs again. It is held for one TTL, as an unbound record is.
  absl::flat_hash_set<std::string> unseen_binds;
  for (auto& [uid, reservation] : reservations_) {
    if (reservation.state == ReservationState::kBound &&
        !listed.contains(uid) && !watched_pods_.contains(uid)) {
      reservation.state = ReservationState::kRecorded;
      reservation.deadline = clock_->Now() + options_.reservation_ttl;
      unseen_binds.insert(uid);
    }
  }
  // What vanished between the last watch event and this list was deleted.
  std::vector<std::string> gone;
  for (const auto& [uid, watched] : watched_pods_) {
    if (!listed.contains(uid)) gone.push_back(uid);
  }
  for (const std::string& uid : in_flight_.Uids()) {
    if (!listed.contains(uid)) gone.push_back(uid);
  }
  for (const auto& [uid, reservation] : reservations_) {
    if (!listed.contains(uid) &&
        reservation.state != ReservationState::kBinding &&
        reservation.state != ReservationState::kFiltered) {
      gone.push_back(uid);
    }
  }
  for (const std::string& uid : gone) {
    if (unseen_binds.contains(uid)) continue;
    auto it = reservations_.find(uid);
    if (it != reservations_.end()) {
      if (it->second.state == ReservationState::kBinding) continue;
      reservations_.erase(it);
    }
    watched_pods_.erase(uid);
    in_flight_.Remove(uid);
    scheduler_->Release(uid);
  }
  for (const nlohmann::json& pod : pods) ApplyPodLocked(pod, false);
}

}  // namespace deviceshare::extender
