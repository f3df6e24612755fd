#include "deviceshare/kube/reflector.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <chrono>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "backoff.h"
#include "deviceshare/json_text.h"
#include "deviceshare/kube/api_status.h"
#include "deviceshare/kube/object_paths.h"

namespace deviceshare::kube {
namespace {

using nlohmann::json;

// A watch that lasted this long, or delivered anything, was healthy even if
// it delivered no events: re-watch at once. A shorter, empty one backs off,
// so a server that ends every stream at once is not hammered.
constexpr std::chrono::seconds kHealthyWatch(1);

// A list is the largest allocation a watch makes (for 100,000 pods some
// 350 MiB of response text and JSON), gone once the handler has taken the
// objects in. glibc keeps the freed pages of a thread's arena resident, as
// they lie between what the handler kept, so the process would hold the
// list's peak for good: hand them back to the system.
void ReleaseFreedMemory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

// `object[key]` when it is a string, else "".
std::string StringAt(const json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string ResourceVersionOf(const json& object) {
  if (!object.is_object()) return "";
  auto metadata = object.find("metadata");
  return metadata == object.end() ? "" : StringAt(*metadata, "resourceVersion");
}

}  // namespace

Reflector::Reflector(ApiClient* client, std::string collection_path,
                     ReflectorHandler handler, ReflectorOptions options)
    : client_(client),
      collection_path_(std::move(collection_path)),
      handler_(std::move(handler)),
      options_(options) {}

Reflector::~Reflector() { Stop(); }

void Reflector::Start() {
  absl::MutexLock lock(&start_mu_);
  if (started_) return;
  started_ = true;
  if (stopping_.load()) return;
  thread_ = std::thread([this] { Run(); });
}

void Reflector::Stop() {
  absl::MutexLock lock(&start_mu_);
  started_ = true;  // no Start() after Stop()
  if (!stopping_.exchange(true)) stop_requested_.Notify();
  if (thread_.joinable()) thread_.join();
}

bool Reflector::synced() const { return synced_.HasBeenNotified(); }

bool Reflector::WaitForSync(absl::Duration timeout) const {
  return synced_.WaitForNotificationWithTimeout(timeout);
}

std::string Reflector::resource_version() const {
  absl::MutexLock lock(&mu_);
  return resource_version_;
}

ReflectorStats Reflector::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

void Reflector::RecordError(const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  ++stats_.errors;
  ++stats_.failing;
  stats_.last_error = status;
}

void Reflector::RecordSuccess() {
  absl::MutexLock lock(&mu_);
  stats_.failing = 0;
}

bool Reflector::Wait(absl::Duration delay) {
  return !stop_requested_.WaitForNotificationWithTimeout(delay);
}

void Reflector::SetResourceVersion(const json& object) {
  std::string rv = ResourceVersionOf(object);
  if (rv.empty()) return;
  absl::MutexLock lock(&mu_);
  resource_version_ = std::move(rv);
}

void Reflector::Run() {
  internal::Backoff backoff(options_.initial_backoff, options_.max_backoff,
                            options_.jitter);
  bool need_list = true;
  bool watched_since_list = false;
  while (!stopping_.load()) {
    if (need_list) {
      if (absl::Status listed = List(); !listed.ok()) {
        RecordError(listed);
        if (!Wait(backoff.Next())) return;
        continue;
      }
      need_list = false;
      watched_since_list = false;
      ReleaseFreedMemory();
    }
    if (watched_since_list) {
      absl::MutexLock lock(&mu_);
      ++stats_.rewatches;
    }
    const WatchEnd end = WatchOnce();
    const bool first_watch_after_list = !watched_since_list;
    watched_since_list = true;
    if (stopping_.load()) return;
    switch (end) {
      case WatchEnd::kHealthy:
        backoff.Reset();
        RecordSuccess();
        break;
      case WatchEnd::kExpired:
        need_list = true;
        // A list whose own RV is already too old to watch from means the
        // server is struggling: do not loop on it.
        if (first_watch_after_list && !Wait(backoff.Next())) return;
        break;
      case WatchEnd::kQuiet:
      case WatchEnd::kFailed:
        if (!Wait(backoff.Next())) return;
        break;
    }
  }
}

absl::Status Reflector::List() {
  absl::StatusOr<json> list = client_->Get(collection_path_);
  if (!list.ok()) return list.status();
  const std::string rv = ResourceVersionOf(*list);
  if (rv.empty()) {
    return absl::DataLossError(absl::StrCat(
        "GET ", collection_path_, ": list has no metadata.resourceVersion"));
  }
  std::vector<json> items;
  auto items_it = list->find("items");
  if (items_it != list->end() && !items_it->is_null()) {
    if (!items_it->is_array()) {
      return absl::DataLossError(
          absl::StrCat("GET ", collection_path_, ": items is not a list"));
    }
    // Moved out, not copied: get<std::vector<json>>() copies every item,
    // and a list of 100,000 pods is some 350 MiB of JSON.
    items = std::move(items_it->get_ref<json::array_t&>());
  }
  const std::string list_kind = StringAt(*list, "kind");
  absl::string_view kind = list_kind;
  const std::string api_version = StringAt(*list, "apiVersion");
  std::string item_kind;
  if (absl::ConsumeSuffix(&kind, "List")) item_kind = std::string(kind);
  for (json& item : items) {
    if (!item.is_object()) continue;
    if (!item_kind.empty() && !item.contains("kind")) item["kind"] = item_kind;
    if (!api_version.empty() && !item.contains("apiVersion")) {
      item["apiVersion"] = api_version;
    }
  }
  {
    absl::MutexLock lock(&mu_);
    resource_version_ = rv;
    if (stats_.lists > 0) ++stats_.relists;
    ++stats_.lists;
    stats_.failing = 0;
  }
  if (handler_.replace) handler_.replace(std::move(items));
  if (!synced_.HasBeenNotified()) synced_.Notify();
  return absl::OkStatus();
}

Reflector::WatchEnd Reflector::WatchOnce() {
  const std::string path =
      WithQuery(collection_path_,
                {{"watch", "true"},
                 {"resourceVersion", resource_version()},
                 {"allowWatchBookmarks", "true"},
                 {"timeoutSeconds",
                  absl::StrCat(absl::ToInt64Seconds(options_.watch_timeout))}});
  {
    absl::MutexLock lock(&mu_);
    ++stats_.watches;
  }
  const auto started = std::chrono::steady_clock::now();
  bool received = false;
  WatchEnd end = WatchEnd::kHealthy;
  absl::Status status = client_->Watch(
      path,
      [&](const json& event) {
        received = true;
        return HandleEvent(event, end);
      },
      &stopping_);
  if (end == WatchEnd::kExpired) return end;
  if (!status.ok()) {
    if (IsGone(status)) return WatchEnd::kExpired;
    RecordError(status);
    return WatchEnd::kFailed;
  }
  if (end == WatchEnd::kFailed) return end;
  if (!received && std::chrono::steady_clock::now() - started < kHealthyWatch) {
    return WatchEnd::kQuiet;
  }
  return WatchEnd::kHealthy;
}

bool Reflector::HandleEvent(const json& event, WatchEnd& end) {
  const std::string type = StringAt(event, "type");
  static const json kNoObject = json::object();
  auto object_it = event.is_object() ? event.find("object") : event.end();
  const json& object =
      event.is_object() && object_it != event.end() ? *object_it : kNoObject;
  if (type == "ERROR") {
    auto code = object.is_object() ? object.find("code") : object.end();
    if (object.is_object() && code != object.end() && code->is_number() &&
        code->get<int64_t>() == 410) {
      end = WatchEnd::kExpired;
    } else {
      RecordError(absl::UnavailableError(absl::StrCat(
          "watch ", collection_path_, ": ERROR event: ", JsonText(object))));
      end = WatchEnd::kFailed;
    }
    return false;
  }
  if (type == "BOOKMARK") {
    SetResourceVersion(object);
    absl::MutexLock lock(&mu_);
    ++stats_.bookmarks;
    stats_.failing = 0;
    return true;
  }
  if (type != "ADDED" && type != "MODIFIED" && type != "DELETED") {
    return true;  // a newer event type this reflector does not know
  }
  SetResourceVersion(object);
  if (handler_.event) handler_.event(type, object);
  absl::MutexLock lock(&mu_);
  ++stats_.events;
  stats_.failing = 0;
  return true;
}

}  // namespace deviceshare::kube
