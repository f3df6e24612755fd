// File: server_url.h (internal)
//
// The parts of a KubeConfig.server URL the HTTP client needs.
#ifndef DEVICESHARE_KUBE_SRC_SERVER_URL_H_
#define DEVICESHARE_KUBE_SRC_SERVER_URL_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace deviceshare::kube::internal {

struct ServerUrl {
  bool https = false;
  std::string host;  // without IPv6 brackets: what getaddrinfo takes
  int port = 0;      // 443 or 80 when the URL names none
  // The Host header: "host:port", IPv6 in brackets.
  std::string host_header;
  // Prefix of every API path, without a trailing slash ("" or "/k8s").
  std::string base_path;
};

// InvalidArgument naming `url` when it is not http(s)://host[:port][/path].
absl::StatusOr<ServerUrl> ParseServerUrl(absl::string_view url);

}  // namespace deviceshare::kube::internal

#endif  // DEVICESHARE_KUBE_SRC_SERVER_URL_H_
