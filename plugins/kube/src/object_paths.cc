#include "deviceshare/kube/object_paths.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace deviceshare::kube {
namespace {

constexpr char kResourceApi[] = "/apis/resource.k8s.io/v1";

}  // namespace

std::string EscapeUrlComponent(absl::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' ||
        c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
  }
  return out;
}

std::string PodsPath(absl::string_view ns) {
  if (ns.empty()) return "/api/v1/pods";
  return absl::StrCat("/api/v1/namespaces/", EscapeUrlComponent(ns), "/pods");
}

std::string PodPath(absl::string_view ns, absl::string_view name) {
  return absl::StrCat(PodsPath(ns), "/", EscapeUrlComponent(name));
}

std::string PodBindingPath(absl::string_view ns, absl::string_view name) {
  return absl::StrCat(PodPath(ns, name), "/binding");
}

std::string PodStatusPath(absl::string_view ns, absl::string_view name) {
  return absl::StrCat(PodPath(ns, name), "/status");
}

std::string NodesPath() { return "/api/v1/nodes"; }

std::string NodePath(absl::string_view name) {
  return absl::StrCat(NodesPath(), "/", EscapeUrlComponent(name));
}

std::string NodeStatusPath(absl::string_view name) {
  return absl::StrCat(NodePath(name), "/status");
}

std::string EventsPath(absl::string_view ns) {
  return absl::StrCat("/api/v1/namespaces/", EscapeUrlComponent(ns), "/events");
}

std::string ResourceSlicesPath() {
  return absl::StrCat(kResourceApi, "/resourceslices");
}

std::string ResourceSlicePath(absl::string_view name) {
  return absl::StrCat(ResourceSlicesPath(), "/", EscapeUrlComponent(name));
}

std::string ResourceClaimsPath(absl::string_view ns) {
  if (ns.empty()) return absl::StrCat(kResourceApi, "/resourceclaims");
  return absl::StrCat(kResourceApi, "/namespaces/", EscapeUrlComponent(ns),
                      "/resourceclaims");
}

std::string ResourceClaimPath(absl::string_view ns, absl::string_view name) {
  return absl::StrCat(ResourceClaimsPath(ns), "/", EscapeUrlComponent(name));
}

std::string ResourceClaimStatusPath(absl::string_view ns,
                                    absl::string_view name) {
  return absl::StrCat(ResourceClaimPath(ns, name), "/status");
}

std::string DeviceClassesPath() {
  return absl::StrCat(kResourceApi, "/deviceclasses");
}

std::string DeviceClassPath(absl::string_view name) {
  return absl::StrCat(DeviceClassesPath(), "/", EscapeUrlComponent(name));
}

std::string WithQuery(
    absl::string_view path,
    const std::vector<std::pair<std::string, std::string>>& params) {
  std::string out(path);
  char separator = absl::StrContains(path, '?') ? '&' : '?';
  for (const auto& [key, value] : params) {
    absl::StrAppend(&out, std::string(1, separator), EscapeUrlComponent(key),
                    "=", EscapeUrlComponent(value));
    separator = '&';
  }
  return out;
}

}  // namespace deviceshare::kube
