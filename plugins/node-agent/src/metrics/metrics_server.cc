#include "metrics/metrics_server.h"

#include <chrono>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "httplib.h"
#include "spdlog/spdlog.h"

namespace deviceshare::agent::metrics {
namespace {

struct HostPort {
  std::string host;
  int port = -1;
};

// HOST:PORT, [IPv6]:PORT or :PORT (all interfaces).
absl::StatusOr<HostPort> ParseAddress(const std::string& address) {
  const size_t colon = address.rfind(':');
  HostPort out;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(address.substr(colon + 1), &out.port) || out.port < 0 ||
      out.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics-address: \"", address,
                     "\" is not HOST:PORT with a port in 0..65535"));
  }
  out.host = address.substr(0, colon);
  if (out.host.size() >= 2 && out.host.front() == '[' &&
      out.host.back() == ']') {
    out.host = out.host.substr(1, out.host.size() - 2);
  }
  if (out.host.empty()) out.host = "0.0.0.0";
  return out;
}

}  // namespace

MetricsServer::MetricsServer() : server_(std::make_unique<httplib::Server>()) {}

MetricsServer::~MetricsServer() { Stop(); }

absl::StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(
    const std::string& address, const AgentMetrics* metrics) {
  absl::StatusOr<HostPort> where = ParseAddress(address);
  if (!where.ok()) return where.status();
  std::unique_ptr<MetricsServer> server(new MetricsServer());
  server->server_->Get(
      "/metrics", [metrics](const httplib::Request&, httplib::Response& out) {
        out.set_content(metrics->Render(),
                        "text/plain; version=0.0.4; charset=utf-8");
      });
  server->server_->Get("/healthz",
                       [](const httplib::Request&, httplib::Response& out) {
                         out.set_content("ok\n", "text/plain");
                       });
  if (where->port == 0) {
    server->port_ = server->server_->bind_to_any_port(where->host);
  } else if (server->server_->bind_to_port(where->host, where->port)) {
    server->port_ = where->port;
  }
  if (server->port_ <= 0) {
    return absl::UnavailableError(
        absl::StrCat("--metrics-address ", address,
                     ": cannot listen (in use, or not a local address)"));
  }
  httplib::Server* http = server->server_.get();
  server->thread_ = std::thread([http] { http->listen_after_bind(); });
  // httplib's stop() does nothing before the thread is listening: wait for
  // it, so that a Stop right after Start cannot hang.
  for (int i = 0; i < 1000 && !http->is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  spdlog::info("metrics serving address={}:{}", where->host, server->port_);
  return server;
}

void MetricsServer::Stop() {
  if (!thread_.joinable()) return;
  server_->stop();
  thread_.join();
}

}  // namespace deviceshare::agent::metrics
