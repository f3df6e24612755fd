// File: kube/reflector.h
//
// Reflector: keeps a caller's view of one resource collection ("/api/v1/pods",
// "/api/v1/nodes", or one with a selector query) current, the way client-go's
// reflector does. A background thread
//   1. LISTs the collection and hands the full set to `replace`, remembering
//      the list's resourceVersion (RV);
//   2. WATCHes from that RV (allowWatchBookmarks, timeoutSeconds), handing
//      ADDED / MODIFIED / DELETED to `event` and tracking the RV of every
//      object and BOOKMARK (bookmarks are not forwarded);
//   3. when the stream ends, watches again from the last RV (no relist);
//   4. when the server says the RV is too old (HTTP 410, or an ERROR event
//      with code 410), lists again: `replace` then carries the full current
//      set, so nothing that happened in between is lost;
//   5. after a failed list or watch, waits with exponential backoff
//      (initial_backoff doubling to max_backoff, jittered; reset by a
//      success) and retries -- the watch from the last RV, so a flaky
//      connection costs no relist.
// The handler therefore sees: replace, events..., [replace, events...]...
// A consumer builds its state from `replace` (dropping what is not in the
// set) and applies events on top.
//
// Thread safety: the handler's functions are called on the reflector's
// thread, one at a time, never after Stop() returns; they must not call
// Stop() or destroy the reflector. Every public method may be called from
// any other thread.
#ifndef DEVICESHARE_KUBE_REFLECTOR_H_
#define DEVICESHARE_KUBE_REFLECTOR_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "deviceshare/kube/api_client.h"
#include "nlohmann/json.hpp"

namespace deviceshare::kube {

struct ReflectorHandler {
  // After every (re)list: every object of the collection. Items get the
  // kind and apiVersion of the list ("PodList" -> "Pod") when they lack one,
  // as watch events' objects have them.
  std::function<void(std::vector<nlohmann::json> items)> replace;
  // type is "ADDED", "MODIFIED" or "DELETED".
  std::function<void(absl::string_view type, const nlohmann::json& object)>
      event;
};

struct ReflectorOptions {
  // timeoutSeconds of each watch: the server ends the stream after it and
  // the reflector watches again from where it was.
  absl::Duration watch_timeout = absl::Minutes(5);
  absl::Duration initial_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(10);
  // Each wait is scaled by a random factor in [1 - jitter, 1 + jitter], so
  // that many reflectors cut off together do not return together.
  double jitter = 0.2;
};

struct ReflectorStats {
  int64_t lists = 0;      // successful LISTs, the first included
  int64_t relists = 0;    // LISTs after the first (the RV was too old)
  int64_t watches = 0;    // watch requests started
  int64_t rewatches = 0;  // of which resumed from the last RV
  int64_t errors = 0;     // failed lists or watches (each backed off)
  int64_t events = 0;     // events handed to the handler
  int64_t bookmarks = 0;
  absl::Status last_error;  // of the latest failure; OK if none
  // Failures since the latest success (a list, an event or bookmark, a
  // watch that ran its course): 0 while the watch is healthy.
  int64_t failing = 0;
};

class Reflector {
 public:
  // `client` must outlive the reflector. `collection_path` may carry a query
  // (label or field selector); watch parameters are appended to it.
  Reflector(ApiClient* client, std::string collection_path,
            ReflectorHandler handler, ReflectorOptions options = {});
  ~Reflector();  // Stop()

  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  // Starts the thread. A second call, or one after Stop(), does nothing.
  void Start();

  // Ends the thread and returns once it has ended: at once from a backoff
  // wait, within about 100 ms from an open watch; a LIST in flight is let
  // finish (ApiClientOptions::read_timeout bounds it). Idempotent.
  void Stop();

  // True once the first list has been handed to `replace`.
  bool synced() const;
  // Waits until synced() or `timeout`; returns synced().
  bool WaitForSync(absl::Duration timeout) const;

  // The RV of the last list, event or bookmark seen.
  std::string resource_version() const;

  ReflectorStats stats() const;

 private:
  enum class WatchEnd { kHealthy, kQuiet, kExpired, kFailed };

  void Run();
  absl::Status List();
  WatchEnd WatchOnce();
  bool HandleEvent(const nlohmann::json& event, WatchEnd& end);
  void SetResourceVersion(const nlohmann::json& object);
  void RecordError(const absl::Status& status);
  void RecordSuccess();
  // Sleeps for `delay` or until Stop(); false when stopping.
  bool Wait(absl::Duration delay);

  ApiClient* const client_;
  const std::string collection_path_;
  const ReflectorHandler handler_;
  const ReflectorOptions options_;

  std::atomic<bool> stopping_{false};
  absl::Notification stop_requested_;
  absl::Notification synced_;
  std::thread thread_;
  absl::Mutex start_mu_;
  bool started_ ABSL_GUARDED_BY(start_mu_) = false;

  mutable absl::Mutex mu_;
  std::string resource_version_ ABSL_GUARDED_BY(mu_);
  ReflectorStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace deviceshare::kube

#endif  // DEVICESHARE_KUBE_REFLECTOR_H_
