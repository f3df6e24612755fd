// File: kube/object_paths.h
//
// API paths of the objects deviceshare reads and writes, with names escaped
// so that a hostile or unusual name cannot change the path (Kubernetes
// names are DNS labels, but a path is built from whatever a request said).
//
//   PodPath("ns", "p")          /api/v1/namespaces/ns/pods/p
//   PodBindingPath("ns", "p")   /api/v1/namespaces/ns/pods/p/binding
//   ResourceSlicePath("s")      /apis/resource.k8s.io/v1/resourceslices/s
//   WithQuery(PodsPath(), {{"fieldSelector", "spec.nodeName=n1"}})
//                               /api/v1/pods?fieldSelector=spec.nodeName%3Dn1
//
// Thread safety: pure functions.
#ifndef DEVICESHARE_KUBE_OBJECT_PATHS_H_
#define DEVICESHARE_KUBE_OBJECT_PATHS_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace deviceshare::kube {

// Percent-encodes everything but RFC 3986's unreserved characters
// (A-Z a-z 0-9 - . _ ~), so the result is safe as one path segment or one
// query key or value.
std::string EscapeUrlComponent(absl::string_view text);

// Pods of namespace `ns`, or of every namespace when `ns` is empty.
std::string PodsPath(absl::string_view ns = "");
std::string PodPath(absl::string_view ns, absl::string_view name);
std::string PodBindingPath(absl::string_view ns, absl::string_view name);
std::string PodStatusPath(absl::string_view ns, absl::string_view name);

std::string NodesPath();
std::string NodePath(absl::string_view name);
std::string NodeStatusPath(absl::string_view name);

std::string EventsPath(absl::string_view ns);

// Dynamic Resource Allocation objects, group resource.k8s.io, version v1
// (Kubernetes 1.34). ResourceSlices and DeviceClasses are cluster-scoped;
// ResourceClaims are namespaced.
std::string ResourceSlicesPath();
std::string ResourceSlicePath(absl::string_view name);
// Claims of namespace `ns`, or of every namespace when `ns` is empty.
std::string ResourceClaimsPath(absl::string_view ns = "");
std::string ResourceClaimPath(absl::string_view ns, absl::string_view name);
std::string ResourceClaimStatusPath(absl::string_view ns,
                                    absl::string_view name);
std::string DeviceClassesPath();
std::string DeviceClassPath(absl::string_view name);

// `path` with the escaped `params` appended after '?' (or '&' when `path`
// has a query already).
std::string WithQuery(
    absl::string_view path,
    const std::vector<std::pair<std::string, std::string>>& params);

}  // namespace deviceshare::kube

#endif  // DEVICESHARE_KUBE_OBJECT_PATHS_H_
