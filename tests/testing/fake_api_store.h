// File: testing/fake_api_store.h
//
// The state behind FakeApiServer: nodes, pods, ResourceSlices,
// ResourceClaims and DeviceClasses as JSON, one global resourceVersion (RV)
// counter, and the history of changes that watches replay. Like etcd behind the
// API server, every write bumps the RV and stamps it into the object's
// metadata.resourceVersion; the history keeps every change after `compacted_rv`
// (CompactHistory moves it to now, and the history is trimmed by half when it
// grows past `max_history`), and a watch from an RV below it is told "410
// Gone".
//
// Watch streams pull from the store with NextBatch, which blocks until
// there is something to send: events after the stream's RV (filtered, with
// selector transitions turned into ADDED/DELETED as the API server does),
// a bookmark, a heartbeat, or the end of the stream (its timeout,
// CloseWatches, Shutdown).
//
// Thread safety: every method may be called from any thread.
#ifndef DEVICESHARE_TESTS_TESTING_FAKE_API_STORE_H_
#define DEVICESHARE_TESTS_TESTING_FAKE_API_STORE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "testing/api_selectors.h"

namespace deviceshare::testing {

enum class ApiResource {
  kPods,
  kNodes,
  kResourceSlices,
  kResourceClaims,
  kDeviceClasses,
  kResourceQuotas,
};

// How the API names a resource, for kinds, lists and messages.
struct ApiResourceInfo {
  const char* kind;         // "ResourceSlice"
  const char* plural;       // "resourceslices"
  const char* group;        // "" (core) or "resource.k8s.io"
  const char* api_version;  // "v1" or "resource.k8s.io/v1"
  bool namespaced;
};
const ApiResourceInfo& InfoOf(ApiResource resource);
// "pods", "resourceslices.resource.k8s.io": the resource in NotFound and
// Conflict messages.
std::string QualifiedResource(ApiResource resource);

struct WatchSettings {
  absl::Duration bookmark_interval = absl::Seconds(1);
  // A blank line to an idle stream, so a client that went away is noticed
  // (and its server thread freed) within this time. Zero: none.
  absl::Duration heartbeat_interval = absl::Seconds(1);
};

// One open watch stream's position. Made by StartWatch, advanced by
// NextBatch; owned by the stream.
struct WatchCursor {
  ApiResource resource = ApiResource::kPods;
  ObjectFilter filter;
  bool bookmarks = false;
  int64_t position = 0;  // every change up to this RV has been considered
  bool expired = false;  // started below compacted_rv: send ERROR 410, end
  std::vector<std::shared_ptr<const nlohmann::json>> initial;  // to ADD
  absl::Time deadline;
  absl::Time next_bookmark;
  absl::Time last_write;
  uint64_t close_generation = 0;
  uint64_t bookmark_generation = 0;
};

class FakeApiStore {
 public:
  using ObjectPtr = std::shared_ptr<const nlohmann::json>;

  FakeApiStore(WatchSettings settings, size_t max_history);

  // Adds or replaces an object (namespaced ones: namespace defaults to
  // "default"); a missing metadata.uid is assigned, and kept across
  // replacements. Returns the stored object. InvalidArgument without
  // metadata.name.
  absl::StatusOr<nlohmann::json> Upsert(ApiResource resource,
                                        nlohmann::json object);
  // Upsert for a new object only: AlreadyExists (with the API's message)
  // when one of that name exists.
  absl::StatusOr<nlohmann::json> Create(ApiResource resource,
                                        nlohmann::json object);
  // The removed object (with the RV of its deletion); nullopt if absent.
  std::optional<nlohmann::json> Delete(ApiResource resource,
                                       const std::string& ns,
                                       const std::string& name);
  // Applies `mutate` to a copy of the object and stores it unless `mutate`
  // fails (its error is returned). The identity (name, namespace, uid) is
  // restored after `mutate`. NotFound if absent.
  absl::StatusOr<nlohmann::json> Update(
      ApiResource resource, const std::string& ns, const std::string& name,
      const std::function<absl::Status(nlohmann::json&)>& mutate);
  std::optional<nlohmann::json> Get(ApiResource resource, const std::string& ns,
                                    const std::string& name) const;

  // The current RV and the objects `filter` matches, ordered by key.
  std::pair<int64_t, std::vector<ObjectPtr>> List(
      ApiResource resource, const ObjectFilter& filter) const;

  int64_t resource_version() const;

  // A cursor for a watch from `rv` ("" or "0": ADDED for every current
  // object, then changes). InvalidArgument for an RV that is not a number.
  absl::StatusOr<std::shared_ptr<WatchCursor>> StartWatch(
      ApiResource resource, ObjectFilter filter, const std::string& rv,
      bool bookmarks, absl::Duration timeout);
  // Marks a cursor's stream as gone.
  void EndWatch();

  // What a stream sends next: newline-terminated JSON lines (or a lone "\n"
  // heartbeat), and whether the stream ends after them. Waits up to
  // `max_wait` for something to send; may return nothing.
  struct Batch {
    std::string data;
    bool end = false;
  };
  Batch NextBatch(WatchCursor& cursor, absl::Duration max_wait);

  void CompactHistory();
  void CloseWatches();
  void SendBookmarks();
  // While paused, streams deliver no events and no bookmarks (they still
  // end, expire and heartbeat).
  void SetPaused(bool paused);
  // Ends every stream for good; later NextBatch calls end at once.
  void Shutdown();
  int open_watches() const;

 private:
  struct Change {
    int64_t rv;
    ApiResource resource;
    const char* type;
    ObjectPtr object;
    ObjectPtr previous;  // null for ADDED
  };
  using Key = std::pair<std::string, std::string>;  // namespace, name
  using Objects = std::map<Key, ObjectPtr>;

  // Upsert, or Create when `create`.
  absl::StatusOr<nlohmann::json> StoreObject(ApiResource resource,
                                             nlohmann::json object,
                                             bool create);

  Objects& ObjectsOf(ApiResource resource) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  const Objects& ObjectsOf(ApiResource resource) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Stores `object` under `key` with a new RV and records the change.
  ObjectPtr CommitLocked(ApiResource resource, const Key& key,
                         nlohmann::json object, const char* type,
                         ObjectPtr previous) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool HasWorkLocked(const WatchCursor& cursor, absl::Time now) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);

  const WatchSettings settings_;
  const size_t max_history_;
  mutable absl::Mutex mu_;
  absl::CondVar changed_;
  int64_t rv_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t next_uid_ ABSL_GUARDED_BY(mu_) = 1;
  Objects pods_ ABSL_GUARDED_BY(mu_);
  Objects nodes_ ABSL_GUARDED_BY(mu_);
  Objects slices_ ABSL_GUARDED_BY(mu_);
  Objects claims_ ABSL_GUARDED_BY(mu_);
  Objects classes_ ABSL_GUARDED_BY(mu_);
  Objects quotas_ ABSL_GUARDED_BY(mu_);
  std::deque<Change> history_ ABSL_GUARDED_BY(mu_);
  int64_t compacted_rv_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t close_generation_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t bookmark_generation_ ABSL_GUARDED_BY(mu_) = 0;
  bool paused_ ABSL_GUARDED_BY(mu_) = false;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  int open_watches_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_FAKE_API_STORE_H_
