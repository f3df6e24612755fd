// Extender::Bind: reserve on the chosen node, write the allocation record
// and the claims' status, create the Binding; undo everything on any
// failure.
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "claim_binder.h"
#include "deviceshare/extender/extender.h"
#include "deviceshare/k8s/pod_annotations.h"
#include "deviceshare/k8s/pod_parser.h"
#include "extender_log.h"
#include "pod_fields.h"

namespace deviceshare::extender {
namespace {

std::map<std::string, std::optional<std::string>> ToPatch(
    const std::map<std::string, std::string>& annotations) {
  std::map<std::string, std::optional<std::string>> patch;
  for (const auto& [key, value] : annotations) patch[key] = value;
  return patch;
}

// The shares of `allocation` as the node agent will read them: written to
// annotations and read back, so that they compare alike with records read
// from the watch (the wire leaves out some fields, e.g. MIG slot sizes).
ContainerShares RecordShares(const PodRequest& request,
                             const PodAllocation& allocation,
                             const std::string& node, absl::Time now,
                             int32_t volcano_memory_factor) {
  absl::StatusOr<std::optional<PodAllocation>> read = AllocationFromAnnotations(
      request,
      AllocationAnnotations(allocation, request.dialect, now,
                            volcano_memory_factor),
      node, volcano_memory_factor);
  if (read.ok() && read->has_value()) return GpuShares(**read);
  return GpuShares(allocation);
}

}  // namespace

std::string Extender::DeferBind(const PodName& pod, const std::string& node,
                                const InFlightPod& blocker) {
  {
    absl::MutexLock lock(&stats_mu_);
    ++stats_.binds_deferred;
  }
  if (deferred_total_ != nullptr) deferred_total_->Increment({});
  std::string message = absl::StrFormat(
      "node %s is still handing out pod %s's GPUs (same device count, "
      "different share); retry",
      node, blocker.key);
  LogPod(LogLevel::kInfo, pod.Key(), node,
         absl::StrCat("bind deferred: ", message));
  return message;
}

std::string Extender::FailBind(const PodName& pod, absl::string_view stage,
                               std::string message) {
  CountBindFailure(stage);
  LogPod(LogLevel::kWarn, pod.Key(), "",
         absl::StrCat("bind failed (", stage, "): ", message));
  return message;
}

std::string Extender::UndoBind(const PodName& pod, const PodRequest& request,
                               bool patched,
                               const std::vector<ClaimWrite>& claims,
                               absl::string_view stage, std::string message) {
  // The claims first: until the reservation is released, nobody else can
  // be given the room that their allocations still hold in the API.
  if (!claims.empty()) {
    absl::Status undone = claim_binder_->Unreserve(pod, claims);
    if (!undone.ok()) {
      // The claim keeps naming the pod; its next bind reuses the entry,
      // and the claim controller drops it when the pod is gone.
      LogPod(LogLevel::kWarn, pod.Key(), "",
             absl::StrCat("could not undo the claims written: ",
                          undone.message()));
    }
  }
  {
    absl::MutexLock lock(&mu_);
    reservations_.erase(request.uid);
    watched_pods_.erase(request.uid);
    in_flight_.Remove(request.uid);
    scheduler_->Release(request.uid);
  }
  if (patched) {
    std::map<std::string, std::optional<std::string>> rollback =
        RollbackAnnotations(request.dialect);
    rollback[trust::kRecordSignature] = std::nullopt;
    absl::Status undone = writer_->PatchAnnotations(pod, rollback);
    if (!undone.ok()) {
      // The record stays on an unbound pod; a later filter of the pod, or
      // the expiry of its kRecorded reservation, releases the charge.
      LogPod(LogLevel::kWarn, pod.Key(), "",
             absl::StrCat("could not remove the allocation record: ",
                          undone.message()));
    }
  }
  writer_->Event(pod, "Warning", "BindingFailed", message);
  return FailBind(pod, stage, std::move(message));
}

std::optional<std::string> Extender::TakeOverReservation(
    const PodName& pod, const std::string& node,
    std::optional<PodRequest>& request) {
  if (pod.uid.empty()) return std::nullopt;
  absl::MutexLock lock(&mu_);
  auto it = reservations_.find(pod.uid);
  if (it == reservations_.end()) return std::nullopt;
  Reservation& reservation = it->second;
  switch (reservation.state) {
    case ReservationState::kBinding:
      return FailBind(pod, "Busy",
                      absl::StrFormat("pod %s: a bind to node %s is "
                                      "already in flight",
                                      pod.Key(), reservation.node));
    case ReservationState::kBound:
      if (reservation.node == node) return "";
      return FailBind(pod, "AlreadyBound",
                      absl::StrFormat("pod %s is already bound to node %s",
                                      pod.Key(), reservation.node));
    case ReservationState::kFiltered:
    case ReservationState::kRecorded:
      request = reservation.request;
      reservation.state = ReservationState::kBinding;
      break;
  }
  return std::nullopt;
}

std::optional<std::string> Extender::ReserveFromPod(
    const PodName& pod, const std::string& node,
    std::optional<PodRequest>& request, std::string& uid) {
  absl::StatusOr<nlohmann::json> object = writer_->GetPod(pod);
  if (!object.ok()) {
    return FailBind(
        pod, "PodGone",
        absl::StrFormat("pod %s: %s", pod.Key(), object.status().message()));
  }
  if (std::string bound = BoundNode(*object); !bound.empty()) {
    if (bound == node) return "";
    return FailBind(pod, "AlreadyBound",
                    absl::StrFormat("pod %s is already bound to node %s",
                                    pod.Key(), bound));
  }
  absl::StatusOr<PodRequest> parsed =
      ParsePodRequest(*object, scheduler_->config().device);
  if (!parsed.ok()) {
    return FailBind(pod, "InvalidRequest",
                    std::string(parsed.status().message()));
  }
  // The bind names one pod by UID: a pod of that name with another UID is
  // not it (deleted and created again, or a client guessing), and the
  // Binding below would carry the live pod's UID past the API server's
  // own check.
  if (!pod.uid.empty() && parsed->uid != pod.uid) {
    return FailBind(pod, "PodUIDMismatch",
                    absl::StrFormat("pod %s: podUID %s is not the pod's UID "
                                    "(%s)",
                                    pod.Key(), pod.uid, parsed->uid));
  }
  request = *std::move(parsed);
  uid = request->uid;
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = reservations_.try_emplace(uid);
  if (!inserted && (it->second.state == ReservationState::kBinding ||
                    it->second.state == ReservationState::kBound)) {
    return FailBind(pod, "Busy",
                    absl::StrFormat("pod %s: a bind to node %s is already "
                                    "in flight",
                                    pod.Key(), it->second.node));
  }
  it->second.state = ReservationState::kBinding;
  it->second.request = *request;
  it->second.priorities.clear();
  return std::nullopt;
}

std::string Extender::BindWithoutGpus(const PodName& pod,
                                      const std::string& node,
                                      const std::string& uid) {
  // kube-scheduler only calls a binder for pods with managed resources;
  // bind such a pod anyway rather than strand it.
  {
    absl::MutexLock lock(&mu_);
    reservations_.erase(uid);
  }
  absl::Status bound = writer_->Bind(pod, node);
  return bound.ok() ? ""
                    : FailBind(pod, "Binding", std::string(bound.message()));
}

std::optional<std::string> Extender::ReserveOnNodeLocked(
    const PodName& pod, const std::string& node, const std::string& uid,
    const PodRequest& request, PodAllocation& allocation,
    std::vector<ClaimDecision>& claims) {
  Reservation& reservation = reservations_[uid];
  // A reservation read back from a record carries no claim decisions:
  // placing the pod again makes them.
  const bool claims_known = reservation.claims.size() == request.claims.size();
  if (reservation.node != node || scheduler_->PodNode(uid) != node ||
      !claims_known) {
    absl::StatusOr<ReserveOutcome> placed =
        scheduler_->Reserve(request, {node}, /*replace=*/true);
    if (!placed.ok() || !placed->placed) {
      // One candidate: when it does not take the pod, its verdict says why.
      std::string why;
      if (!placed.ok()) {
        why = std::string(placed.status().message());
      } else {
        const NodeFit& fit = placed->rejected.front().fit;
        CountRejection(ReasonCodeName(fit.code));
        why = fit.Reason();
      }
      // kube-scheduler retries the pod from filter; its old reservation
      // would only hold room it no longer wants.
      reservations_.erase(uid);
      watched_pods_.erase(uid);
      scheduler_->Release(uid);
      const std::string message = absl::StrFormat(
          "pod %s does not fit node %s: %s", pod.Key(), node, why);
      writer_->Event(pod, "Warning", "BindingFailed", message);
      return FailBind(pod, "NoFit", message);
    }
    reservation.node = node;
    reservation.allocation = placed->placed->fit.allocation;
    reservation.claims = std::move(placed->claims);
  }
  reservation.state = ReservationState::kBinding;
  reservation.deleted = false;
  allocation = reservation.allocation;
  claims = reservation.claims;
  return std::nullopt;
}

std::optional<InFlightPod> Extender::ClaimInFlightLocked(
    const std::string& node, const std::string& uid, const PodRequest& request,
    const PodAllocation& allocation) {
  const absl::Time now = clock_->Now();
  ContainerShares shares;
  std::optional<InFlightPod> blocker;
  // A zero timeout turns the rule off.
  if (options_.in_flight_timeout > absl::ZeroDuration()) {
    shares = RecordShares(request, allocation, node, now,
                          scheduler_->config().device.memory_factor);
    blocker = in_flight_.FindConfusable(node, uid, shares, now);
  }
  if (blocker) {
    reservations_.erase(uid);
    watched_pods_.erase(uid);
    scheduler_->Release(uid);
  } else {
    in_flight_.Upsert(
        uid, InFlightPod{request.Key(), node, now + options_.in_flight_timeout,
                         std::move(shares)});
  }
  return blocker;
}

std::optional<std::string> Extender::WriteRecord(
    const PodName& pod, const PodRequest& request,
    const PodAllocation& allocation) {
  std::map<std::string, std::string> record =
      AllocationAnnotations(allocation, request.dialect, clock_->Now(),
                            scheduler_->config().device.memory_factor);
  if (options_.record_keys != nullptr) {
    record[trust::kRecordSignature] = trust::SignRecord(
        *options_.record_keys->Keys(), record, pod.uid, allocation.node_name);
  }
  absl::Status patched = writer_->PatchAnnotations(pod, ToPatch(record));
  if (patched.ok()) return std::nullopt;
  return UndoBind(pod, request, /*patched=*/false, {}, "Patch",
                  absl::StrFormat("pod %s: writing the allocation record: %s",
                                  pod.Key(), patched.message()));
}

std::optional<std::string> Extender::WriteClaims(
    const PodName& pod, const PodRequest& request, const std::string& node,
    const std::vector<ClaimDecision>& claims, std::vector<ClaimWrite>& writes) {
  if (claim_binder_ == nullptr) {
    return UndoBind(pod, request, request.HasGpuRequest(), {}, "Claims",
                    absl::StrFormat("pod %s uses ResourceClaims, and this "
                                    "extender has no claim writer",
                                    pod.Key()));
  }
  absl::StatusOr<std::vector<ClaimWrite>> written =
      claim_binder_->Reserve(pod, node, claims);
  if (written.ok()) {
    writes = *std::move(written);
    return std::nullopt;
  }
  return UndoBind(
      pod, request, request.HasGpuRequest(), {}, "Claims",
      absl::StrFormat("pod %s: %s", pod.Key(), written.status().message()));
}

std::optional<std::string> Extender::CreateBinding(
    const PodName& pod, const PodRequest& request, const std::string& node,
    const std::vector<ClaimWrite>& claims) {
  absl::Status bound = writer_->Bind(pod, node);
  if (!bound.ok() && bound.code() == absl::StatusCode::kAlreadyExists) {
    // A retried bind whose first Binding went through but whose answer was
    // lost: the pod is bound where we wanted it.
    absl::StatusOr<nlohmann::json> object = writer_->GetPod(pod);
    if (object.ok() && BoundNode(*object) == node) bound = absl::OkStatus();
  }
  if (bound.ok()) return std::nullopt;
  return UndoBind(pod, request, request.HasGpuRequest(), claims, "Binding",
                  absl::StrFormat("pod %s: creating the Binding to node "
                                  "%s: %s",
                                  pod.Key(), node, bound.message()));
}

void Extender::FinishBind(const PodName& pod, const std::string& node,
                          const std::string& uid) {
  bool deleted = false;
  {
    absl::MutexLock lock(&mu_);
    auto it = reservations_.find(uid);
    if (it != reservations_.end()) {
      deleted = it->second.deleted;
      if (deleted) {
        reservations_.erase(it);
        watched_pods_.erase(uid);
        in_flight_.Remove(uid);
        scheduler_->Release(uid);
      } else {
        // In flight from the Binding on, whatever the watch shows yet
        // (unless it already showed the node agent done).
        in_flight_.SetDeadline(uid, clock_->Now() + options_.in_flight_timeout);
        it->second.state = ReservationState::kBound;
        it->second.deadline = absl::InfiniteFuture();
        it->second.priorities.clear();
      }
    }
  }
  {
    absl::MutexLock lock(&stats_mu_);
    ++stats_.binds;
  }
  if (binds_total_ != nullptr) binds_total_->Increment({});
  LogPod(LogLevel::kDebug, pod.Key(), node,
         deleted ? "bound, but the pod was deleted meanwhile" : "bound");
}

std::string Extender::Bind(const BindingArgs& args) {
  PodName pod{args.pod_namespace, args.pod_name, args.pod_uid};
  const std::string& node = args.node;
  std::optional<PodRequest> request;
  std::string uid = args.pod_uid;
  if (std::optional<std::string> answer =
          TakeOverReservation(pod, node, request)) {
    return *answer;
  }
  if (!request) {
    // No reservation: a bind without our filter, after a restart, or after
    // the reservation expired. The pod itself says what it asks.
    if (std::optional<std::string> answer =
            ReserveFromPod(pod, node, request, uid)) {
      return *answer;
    }
  }
  if (!request->HasGpuRequest() && !request->HasClaims()) {
    return BindWithoutGpus(pod, node, uid);
  }

  // Take the room on `node` for certain: keep the filter's reservation if
  // it is there, else move or make it, atomically.
  PodAllocation allocation;
  std::vector<ClaimDecision> claims;
  std::optional<InFlightPod> blocker;
  {
    absl::MutexLock lock(&mu_);
    if (std::optional<std::string> error =
            ReserveOnNodeLocked(pod, node, uid, *request, allocation, claims)) {
      return *error;
    }
    // The check and the pod's own entry in the same critical section as
    // the reservation: of two concurrent binds of confusable pods to one
    // node, the second sees the first. Claims are prepared by kubelet per
    // claim, never confused: only annotated GPUs take part.
    if (request->HasGpuRequest()) {
      blocker = ClaimInFlightLocked(node, uid, *request, allocation);
    }
  }
  if (blocker) return DeferBind(pod, node, *blocker);
  pod.uid = uid;

  if (request->HasGpuRequest()) {
    if (std::optional<std::string> error =
            WriteRecord(pod, *request, allocation)) {
      return *error;
    }
  }
  std::vector<ClaimWrite> claim_writes;
  if (request->HasClaims()) {
    if (std::optional<std::string> error =
            WriteClaims(pod, *request, node, claims, claim_writes)) {
      return *error;
    }
  }
  if (std::optional<std::string> error =
          CreateBinding(pod, *request, node, claim_writes)) {
    return *error;
  }
  FinishBind(pod, node, uid);
  return "";
}

}  // namespace deviceshare::extender
