// File: kube/events.h
//
// Kubernetes Events about pods ("Scheduled", "FailedBinding", ...), the
// record `kubectl describe pod` shows. Posting one is best effort for the
// caller: a lost event never changes what happened to the pod.
//
// Thread safety: pure functions; PostPodEvent is as safe as the client.
#ifndef DEVICESHARE_KUBE_EVENTS_H_
#define DEVICESHARE_KUBE_EVENTS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "deviceshare/kube/api_client.h"
#include "nlohmann/json.hpp"

namespace deviceshare::kube {

// The pod an event is about.
struct PodRef {
  std::string namespace_name;
  std::string name;
  std::string uid;  // may be empty
};

// A core/v1 Event: generateName "<pod>.", involvedObject the pod, `type`
// Normal or Warning, source.component `component`,
// first/lastTimestamp `now` (RFC 3339, seconds), count 1. A message longer
// than 1024 bytes is cut (at a UTF-8 boundary) and marked with "...".
nlohmann::json MakePodEvent(const PodRef& pod, absl::string_view type,
                            absl::string_view reason, absl::string_view message,
                            absl::string_view component, absl::Time now);

// POSTs MakePodEvent(...) to /api/v1/namespaces/<ns>/events.
absl::Status PostPodEvent(ApiClient& client, const PodRef& pod,
                          absl::string_view type, absl::string_view reason,
                          absl::string_view message,
                          absl::string_view component, absl::Time now);

}  // namespace deviceshare::kube

#endif  // DEVICESHARE_KUBE_EVENTS_H_
