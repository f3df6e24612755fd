// File: kube/api_status.h
//
// How a failed Kubernetes API call becomes an absl::Status. The HTTP status
// picks the canonical code, chosen by abseil's retry guidance:
//
//   400, 422 InvalidArgument    401 Unauthenticated    403 PermissionDenied
//   404 NotFound                409 AlreadyExists (a conflict: the object
//   410 FailedPrecondition          exists, or its resourceVersion moved)
//       (Gone: the resourceVersion is too old; relist)
//   408, 429, 5xx Unavailable   anything else Unknown
//
// Transport failures (refused, reset, TLS, timeouts) are Unavailable with no
// HTTP status. The message holds the method, the path, the HTTP status and
// the API's own Status.message when the body has one:
//   POST /api/v1/namespaces/ns/pods/p/binding: HTTP 409: pod p is already
//   assigned to node "n1"
// Because several HTTP statuses share a code, the HTTP status rides along as
// a payload: HttpStatusOf tells a 409 from another AlreadyExists.
//
// Thread safety: pure functions.
#ifndef DEVICESHARE_KUBE_API_STATUS_H_
#define DEVICESHARE_KUBE_API_STATUS_H_

#include <optional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace deviceshare::kube {

// The error for a response with a non-2xx `http_status`; `body` is the
// response body (a JSON Status object, or anything).
absl::Status ApiError(absl::string_view method, absl::string_view path,
                      int http_status, absl::string_view body);

// The HTTP status an ApiError carries; nullopt for any other status
// (including OK and transport errors).
std::optional<int> HttpStatusOf(const absl::Status& status);

// 409: the write lost a race (resourceVersion precondition) or the object
// exists / is already bound.
inline bool IsConflict(const absl::Status& status) {
  return HttpStatusOf(status) == 409;
}

// 410: a watch or list from a resourceVersion the server no longer has.
inline bool IsGone(const absl::Status& status) {
  return HttpStatusOf(status) == 410;
}

}  // namespace deviceshare::kube

#endif  // DEVICESHARE_KUBE_API_STATUS_H_
