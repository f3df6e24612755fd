#include "testing/fake_api_store.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace deviceshare::testing {
namespace {

using nlohmann::json;

std::string StringAt(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string EventLine(absl::string_view type, const json& object) {
  return absl::StrCat(
      "{\"type\":\"", type, "\",\"object\":",
      object.dump(-1, ' ', false, json::error_handler_t::replace), "}\n");
}

}  // namespace

const ApiResourceInfo& InfoOf(ApiResource resource) {
  static constexpr ApiResourceInfo kPods = {"Pod", "pods", "", "v1", true};
  static constexpr ApiResourceInfo kNodes = {"Node", "nodes", "", "v1", false};
  static constexpr ApiResourceInfo kSlices = {"ResourceSlice", "resourceslices",
                                              "resource.k8s.io",
                                              "resource.k8s.io/v1", false};
  static constexpr ApiResourceInfo kClaims = {"ResourceClaim", "resourceclaims",
                                              "resource.k8s.io",
                                              "resource.k8s.io/v1", true};
  static constexpr ApiResourceInfo kClasses = {"DeviceClass", "deviceclasses",
                                               "resource.k8s.io",
                                               "resource.k8s.io/v1", false};
  static constexpr ApiResourceInfo kQuotas = {"ResourceQuota", "resourcequotas",
                                              "", "v1", true};
  switch (resource) {
    case ApiResource::kPods:
      return kPods;
    case ApiResource::kNodes:
      return kNodes;
    case ApiResource::kResourceSlices:
      return kSlices;
    case ApiResource::kResourceClaims:
      return kClaims;
    case ApiResource::kDeviceClasses:
      return kClasses;
    case ApiResource::kResourceQuotas:
      return kQuotas;
  }
  return kPods;
}

std::string QualifiedResource(ApiResource resource) {
  const ApiResourceInfo& info = InfoOf(resource);
  return *info.group == '\0' ? info.plural
                             : absl::StrCat(info.plural, ".", info.group);
}

FakeApiStore::FakeApiStore(WatchSettings settings, size_t max_history)
    : settings_(settings), max_history_(std::max<size_t>(max_history, 2)) {}

FakeApiStore::Objects& FakeApiStore::ObjectsOf(ApiResource resource) {
  return const_cast<Objects&>(std::as_const(*this).ObjectsOf(resource));
}

const FakeApiStore::Objects& FakeApiStore::ObjectsOf(
    ApiResource resource) const {
  switch (resource) {
    case ApiResource::kPods:
      return pods_;
    case ApiResource::kNodes:
      return nodes_;
    case ApiResource::kResourceSlices:
      return slices_;
    case ApiResource::kResourceClaims:
      return claims_;
    case ApiResource::kDeviceClasses:
      return classes_;
    case ApiResource::kResourceQuotas:
      return quotas_;
  }
  return pods_;
}

FakeApiStore::ObjectPtr FakeApiStore::CommitLocked(ApiResource resource,
                                                   const Key& key, json object,
                                                   const char* type,
                                                   ObjectPtr previous) {
  ++rv_;
  object["metadata"]["resourceVersion"] = absl::StrCat(rv_);
  auto stored = std::make_shared<const json>(std::move(object));
  Objects& objects = ObjectsOf(resource);
  if (std::strcmp(type, "DELETED") == 0) {
    objects.erase(key);
  } else {
    objects[key] = stored;
  }
  history_.push_back({rv_, resource, type, stored, std::move(previous)});
  if (history_.size() > max_history_) {
    const size_t drop = history_.size() / 2;
    compacted_rv_ = history_[drop - 1].rv;
    history_.erase(history_.begin(), history_.begin() + drop);
  }
  changed_.SignalAll();
  return stored;
}

absl::StatusOr<json> FakeApiStore::Upsert(ApiResource resource, json object) {
  return StoreObject(resource, std::move(object), /*create=*/false);
}

absl::StatusOr<json> FakeApiStore::Create(ApiResource resource, json object) {
  return StoreObject(resource, std::move(object), /*create=*/true);
}

absl::StatusOr<json> FakeApiStore::StoreObject(ApiResource resource,
                                               json object, bool create) {
  const ApiResourceInfo& info = InfoOf(resource);
  if (!object.is_object() || !object["metadata"].is_object() ||
      StringAt(object["metadata"], "name").empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(info.kind, " without metadata.name"));
  }
  json& metadata = object["metadata"];
  if (info.namespaced) {
    if (StringAt(metadata, "namespace").empty()) {
      metadata["namespace"] = "default";
    }
  } else {
    metadata.erase("namespace");
  }
  if (!object.contains("kind")) object["kind"] = info.kind;
  if (!object.contains("apiVersion")) object["apiVersion"] = info.api_version;
  const Key key{StringAt(metadata, "namespace"), StringAt(metadata, "name")};
  absl::MutexLock lock(&mu_);
  Objects& objects = ObjectsOf(resource);
  auto existing = objects.find(key);
  ObjectPtr previous = existing == objects.end() ? nullptr : existing->second;
  if (create && previous != nullptr) {
    return absl::AlreadyExistsError(absl::StrCat(
        QualifiedResource(resource), " \"", key.second, "\" already exists"));
  }
  if (StringAt(metadata, "uid").empty()) {
    metadata["uid"] = previous != nullptr
                          ? StringAt((*previous)["metadata"], "uid")
                          : absl::StrCat("uid-", next_uid_++);
  }
  if (!metadata.contains("creationTimestamp")) {
    metadata["creationTimestamp"] =
        previous != nullptr &&
                (*previous)["metadata"].contains("creationTimestamp")
            ? (*previous)["metadata"]["creationTimestamp"]
            : json(absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(),
                                    absl::UTCTimeZone()));
  }
  const char* type = previous == nullptr ? "ADDED" : "MODIFIED";
  return *CommitLocked(resource, key, std::move(object), type,
                       std::move(previous));
}

