#include "claim_binder.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "claim_status.h"
#include "deviceshare/kube/api_status.h"
#include "deviceshare/trust/record_signature.h"
#include "extender_log.h"

namespace deviceshare::extender {

ClaimName ClaimNameOf(const std::string& key) {
  const size_t slash = key.find('/');
  if (slash == std::string::npos) return ClaimName{"", key};
  return ClaimName{key.substr(0, slash), key.substr(slash + 1)};
}

ClaimBinder::ClaimBinder(ClaimWriter* writer,
                         std::function<void(const nlohmann::json&)> on_seen,
                         int max_attempts, Signer sign)
    : writer_(writer),
      on_seen_(std::move(on_seen)),
      max_attempts_(max_attempts < 1 ? 1 : max_attempts),
      sign_(std::move(sign)) {}

absl::Status ClaimBinder::SignAllocation(const ClaimName& claim,
                                         const nlohmann::json& allocated,
                                         const std::string& node) {
  absl::StatusOr<std::string> signature = sign_(allocated, node);
  if (!signature.ok()) return signature.status();
  absl::Status patched = writer_->PatchClaimAnnotations(
      claim, {{trust::kAllocationSignature, *signature}});
  if (patched.ok()) return patched;
  return absl::Status(patched.code(),
                      absl::StrCat("signing the allocation of ResourceClaim ",
                                   claim.Key(), ": ", patched.message()));
}

absl::Status ClaimBinder::Update(const ClaimName& claim, const Edit& edit) {
  absl::Status conflict;
  for (int attempt = 0; attempt < max_attempts_; ++attempt) {
    absl::StatusOr<nlohmann::json> object = writer_->GetClaim(claim);
    if (!object.ok()) {
      return absl::Status(object.status().code(),
                          absl::StrCat("reading ResourceClaim ", claim.Key(),
                                       ": ", object.status().message()));
    }
    if (on_seen_) on_seen_(*object);
    absl::StatusOr<bool> changed = edit(*object);
    if (!changed.ok()) return changed.status();
    if (!*changed) return absl::OkStatus();
    absl::StatusOr<nlohmann::json> written =
        writer_->PutClaimStatus(claim, *object);
    if (written.ok()) {
      if (on_seen_) on_seen_(*written);
      return absl::OkStatus();
    }
    if (!kube::IsConflict(written.status())) {
      return absl::Status(
          written.status().code(),
          absl::StrCat("writing the status of ResourceClaim ", claim.Key(),
                       ": ", written.status().message()));
    }
    conflict = written.status();  // changed since the read: read again
  }
  return absl::AbortedError(absl::StrFormat(
      "writing the status of ResourceClaim %s: still conflicting after %d "
      "attempts: %s",
      claim.Key(), max_attempts_, conflict.message()));
}

absl::StatusOr<ClaimWrite> ClaimBinder::ReserveOne(
    const PodName& pod, const std::string& node,
    const ClaimDecision& decision) {
  ClaimWrite write{ClaimNameOf(decision.claim_key), false};
  nlohmann::json allocated;
  absl::Status updated =
      Update(write.claim, [&](nlohmann::json& claim) -> absl::StatusOr<bool> {
        write.wrote_allocation = false;
        if (IsAllocated(claim)) {
          const std::string at = AllocatedNode(claim);
          if (!at.empty() && at != node) {
            return absl::FailedPreconditionError(absl::StrFormat(
                "ResourceClaim %s is allocated on node %s, not %s",
                write.claim.Key(), at, node));
          }
        } else {
          if (decision.allocation.results.empty()) {
            return absl::FailedPreconditionError(absl::StrFormat(
                "ResourceClaim %s: no allocation was made for it on node %s",
                write.claim.Key(), node));
          }
          SetAllocation(claim, decision.allocation);
          write.wrote_allocation = true;
          allocated = claim;
        }
        const bool added = AddConsumer(claim, pod.name, pod.uid);
        return write.wrote_allocation || added;
      });
  if (!updated.ok()) return updated;
  if (write.wrote_allocation && sign_) {
    if (absl::Status signed_ = SignAllocation(write.claim, allocated, node);
        !signed_.ok()) {
      if (absl::Status undone = Unreserve(pod, {write}); !undone.ok()) {
        LogPod(LogLevel::kWarn, pod.Key(), node,
               absl::StrCat("could not undo the claim written: ",
                            undone.message()));
      }
      return signed_;
    }
  }
  return write;
}

absl::StatusOr<std::vector<ClaimWrite>> ClaimBinder::Reserve(
    const PodName& pod, const std::string& node,
    const std::vector<ClaimDecision>& claims) {
  std::vector<ClaimWrite> writes;
  for (const ClaimDecision& decision : claims) {
    absl::StatusOr<ClaimWrite> write = ReserveOne(pod, node, decision);
    if (!write.ok()) {
      // What the claims written so far hold is the bind's to give back. A
      // failure to do so leaves reservedFor naming an unbound pod, which
      // its next bind reuses.
      if (absl::Status undone = Unreserve(pod, writes); !undone.ok()) {
        LogPod(LogLevel::kWarn, pod.Key(), node,
               absl::StrCat("could not undo the claims written: ",
                            undone.message()));
      }
      return write.status();
    }
    writes.push_back(*std::move(write));
  }
  return writes;
}

absl::Status ClaimBinder::Unreserve(const PodName& pod,
                                    const std::vector<ClaimWrite>& writes) {
  absl::Status first;
  for (const ClaimWrite& write : writes) {
    absl::Status undone =
        Update(write.claim, [&](nlohmann::json& claim) -> absl::StatusOr<bool> {
          bool changed = RemoveConsumer(claim, pod.uid);
          // Another pod that shares the claim may have reserved it since;
          // the allocation is then its too.
          if (write.wrote_allocation && IsAllocated(claim) &&
              !HasConsumers(claim)) {
            ClearAllocation(claim);
            changed = true;
          }
          return changed;
        });
    if (undone.ok() && write.wrote_allocation && sign_) {
      // Best effort: a signature left behind matches no later allocation
      // of another device, share or node.
      (void)writer_->PatchClaimAnnotations(
          write.claim, {{trust::kAllocationSignature, std::nullopt}});
    }
    if (absl::IsNotFound(undone)) continue;
    if (first.ok()) first = undone;
  }
  return first;
}

}  // namespace deviceshare::extender
