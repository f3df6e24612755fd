// File: extender/dra_feed.h
//
// DraFeed: the watches of DeviceClasses, ResourceSlices and ResourceClaims
// (resource.k8s.io/v1) into the Scheduler, for an extender that allocates
// claims itself (kube-scheduler's DynamicResources plugin disabled).
//
// Each object is decoded (dra/device_class.h, dra/slice_decode.h,
// dra/claim_spec.h) and upserted; a deleted one, or one that a relist no
// longer shows, is removed. An object that cannot be read is logged at
// error level with its kind, name and the field at fault, and the Scheduler
// keeps what it had of it (nothing, for a new one): one bad object never
// stops the others. Slices that are not node-local (spec.allNodes,
// spec.nodeSelector) are skipped with a line: only node agents' slices
// take part (dra/dra_cluster.h).
//
// Claims are also read and written by our own binds. OnClaimSeen applies
// what such a request returned at once, so that a bind's (or a failed
// bind's undo's) effect, or a change a bind found, is in the Scheduler
// before the watch shows it; the watch's copy of an older version is then
// ignored. Versions are compared as the
// integers the API server's resourceVersions are (as kube-scheduler's
// assume cache does); a version that is not one is always applied.
//
// Thread safety: every method is thread-safe; the watches of the three
// collections and the binds call it from their own threads.
#ifndef DEVICESHARE_EXTENDER_DRA_FEED_H_
#define DEVICESHARE_EXTENDER_DRA_FEED_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "deviceshare/scheduler/scheduler.h"
#include "nlohmann/json.hpp"

namespace deviceshare::extender {

class DraFeed {
 public:
  // `scheduler` must outlive the feed.
  explicit DraFeed(Scheduler* scheduler);

  // `*Replaced` follows a (re)list with the full set; `type` of an event is
  // ADDED, MODIFIED or DELETED (its object the last state).
  void OnClassesReplaced(const std::vector<nlohmann::json>& classes);
  void OnClassEvent(absl::string_view type, const nlohmann::json& object);
  void OnSlicesReplaced(const std::vector<nlohmann::json>& slices);
  void OnSliceEvent(absl::string_view type, const nlohmann::json& object);
  void OnClaimsReplaced(const std::vector<nlohmann::json>& claims);
  void OnClaimEvent(absl::string_view type, const nlohmann::json& object);

  // A claim as a read or write of ours returned it. Ignored for a claim
  // the feed does not know (deleted meanwhile) or knows at a version as
  // new.
  void OnClaimSeen(const nlohmann::json& claim);

 private:
  void ApplyClassLocked(const nlohmann::json& object)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ApplySliceLocked(const nlohmann::json& object)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ApplyClaimLocked(const nlohmann::json& object)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemoveClaimLocked(const std::string& key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Scheduler* const scheduler_;
  // Held across the Scheduler's event calls, so that a watch event and a
  // bind's write of the same claim apply in version order.
  absl::Mutex mu_;
  std::set<std::string> classes_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> slices_ ABSL_GUARDED_BY(mu_);
  // Claim key "namespace/name" -> the resourceVersion applied.
  std::map<std::string, std::string> claims_ ABSL_GUARDED_BY(mu_);
};

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_DRA_FEED_H_
