#include "deviceshare/extender/dra_feed.h"

#include <cstdint>
#include <functional>
#include <set>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "deviceshare/dra/claim_spec.h"
#include "deviceshare/dra/device_class.h"
#include "deviceshare/dra/dra_cluster.h"
#include "deviceshare/dra/slice_decode.h"
#include "extender_log.h"
#include "feed_sets.h"
#include "pod_fields.h"

namespace deviceshare::extender {
namespace {

constexpr char kClass[] = "DeviceClass";
constexpr char kSlice[] = "ResourceSlice";
constexpr char kClaim[] = "ResourceClaim";

std::string NameOf(const nlohmann::json& object) {
  return Text(object, {"metadata", "name"});
}

std::string ClaimKeyOf(const nlohmann::json& object) {
  return dra::ClaimKey(Text(object, {"metadata", "namespace"}), NameOf(object));
}

// Whether `version` is no newer than `applied`; false when either is not
// an integer (then there is no telling, and applying is the safe side).
bool NotNewer(const std::string& version, const std::string& applied) {
  uint64_t a = 0;
  uint64_t b = 0;
  return absl::SimpleAtoi(version, &a) && absl::SimpleAtoi(applied, &b) &&
         a <= b;
}

}  // namespace

DraFeed::DraFeed(Scheduler* scheduler) : scheduler_(scheduler) {}

void DraFeed::ApplyClassLocked(const nlohmann::json& object) {
  const std::string name = NameOf(object);
  absl::StatusOr<dra::DeviceClass> decoded = dra::DecodeDeviceClass(object);
  if (!decoded.ok()) {
    LogIgnored(kClass, name, decoded.status());
    return;
  }
  scheduler_->UpsertDeviceClass(*std::move(decoded));
  classes_.insert(name);
}

void DraFeed::OnClassEvent(absl::string_view type,
                           const nlohmann::json& object) {
  absl::MutexLock lock(&mu_);
  if (type == "DELETED") {
    const std::string name = NameOf(object);
    if (classes_.erase(name) > 0) scheduler_->RemoveDeviceClass(name);
    return;
  }
  ApplyClassLocked(object);
}

void DraFeed::OnClassesReplaced(const std::vector<nlohmann::json>& classes) {
  const absl::flat_hash_set<std::string> listed = Listed(classes, NameOf);
  absl::MutexLock lock(&mu_);
  ForgetUnlisted(classes_, listed, [this](const std::string& name) {
    scheduler_->RemoveDeviceClass(name);
  });
  for (const nlohmann::json& object : classes) ApplyClassLocked(object);
}

void DraFeed::ApplySliceLocked(const nlohmann::json& object) {
  const std::string name = NameOf(object);
  absl::StatusOr<dra::DecodedSlice> decoded = dra::DecodeResourceSlice(object);
  if (!decoded.ok()) {
    LogIgnored(kSlice, name, decoded.status());
    return;
  }
  if (decoded->slice.node_name.empty()) {
    // A slice that stopped being node-local no longer describes one node.
    if (slices_.erase(name) > 0) scheduler_->RemoveResourceSlice(name);
    LogObject(LogLevel::kInfo, kSlice, name,
              "skipped: not node-local (spec.allNodes or spec.nodeSelector); "
              "only slices with spec.nodeName are scheduled here");
    return;
  }
  if (absl::Status upserted =
          scheduler_->UpsertResourceSlice(std::move(decoded->slice));
      !upserted.ok()) {
    LogIgnored(kSlice, name, upserted);
    return;
  }
  slices_.insert(name);
}

void DraFeed::OnSliceEvent(absl::string_view type,
                           const nlohmann::json& object) {
  absl::MutexLock lock(&mu_);
  if (type == "DELETED") {
    const std::string name = NameOf(object);
    if (slices_.erase(name) > 0) scheduler_->RemoveResourceSlice(name);
    return;
  }
  ApplySliceLocked(object);
}

void DraFeed::OnSlicesReplaced(const std::vector<nlohmann::json>& slices) {
  const absl::flat_hash_set<std::string> listed = Listed(slices, NameOf);
  absl::MutexLock lock(&mu_);
  ForgetUnlisted(slices_, listed, [this](const std::string& name) {
    scheduler_->RemoveResourceSlice(name);
  });
  for (const nlohmann::json& object : slices) ApplySliceLocked(object);
}

void DraFeed::ApplyClaimLocked(const nlohmann::json& object) {
  const std::string key = ClaimKeyOf(object);
  const std::string version = Text(object, {"metadata", "resourceVersion"});
  auto known = claims_.find(key);
  if (known != claims_.end() && NotNewer(version, known->second)) return;
  absl::StatusOr<dra::ResourceClaim> decoded = dra::DecodeResourceClaim(object);
  if (!decoded.ok()) {
    LogIgnored(kClaim, key, decoded.status());
    return;
  }
  if (absl::Status upserted =
          scheduler_->UpsertResourceClaim(*std::move(decoded));
      !upserted.ok()) {
    LogIgnored(kClaim, key, upserted);
    return;
  }
  claims_[key] = version;
}

void DraFeed::RemoveClaimLocked(const std::string& key) {
  claims_.erase(key);
  scheduler_->RemoveResourceClaim(key);
}

void DraFeed::OnClaimEvent(absl::string_view type,
                           const nlohmann::json& object) {
  absl::MutexLock lock(&mu_);
  if (type == "DELETED") {
    RemoveClaimLocked(ClaimKeyOf(object));
    return;
  }
  ApplyClaimLocked(object);
}

void DraFeed::OnClaimsReplaced(const std::vector<nlohmann::json>& claims) {
  const absl::flat_hash_set<std::string> listed = Listed(claims, ClaimKeyOf);
  absl::MutexLock lock(&mu_);
  std::vector<std::string> gone;
  for (const auto& [key, version] : claims_) {
    if (!listed.contains(key)) gone.push_back(key);
  }
  for (const std::string& key : gone) RemoveClaimLocked(key);
  for (const nlohmann::json& object : claims) ApplyClaimLocked(object);
}

void DraFeed::OnClaimSeen(const nlohmann::json& claim) {
  absl::MutexLock lock(&mu_);
  if (!claims_.contains(ClaimKeyOf(claim))) return;
  ApplyClaimLocked(claim);
}

}  // namespace deviceshare::extender