std::optional<json> FakeApiStore::Delete(ApiResource resource,
                                         const std::string& ns,
                                         const std::string& name) {
  absl::MutexLock lock(&mu_);
  Objects& objects = ObjectsOf(resource);
  auto it = objects.find({ns, name});
  if (it == objects.end()) return std::nullopt;
  const Key key = it->first;
  ObjectPtr previous = it->second;
  return *CommitLocked(resource, key, *previous, "DELETED", previous);
}

absl::StatusOr<json> FakeApiStore::Update(
    ApiResource resource, const std::string& ns, const std::string& name,
    const std::function<absl::Status(json&)>& mutate) {
  absl::MutexLock lock(&mu_);
  Objects& objects = ObjectsOf(resource);
  auto it = objects.find({ns, name});
  if (it == objects.end()) {
    return absl::NotFoundError(
        absl::StrCat(QualifiedResource(resource), " \"", name, "\" not found"));
  }
  ObjectPtr previous = it->second;
  json object = *previous;
  if (absl::Status status = mutate(object); !status.ok()) return status;
  if (!object.is_object()) object = json::object();
  if (!object["metadata"].is_object()) object["metadata"] = json::object();
  // A merge patch may null out anything; the identity is not the patch's.
  for (const char* field : {"name", "namespace", "uid", "creationTimestamp"}) {
    auto original = (*previous)["metadata"].find(field);
    if (original != (*previous)["metadata"].end()) {
      object["metadata"][field] = *original;
    }
  }
  return *CommitLocked(resource, it->first, std::move(object), "MODIFIED",
                       std::move(previous));
}

std::optional<json> FakeApiStore::Get(ApiResource resource,
                                      const std::string& ns,
                                      const std::string& name) const {
  absl::MutexLock lock(&mu_);
  const Objects& objects = ObjectsOf(resource);
  auto it = objects.find({ns, name});
  if (it == objects.end()) return std::nullopt;
  return *it->second;
}

std::pair<int64_t, std::vector<FakeApiStore::ObjectPtr>> FakeApiStore::List(
    ApiResource resource, const ObjectFilter& filter) const {
  absl::MutexLock lock(&mu_);
  std::vector<ObjectPtr> items;
  for (const auto& [key, object] : ObjectsOf(resource)) {
    if (filter.Matches(*object)) items.push_back(object);
  }
  return {rv_, std::move(items)};
}

int64_t FakeApiStore::resource_version() const {
  absl::MutexLock lock(&mu_);
  return rv_;
}

absl::StatusOr<std::shared_ptr<WatchCursor>> FakeApiStore::StartWatch(
    ApiResource resource, ObjectFilter filter, const std::string& rv,
    bool bookmarks, absl::Duration timeout) {
  int64_t from = 0;
  if (!rv.empty() && (!absl::SimpleAtoi(rv, &from) || from < 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("resourceVersion: \"", rv, "\" is not a number"));
  }
  auto cursor = std::make_shared<WatchCursor>();
  cursor->resource = resource;
  cursor->filter = std::move(filter);
  cursor->bookmarks = bookmarks;
  const absl::Time now = absl::Now();
  cursor->deadline = now + timeout;
  cursor->next_bookmark = now + settings_.bookmark_interval;
  cursor->last_write = now;
  absl::MutexLock lock(&mu_);
  ++open_watches_;
  cursor->close_generation = close_generation_;
  cursor->bookmark_generation = bookmark_generation_;
  if (from == 0) {
    for (const auto& [key, object] : ObjectsOf(resource)) {
      if (cursor->filter.Matches(*object)) cursor->initial.push_back(object);
    }
    cursor->position = rv_;
  } else if (from < compacted_rv_) {
    cursor->expired = true;
  } else {
    cursor->position = from;
  }
  return cursor;
}

void FakeApiStore::EndWatch() {
  absl::MutexLock lock(&mu_);
  --open_watches_;
}

