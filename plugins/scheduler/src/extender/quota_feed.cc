#include "deviceshare/extender/quota_feed.h"

#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "deviceshare/k8s/resource_quota_parser.h"
#include "feed_sets.h"
#include "pod_fields.h"

namespace deviceshare::extender {
namespace {

constexpr char kQuota[] = "ResourceQuota";

std::string KeyOf(const nlohmann::json& object) {
  std::string ns = Text(object, {"metadata", "namespace"});
  if (ns.empty()) ns = "default";
  return absl::StrCat(ns, "/", Text(object, {"metadata", "name"}));
}

}  // namespace

void QuotaFeed::ApplyLocked(const nlohmann::json& object) {
  const std::string key = KeyOf(object);
  absl::StatusOr<std::optional<GpuQuota>> quota =
      ParseResourceQuota(object, scheduler_->config().device);
  if (!quota.ok()) {
    LogIgnored(kQuota, key, quota.status());
    return;
  }
  if (!*quota) {
    RemoveLocked(key);
    return;
  }
  scheduler_->UpsertQuota(**std::move(quota));
  known_.insert(key);
}

void QuotaFeed::RemoveLocked(const std::string& key) {
  if (known_.erase(key) > 0) RemoveFromScheduler(key);
}

void QuotaFeed::RemoveFromScheduler(const std::string& key) {
  const size_t slash = key.find('/');
  scheduler_->RemoveQuota(key.substr(0, slash), key.substr(slash + 1));
}

void QuotaFeed::OnQuotaEvent(absl::string_view type,
                             const nlohmann::json& object) {
  absl::MutexLock lock(&mu_);
  if (type == "DELETED") {
    RemoveLocked(KeyOf(object));
    return;
  }
  ApplyLocked(object);
}

void QuotaFeed::OnQuotasReplaced(const std::vector<nlohmann::json>& quotas) {
  const absl::flat_hash_set<std::string> listed = Listed(quotas, KeyOf);
  absl::MutexLock lock(&mu_);
  ForgetUnlisted(known_, listed,
                 [this](const std::string& key) { RemoveFromScheduler(key); });
  for (const nlohmann::json& object : quotas) ApplyLocked(object);
}

}  // namespace deviceshare::extender
