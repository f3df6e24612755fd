#include "deviceshare/trust/record_signature.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "deviceshare/codec/annotation_keys.h"
#include "nlohmann/json.hpp"

namespace deviceshare::trust {
namespace {

constexpr char kDomain[] = "deviceshare.io/record-signature/v1";
constexpr char kVersion[] = "v1";

// The record keys that carry the decision, in signing order.
constexpr const char* kSignedKeys[] = {
    keys::kHamiAllocated,     keys::kHamiNode,    keys::kHamiMigAllocations,
    keys::kVolcanoAllocation, keys::kVolcanoNode,
};

// Keys that say a record is there (the node keys alone are not one).
constexpr const char* kRecordKeys[] = {
    keys::kHamiAllocated, keys::kHamiToAllocate, keys::kVolcanoAllocation,
    keys::kVolcanoToAllocate};

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
  for (const char* key : kRecordKeys) {
    if (annotations.contains(key)) return true;
  }
  return false;
}

std::string SignRecord(const RecordKeys& keys,
                       const std::map<std::string, std::string>& annotations,
                       absl::string_view uid, absl::string_view node) {
  const RecordKey& key = keys.signing();
  return absl::StrCat(
      kVersion, ".", key.id, ".",
      absl::WebSafeBase64Escape(Mac(key, Message(annotations, uid, node))));
}

RecordCheck CheckRecord(const RecordKeys& keys,
                        const std::map<std::string, std::string>& annotations,
                        absl::string_view uid, absl::string_view node) {
  if (!HasRecord(annotations)) return RecordCheck{};
  auto signature = annotations.find(kRecordSignature);
  if (signature == annotations.end()) {
    return RecordCheck{RecordVerdict::kUnsigned,
                       absl::StrCat("the allocation record has no ",
                                    kRecordSignature, " annotation")};
  }
  std::vector<std::string> parts =
      absl::StrSplit(signature->second, absl::MaxSplits('.', 2));
  if (parts.size() != 3 || parts[0] != kVersion) {
    return Forged(
        absl::StrCat(kRecordSignature, " \"",
                     absl::CHexEscape(signature->second.substr(0, 80)),
                     "\" is not v1.<key id>.<mac>"));
  }
  const RecordKey* key = keys.Find(parts[1]);
  if (key == nullptr) {
    return Forged(absl::StrCat(kRecordSignature, ": unknown key id \"",
                               absl::CHexEscape(parts[1].substr(0, 40)), "\""));
  }
  std::string mac;
  if (!absl::WebSafeBase64Unescape(parts[2], &mac)) {
    return Forged(absl::StrCat(kRecordSignature, ": the mac is not base64url"));
  }
  const std::string expected = Mac(*key, Message(annotations, uid, node));
  if (mac.size() != expected.size() ||
      CRYPTO_memcmp(mac.data(), expected.data(), mac.size()) != 0) {
    return Forged(absl::StrCat(
        kRecordSignature, " (key ", key->id,
        ") does not match the record, the pod uid and the node: the record "
        "was changed, moved, or the signature copied from another pod"));
  }
  return RecordCheck{RecordVerdict::kValid, ""};
}

}  // namespace deviceshare::trust