bool FakeApiStore::HasWorkLocked(const WatchCursor& cursor,
                                 absl::Time now) const {
  if (shut_down_ || cursor.close_generation != close_generation_ ||
      now >= cursor.deadline) {
    return true;
  }
  if (paused_) return false;
  if (cursor.position < compacted_rv_) return true;
  if (rv_ > cursor.position && !history_.empty() &&
      history_.back().rv > cursor.position) {
    return true;
  }
  return cursor.bookmarks &&
         (cursor.bookmark_generation != bookmark_generation_ ||
          now >= cursor.next_bookmark);
}

FakeApiStore::Batch FakeApiStore::NextBatch(WatchCursor& cursor,
                                            absl::Duration max_wait) {
  Batch batch;
  if (cursor.expired) {
    cursor.expired = false;
    batch.data = EventLine("ERROR", {{"kind", "Status"},
                                     {"apiVersion", "v1"},
                                     {"metadata", json::object()},
                                     {"status", "Failure"},
                                     {"reason", "Expired"},
                                     {"code", 410},
                                     {"message", "too old resource version"}});
    batch.end = true;
    return batch;
  }
  if (!cursor.initial.empty()) {
    for (const ObjectPtr& object : cursor.initial) {
      batch.data += EventLine("ADDED", *object);
    }
    cursor.initial.clear();
    cursor.last_write = absl::Now();
    return batch;
  }

  struct Pending {
    const char* type;
    ObjectPtr object;
  };
  std::vector<Pending> pending;
  std::string bookmark_rv;
  {
    absl::MutexLock lock(&mu_);
    absl::Time wake = absl::Now() + max_wait;
    wake = std::min(wake, cursor.deadline);
    if (cursor.bookmarks) wake = std::min(wake, cursor.next_bookmark);
    if (settings_.heartbeat_interval > absl::ZeroDuration()) {
      wake = std::min(wake, cursor.last_write + settings_.heartbeat_interval);
    }
    while (!HasWorkLocked(cursor, absl::Now()) && absl::Now() < wake) {
      changed_.WaitWithDeadline(&mu_, wake);
    }
    const absl::Time now = absl::Now();
    if (shut_down_ || cursor.close_generation != close_generation_) {
      batch.end = true;
      return batch;
    }
    if (!paused_) {
      if (cursor.position < compacted_rv_) {
        // The history was trimmed under this stream: as etcd compaction
        // does to a slow watcher.
        cursor.expired = true;
        return batch;
      }
      auto first = std::upper_bound(
          history_.begin(), history_.end(), cursor.position,
          [](int64_t rv, const Change& change) { return rv < change.rv; });
      for (auto it = first; it != history_.end(); ++it) {
        if (it->resource != cursor.resource) continue;
        const bool now_matches = std::strcmp(it->type, "DELETED") != 0 &&
                                 cursor.filter.Matches(*it->object);
        const bool matched =
            it->previous != nullptr && cursor.filter.Matches(*it->previous);
        if (now_matches && matched) {
          pending.push_back({"MODIFIED", it->object});
        } else if (now_matches) {
          pending.push_back({"ADDED", it->object});
        } else if (matched) {
          pending.push_back({"DELETED", it->object});
        }
      }
      cursor.position = rv_;
      if (cursor.bookmarks &&
          (cursor.bookmark_generation != bookmark_generation_ ||
           now >= cursor.next_bookmark)) {
        cursor.bookmark_generation = bookmark_generation_;
        cursor.next_bookmark = now + settings_.bookmark_interval;
        bookmark_rv = absl::StrCat(rv_);
      }
    }
    batch.end = now >= cursor.deadline;
  }
  for (const Pending& p : pending) batch.data += EventLine(p.type, *p.object);
  if (!bookmark_rv.empty()) {
    const ApiResourceInfo& info = InfoOf(cursor.resource);
    batch.data += EventLine("BOOKMARK",
                            {{"kind", info.kind},
                             {"apiVersion", info.api_version},
                             {"metadata", {{"resourceVersion", bookmark_rv}}}});
  }
  const absl::Time now = absl::Now();
  if (batch.data.empty() && !batch.end &&
      settings_.heartbeat_interval > absl::ZeroDuration() &&
      now >= cursor.last_write + settings_.heartbeat_interval) {
    batch.data = "\n";
  }
  if (!batch.data.empty()) cursor.last_write = now;
  return batch;
}

void FakeApiStore::CompactHistory() {
  absl::MutexLock lock(&mu_);
  history_.clear();
  compacted_rv_ = rv_;
  changed_.SignalAll();
}

void FakeApiStore::CloseWatches() {
  absl::MutexLock lock(&mu_);
  ++close_generation_;
  changed_.SignalAll();
}

void FakeApiStore::SendBookmarks() {
  absl::MutexLock lock(&mu_);
  ++bookmark_generation_;
  changed_.SignalAll();
}

void FakeApiStore::SetPaused(bool paused) {
  absl::MutexLock lock(&mu_);
  paused_ = paused;
  changed_.SignalAll();
}

void FakeApiStore::Shutdown() {
  absl::MutexLock lock(&mu_);
  shut_down_ = true;
  changed_.SignalAll();
}

int FakeApiStore::open_watches() const {
  absl::MutexLock lock(&mu_);
  return open_watches_;
}

}  // namespace deviceshare::testing
