// File: kube/eviction.h
//
// The Eviction API (policy/v1): POST an Eviction to a pod's /eviction
// subresource, and the API server deletes the pod unless a
// PodDisruptionBudget that selects it has no disruption left. A refusal by
// a budget is HTTP 429 (kube/api_status.h: Unavailable, HttpStatusOf 429)
// with the server's message, e.g. "Cannot evict pod as it would violate
// the pod's disruption budget."; a pod that is gone is 404.
//
// Thread safety: pure functions; EvictPod is as thread-safe as the client.
#ifndef DEVICESHARE_KUBE_EVICTION_H_
#define DEVICESHARE_KUBE_EVICTION_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "deviceshare/kube/api_client.h"
#include "nlohmann/json.hpp"

namespace deviceshare::kube {

// /api/v1/namespaces/{ns}/pods/{name}/eviction
std::string PodEvictionPath(absl::string_view ns, absl::string_view name);

// {"apiVersion":"policy/v1","kind":"Eviction","metadata":{name, namespace}}
nlohmann::json EvictionBody(absl::string_view ns, absl::string_view name);

// Asks the API server to evict the pod; the error as the server gave it.
absl::Status EvictPod(ApiClient& client, absl::string_view ns,
                      absl::string_view name);

}  // namespace deviceshare::kube

#endif  // DEVICESHARE_KUBE_EVICTION_H_
