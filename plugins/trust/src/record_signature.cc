#include "deviceshare/trust/record_signature.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/k8s/pod_annotations.h"
#include "nlohmann/json.hpp"

namespace deviceshare::trust {
namespace {

constexpr char kDomain[] = "deviceshare.io/record-signature/v1";
constexpr char kClaimDomain[] = "deviceshare.io/allocation-signature/v1";
constexpr char kVersion[] = "v1";

// The record keys that carry the decision, in signing order.
constexpr const char* kSignedKeys[] = {
    keys::kHamiAllocated,     keys::kHamiNode,    keys::kHamiMigAllocations,
    keys::kVolcanoAllocation, keys::kVolcanoNode,
};

// The MIG allocations without the runtime ids the node agent adds once
// the instances exist, keys sorted (nlohmann's objects are ordered maps).
std::string WithoutRuntimeIds(const std::string& text) {
  nlohmann::json entries =
      nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!entries.is_array()) return text;
  for (nlohmann::json& entry : entries) {
    if (!entry.is_object()) continue;
    entry.erase("migUUID");
    entry.erase("gpuInstanceID");
    entry.erase("computeInstanceID");
  }
  return entries.dump();
}

void AppendField(std::string& message, absl::string_view field) {
  absl::StrAppend(&message, field.size(), ":", field);
}

std::string Message(const std::map<std::string, std::string>& annotations,
                    absl::string_view uid, absl::string_view node) {
  std::string message;
  AppendField(message, kDomain);
  AppendField(message, uid);
  AppendField(message, node);
  for (const char* key : kSignedKeys) {
    auto it = annotations.find(key);
    if (it == annotations.end()) continue;
    AppendField(message, key);
    AppendField(message, absl::string_view(key) == keys::kHamiMigAllocations
                             ? WithoutRuntimeIds(it->second)
                             : it->second);
  }
  return message;
}

std::string ClaimMessage(const dra::AllocatedClaim& claim,
                         absl::string_view node) {
  std::string message;
  AppendField(message, kClaimDomain);
  AppendField(message, claim.uid);
  AppendField(message, node);
  for (const dra::AllocatedDevice& result : claim.results) {
    AppendField(message, result.request);
    AppendField(message, result.driver);
    AppendField(message, result.pool);
    AppendField(message, result.device);
    AppendField(message, result.share_id);
    AppendField(message, result.admin_access ? "admin" : "");
    for (const auto& [name, amount] : result.consumed) {
      AppendField(message, name);
      AppendField(message, absl::StrCat(amount));
    }
    AppendField(message, ";");
  }
  return message;
}

std::string Mac(const RecordKey& key, absl::string_view message) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.secret.data(), static_cast<int>(key.secret.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(),
       digest, &length);
  return std::string(reinterpret_cast<const char*>(digest), length);
}

RecordCheck Forged(std::string reason) {
  return RecordCheck{RecordVerdict::kForged, std::move(reason)};
}

// The verdict of the signature annotation `name` (absent: unsigned) over
// `message`; `what` names the signed thing in reasons.
RecordCheck CheckSignature(
    const RecordKeys& keys,
    const std::map<std::string, std::string>& annotations, const char* name,
    absl::string_view message, absl::string_view what) {
  auto signature = annotations.find(name);
  if (signature == annotations.end()) {
    return RecordCheck{RecordVerdict::kUnsigned,
                       absl::StrCat(what, " has no ", name, " annotation")};
  }
  std::vector<std::string> parts =
      absl::StrSplit(signature->second, absl::MaxSplits('.', 2));
  if (parts.size() != 3 || parts[0] != kVersion) {
    return Forged(absl::StrCat(
        name, " \"", absl::CHexEscape(signature->second.substr(0, 80)),
        "\" is not v1.<key id>.<mac>"));
  }
  const RecordKey* key = keys.Find(parts[1]);
  if (key == nullptr) {
    return Forged(absl::StrCat(name, ": unknown key id \"",
                               absl::CHexEscape(parts[1].substr(0, 40)), "\""));
  }
  std::string mac;
  if (!absl::WebSafeBase64Unescape(parts[2], &mac)) {
    return Forged(absl::StrCat(name, ": the mac is not base64url"));
  }
  const std::string expected = Mac(*key, message);
  if (mac.size() != expected.size() ||
      CRYPTO_memcmp(mac.data(), expected.data(), mac.size()) != 0) {
    return Forged(absl::StrCat(
        name, " (key ", key->id, ") does not match ", what,
        ", the uid and the node: it was changed, moved, or the signature "
        "copied from another object"));
  }
  return RecordCheck{RecordVerdict::kValid, ""};
}

std::string Signature(const RecordKeys& keys, absl::string_view message) {
  const RecordKey& key = keys.signing();
  return absl::StrCat(kVersion, ".", key.id, ".",
                      absl::WebSafeBase64Escape(Mac(key, message)));
}

}  // namespace

absl::string_view VerdictName(RecordVerdict verdict) {
  switch (verdict) {
    case RecordVerdict::kNoRecord:
      return "no-record";
    case RecordVerdict::kValid:
      return "valid";
    case RecordVerdict::kUnsigned:
      return "unsigned";
    case RecordVerdict::kForged:
      return "forged";
  }
  return "unknown";
}

bool HasRecord(const std::map<std::string, std::string>& annotations) {
  return RecordDialect(annotations).has_value();
}

std::string SignRecord(const RecordKeys& keys,
                       const std::map<std::string, std::string>& annotations,
                       absl::string_view uid, absl::string_view node) {
  return Signature(keys, Message(annotations, uid, node));
}

RecordCheck CheckRecord(const RecordKeys& keys,
                        const std::map<std::string, std::string>& annotations,
                        absl::string_view uid, absl::string_view node) {
  if (!HasRecord(annotations)) return RecordCheck{};
  return CheckSignature(keys, annotations, kRecordSignature,
                        Message(annotations, uid, node),
                        "the allocation record");
}

std::string SignClaimAllocation(const RecordKeys& keys,
                                const dra::AllocatedClaim& claim,
                                absl::string_view node) {
  return Signature(keys, ClaimMessage(claim, node));
}

RecordCheck CheckClaimAllocation(
    const RecordKeys& keys,
    const std::map<std::string, std::string>& annotations,
    const dra::AllocatedClaim& claim, absl::string_view node) {
  if (claim.results.empty()) return RecordCheck{};
  return CheckSignature(keys, annotations, kAllocationSignature,
                        ClaimMessage(claim, node), "the claim's allocation");
}

}  // namespace deviceshare::trust
