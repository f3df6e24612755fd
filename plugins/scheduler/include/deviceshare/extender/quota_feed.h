// File: extender/quota_feed.h
//
// QuotaFeed: the watch of ResourceQuotas (v1) into the Scheduler's GPU
// quotas (model/gpu_quota.h, k8s/resource_quota_parser.h), as HAMi's
// scheduler watches them. A quota that limits a GPU resource is upserted;
// one that no longer does, a deleted one, and one a relist no longer shows
// are removed. A quota that cannot be read is logged at error level with
// its name and the field at fault, and the Scheduler keeps what it had of
// it: one bad object never stops the others.
//
// Thread safety: every method is thread-safe.
#ifndef DEVICESHARE_EXTENDER_QUOTA_FEED_H_
#define DEVICESHARE_EXTENDER_QUOTA_FEED_H_

#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "deviceshare/scheduler/scheduler.h"
#include "nlohmann/json.hpp"

namespace deviceshare::extender {

class QuotaFeed {
 public:
  // `scheduler` must outlive the feed.
  explicit QuotaFeed(Scheduler* scheduler) : scheduler_(scheduler) {}

  // `OnQuotasReplaced` follows a (re)list with the full set; `type` of an
  // event is ADDED, MODIFIED or DELETED (its object the last state).
  void OnQuotasReplaced(const std::vector<nlohmann::json>& quotas);
  void OnQuotaEvent(absl::string_view type, const nlohmann::json& object);

 private:
  void ApplyLocked(const nlohmann::json& object)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemoveLocked(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The quota `key` ("namespace/name") leaves the scheduler.
  void RemoveFromScheduler(const std::string& key);

  Scheduler* const scheduler_;
  absl::Mutex mu_;
  // "namespace/name" of the quotas upserted.
  std::set<std::string> known_ ABSL_GUARDED_BY(mu_);
};

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_QUOTA_FEED_H_
