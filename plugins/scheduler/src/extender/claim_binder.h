// ClaimBinder: the ResourceClaim part of /bind, for clusters whose
// kube-scheduler leaves DRA to the extender (DynamicResources disabled).
// Before the Binding, every claim of the pod is written through the status
// subresource: status.allocation from the Scheduler's decision when the API
// server shows none, and the pod in status.reservedFor (kubelet prepares a
// claim only for the pods it is reserved for). A claim the API server shows
// allocated -- by this bind's other half, another scheduler, or an earlier
// pod that shares it -- is honoured: only reservedFor is added, and it must
// be on the bind's node.
//
// Each write is a read-modify-write with the resourceVersion as the
// precondition; a conflict (someone wrote the claim meanwhile) reads it
// again, at most `max_attempts` times. Every claim as a read or a write
// returned it goes to `on_seen` (the DRA feed applies it at once, so our
// own state does not wait for the watch: neither for what the bind wrote
// nor for a change it found).
//
// With a signer, each allocation the bind writes is then signed into the
// claim's annotation (trust/record_signature.h, kAllocationSignature), so
// the node agent can tell it from one written by someone else; the undo
// removes the signature with the allocation.
//
// Thread safety: as thread-safe as the ClaimWriter, `on_seen` and `sign`.
#ifndef DEVICESHARE_EXTENDER_CLAIM_BINDER_H_
#define DEVICESHARE_EXTENDER_CLAIM_BINDER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "deviceshare/extender/claim_writer.h"
#include "deviceshare/extender/pod_writer.h"
#include "deviceshare/scheduler/decision.h"
#include "nlohmann/json.hpp"

namespace deviceshare::extender {

// What a bind did to one claim, so that a failed bind can undo it.
struct ClaimWrite {
  ClaimName claim;
  bool wrote_allocation = false;  // status.allocation is ours
};

class ClaimBinder {
 public:
  // `writer` must outlive the binder.
  // The signature annotation's value for an allocated claim on a node; the
  // error fails the bind.
  using Signer = std::function<absl::StatusOr<std::string>(
      const nlohmann::json& claim, const std::string& node)>;

  ClaimBinder(ClaimWriter* writer,
              std::function<void(const nlohmann::json&)> on_seen,
              int max_attempts = 5, Signer sign = nullptr);

  // Allocates (where the API server shows no allocation) and reserves each
  // of `claims` for `pod` (whose uid must be set) on `node`. On failure the
  // claims already written are undone and the error names the claim.
  absl::StatusOr<std::vector<ClaimWrite>> Reserve(
      const PodName& pod, const std::string& node,
      const std::vector<ClaimDecision>& claims);

  // Undoes Reserve: removes the pod from each claim's reservedFor, and the
  // allocation the bind wrote when no other pod has reserved the claim
  // since. Tries every claim; returns the first error. A claim that is gone
  // needs no undoing.
  absl::Status Unreserve(const PodName& pod,
                         const std::vector<ClaimWrite>& writes);

 private:
  // What an edit did: changed the claim (write it) or not (done).
  using Edit = std::function<absl::StatusOr<bool>(nlohmann::json& claim)>;

  // Reads the claim, applies `edit` and writes the status when it changed,
  // again from the read after a conflict. Errors name the claim.
  absl::Status Update(const ClaimName& claim, const Edit& edit);
  absl::StatusOr<ClaimWrite> ReserveOne(const PodName& pod,
                                        const std::string& node,
                                        const ClaimDecision& decision);

  // Writes the signature of `allocated` (the claim as written) on `node`.
  absl::Status SignAllocation(const ClaimName& claim,
                              const nlohmann::json& allocated,
                              const std::string& node);

  ClaimWriter* const writer_;
  const std::function<void(const nlohmann::json&)> on_seen_;
  const int max_attempts_;
  const Signer sign_;
};

// The claim named by a ClaimDecision's key "namespace/name".
ClaimName ClaimNameOf(const std::string& key);

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_CLAIM_BINDER_H_
