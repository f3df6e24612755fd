#include "deviceshare/kube/events.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "deviceshare/kube/object_paths.h"

namespace deviceshare::kube {
namespace {

constexpr size_t kMaxMessageBytes = 1024;

std::string CutMessage(absl::string_view message) {
  if (message.size() <= kMaxMessageBytes) return std::string(message);
  size_t end = kMaxMessageBytes - 3;
  // Back off continuation bytes (10xxxxxx) so a character is not split.
  while (end > 0 && (static_cast<unsigned char>(message[end]) & 0xC0) == 0x80) {
    --end;
  }
  return absl::StrCat(message.substr(0, end), "...");
}

}  // namespace

nlohmann::json MakePodEvent(const PodRef& pod, absl::string_view type,
                            absl::string_view reason, absl::string_view message,
                            absl::string_view component, absl::Time now) {
  const std::string timestamp =
      absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", now, absl::UTCTimeZone());
  nlohmann::json involved = {{"apiVersion", "v1"},
                             {"kind", "Pod"},
                             {"namespace", pod.namespace_name},
                             {"name", pod.name}};
  if (!pod.uid.empty()) involved["uid"] = pod.uid;
  return {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata",
       {{"generateName", absl::StrCat(pod.name, ".")},
        {"namespace", pod.namespace_name}}},
      {"involvedObject", std::move(involved)},
      {"type", std::string(type)},
      {"reason", std::string(reason)},
      {"message", CutMessage(message)},
      {"source", {{"component", std::string(component)}}},
      {"firstTimestamp", timestamp},
      {"lastTimestamp", timestamp},
      {"count", 1},
  };
}

absl::Status PostPodEvent(ApiClient& client, const PodRef& pod,
                          absl::string_view type, absl::string_view reason,
                          absl::string_view message,
                          absl::string_view component, absl::Time now) {
  return client
      .Post(EventsPath(pod.namespace_name),
            MakePodEvent(pod, type, reason, message, component, now))
      .status();
}

}  // namespace deviceshare::kube
