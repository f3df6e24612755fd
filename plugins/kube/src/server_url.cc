#include "server_url.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace deviceshare::kube::internal {
namespace {

absl::Status BadUrl(absl::string_view url, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("server URL \"", url, "\": ", why));
}

}  // namespace

absl::StatusOr<ServerUrl> ParseServerUrl(absl::string_view url) {
  ServerUrl parsed;
  absl::string_view rest = url;
  if (absl::ConsumePrefix(&rest, "https://")) {
    parsed.https = true;
  } else if (!absl::ConsumePrefix(&rest, "http://")) {
    return BadUrl(url, "not http:// or https://");
  }
  const size_t slash = rest.find('/');
  absl::string_view authority = rest.substr(0, slash);
  if (slash != absl::string_view::npos) {
    absl::string_view path = rest.substr(slash);
    while (absl::ConsumeSuffix(&path, "/")) {
    }
    if (absl::StrContains(path, '?') || absl::StrContains(path, '#')) {
      return BadUrl(url, "a query or fragment is not allowed");
    }
    parsed.base_path = std::string(path);
  }
  if (absl::StrContains(authority, '@')) {
    return BadUrl(url, "user info is not supported");
  }
  absl::string_view port_text;
  if (absl::ConsumePrefix(&authority, "[")) {
    const size_t close = authority.find(']');
    if (close == absl::string_view::npos) {
      return BadUrl(url, "unclosed '[' in the host");
    }
    parsed.host = std::string(authority.substr(0, close));
    absl::string_view after = authority.substr(close + 1);
    if (!after.empty() && !absl::ConsumePrefix(&after, ":")) {
      return BadUrl(url, "junk after the IPv6 host");
    }
    port_text = after;
  } else {
    const size_t colon = authority.rfind(':');
    parsed.host = std::string(authority.substr(0, colon));
    if (colon != absl::string_view::npos) {
      port_text = authority.substr(colon + 1);
    }
    if (absl::StrContains(parsed.host, ':')) {
      return BadUrl(url, "an IPv6 host must be in brackets");
    }
  }
  if (parsed.host.empty()) return BadUrl(url, "no host");
  if (port_text.empty()) {
    parsed.port = parsed.https ? 443 : 80;
  } else if (!absl::SimpleAtoi(port_text, &parsed.port) || parsed.port <= 0 ||
             parsed.port > 65535) {
    return BadUrl(url, absl::StrCat("bad port \"", port_text, "\""));
  }
  const bool ipv6 = absl::StrContains(parsed.host, ':');
  parsed.host_header = ipv6 ? absl::StrCat("[", parsed.host, "]:", parsed.port)
                            : absl::StrCat(parsed.host, ":", parsed.port);
  return parsed;
}

}  // namespace deviceshare::kube::internal
