// File: trust/record_signature.h
//
// Signed allocation records. Anyone who may edit a pod may write its
// allocation record (`hami.io/vgpu-devices-allocated`, Volcano's
// `volcano.sh/vgpu-ids-new`, ...), and a node agent that honours what it
// reads would hand that pod any GPU share (HAMi issue #3041). So the
// scheduler signs each record it writes, and readers check the signature
// before they act on the record.
//
// The signature annotation `deviceshare.io/record-signature` is
// "v1.<key id>.<base64url HMAC-SHA256>" over, in this order, each as a
// decimal length, ':' and the bytes:
//   "deviceshare.io/record-signature/v1", the pod's metadata.uid, the node,
//   then for each signed key the record carries, its key and value:
//   hami.io/vgpu-devices-allocated, hami.io/vgpu-node,
//   hami.io/vgpu-mig-allocations (its JSON with the runtime ids that the node
//   agent adds, migUUID / gpuInstanceID / computeInstanceID, taken out, keys
//   sorted), volcano.sh/vgpu-ids-new, volcano.sh/vgpu-node.
// The uid makes a signature copied from another pod fail (a replay); the
// node makes a record moved to another node fail. The keys others write
// after the decision (bind-phase, to-allocate, times) are not signed.
//
// Verdicts: kValid; kUnsigned (a record without a signature: written by
// another scheduler, HAMi's or Volcano's, or by hand); kForged (a signature
// that is malformed, names an unknown key, or does not match: a tampered
// record, a replayed signature, a record moved between nodes). A pod
// without a record has nothing to check (kNoRecord).
//
// Claims (DRA). A ResourceClaim's allocation is signed the same way into
// the claim's annotation `deviceshare.io/allocation-signature`, over the
// claim's uid, the node, and each result of status.allocation.devices as
// dra::DecodeAllocatedClaim reads it (request, driver, pool, device, share
// id, admin access, consumed capacity by name), in order. serve writes it
// with the allocation; the node agent's DRA driver checks it before it
// prepares the claim.
//
// Thread safety: pure functions.
#ifndef DEVICESHARE_TRUST_RECORD_SIGNATURE_H_
#define DEVICESHARE_TRUST_RECORD_SIGNATURE_H_

#include <map>
#include <string>

#include "absl/strings/string_view.h"
#include "deviceshare/dra/allocated_claim.h"
#include "deviceshare/trust/record_keys.h"

namespace deviceshare::trust {

inline constexpr char kRecordSignature[] = "deviceshare.io/record-signature";
inline constexpr char kAllocationSignature[] =
    "deviceshare.io/allocation-signature";

enum class RecordVerdict { kNoRecord, kValid, kUnsigned, kForged };

// "no-record", "valid", "unsigned", "forged" (metric labels).
absl::string_view VerdictName(RecordVerdict verdict);

struct RecordCheck {
  RecordVerdict verdict = RecordVerdict::kNoRecord;
  std::string reason;  // why, when unsigned or forged
};

// The signature annotation's value for the record in `annotations` (the
// annotations as they will be written) of pod `uid` on `node`, signed with
// keys.signing(). An unreadable MIG allocation JSON is signed as is.
std::string SignRecord(const RecordKeys& keys,
                       const std::map<std::string, std::string>& annotations,
                       absl::string_view uid, absl::string_view node);

// Checks the record in `annotations` (the pod's, signature included)
// against pod `uid` on `node`.
RecordCheck CheckRecord(const RecordKeys& keys,
                        const std::map<std::string, std::string>& annotations,
                        absl::string_view uid, absl::string_view node);

// The kAllocationSignature value for `claim`'s allocation (its uid and
// results) on `node`, signed with keys.signing().
std::string SignClaimAllocation(const RecordKeys& keys,
                                const dra::AllocatedClaim& claim,
                                absl::string_view node);

// Checks a claim's allocation against the signature in its `annotations`
// (the claim's metadata.annotations). A claim without results has nothing
// to check (kNoRecord).
RecordCheck CheckClaimAllocation(
    const RecordKeys& keys,
    const std::map<std::string, std::string>& annotations,
    const dra::AllocatedClaim& claim, absl::string_view node);

// Whether `annotations` carry an allocation record of either dialect.
bool HasRecord(const std::map<std::string, std::string>& annotations);

// What readers do with a verdict: valid and no-record records are used;
// unsigned ones only when `accept_unsigned` (a cluster migrating from
// HAMi's or Volcano's scheduler); forged ones never.
struct RecordPolicy {
  bool accept_unsigned = false;
  bool Accepts(RecordVerdict verdict) const {
    return verdict == RecordVerdict::kValid ||
           verdict == RecordVerdict::kNoRecord ||
           (accept_unsigned && verdict == RecordVerdict::kUnsigned);
  }
};

}  // namespace deviceshare::trust

#endif  // DEVICESHARE_TRUST_RECORD_SIGNATURE_H_
