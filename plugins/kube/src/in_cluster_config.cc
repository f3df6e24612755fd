#include <cstdlib>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "deviceshare/kube/kube_config.h"
#include "file_text.h"

namespace deviceshare::kube {
namespace {

std::optional<std::string> ProcessEnv(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

absl::StatusOr<std::string> RequireEnv(const InClusterSource& source,
                                       const std::string& name) {
  std::optional<std::string> value =
      source.getenv ? source.getenv(name) : ProcessEnv(name);
  if (!value.has_value() || value->empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("in-cluster config: ", name,
                     " is not set (not running in a Kubernetes pod?)"));
  }
  return *value;
}

absl::StatusOr<std::string> ReadServiceAccountFile(
    const InClusterSource& source, absl::string_view name) {
  absl::StatusOr<std::string> text = internal::ReadFileText(
      absl::StrCat(source.service_account_dir, "/", name));
  if (!text.ok()) {
    return absl::Status(
        text.status().code(),
        absl::StrCat("in-cluster config: ", text.status().message()));
  }
  return text;
}

}  // namespace

absl::StatusOr<KubeConfig> InClusterConfig(const InClusterSource& source) {
  absl::StatusOr<std::string> host =
      RequireEnv(source, "KUBERNETES_SERVICE_HOST");
  if (!host.ok()) return host.status();
  absl::StatusOr<std::string> port =
      RequireEnv(source, "KUBERNETES_SERVICE_PORT");
  if (!port.ok()) return port.status();
  int port_number = 0;
  if (!absl::SimpleAtoi(*port, &port_number) || port_number <= 0 ||
      port_number > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("in-cluster config: KUBERNETES_SERVICE_PORT: \"", *port,
                     "\" is not a port number"));
  }

  KubeConfig config;
  // An IPv6 literal needs brackets to be told apart from the port.
  const bool ipv6 = absl::StrContains(*host, ':') && host->front() != '[';
  config.server = ipv6 ? absl::StrCat("https://[", *host, "]:", port_number)
                       : absl::StrCat("https://", *host, ":", port_number);

  absl::StatusOr<std::string> token = ReadServiceAccountFile(source, "token");
  if (!token.ok()) return token.status();
  config.bearer_token = std::string(absl::StripAsciiWhitespace(*token));
  config.token_file = absl::StrCat(source.service_account_dir, "/token");
  absl::StatusOr<std::string> ca = ReadServiceAccountFile(source, "ca.crt");
  if (!ca.ok()) return ca.status();
  config.ca_pem = *std::move(ca);

  absl::StatusOr<std::string> ns = ReadServiceAccountFile(source, "namespace");
  if (ns.ok()) {
    const absl::string_view trimmed = absl::StripAsciiWhitespace(*ns);
    if (!trimmed.empty()) config.default_namespace = std::string(trimmed);
  } else if (!absl::IsNotFound(ns.status())) {
    return ns.status();
  }
  return config;
}

}  // namespace deviceshare::kube
