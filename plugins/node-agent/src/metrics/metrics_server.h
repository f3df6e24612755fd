// File: metrics/metrics_server.h
//
// MetricsServer: the node agent's HTTP endpoint for Prometheus (cpp-httplib,
// one thread of its own):
//   GET /metrics   AgentMetrics::Render(), text format 0.0.4
//   GET /healthz   "ok" while the process serves
// started by `serve --metrics-address HOST:PORT` and logged as
// "metrics serving address=HOST:PORT" (port 0 picks a free one).
//
// Errors: InvalidArgument naming --metrics-address for an address that is
// not HOST:PORT, [IPv6]:PORT or :PORT with a port in 0..65535; Unavailable
// when it cannot listen there.
//
// Thread safety: Start and Stop from one thread; scrapes are served on the
// server's thread while the agent counts on its own.
#ifndef DEVICESHARE_AGENT_METRICS_METRICS_SERVER_H_
#define DEVICESHARE_AGENT_METRICS_METRICS_SERVER_H_

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "metrics/agent_metrics.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace deviceshare::agent::metrics {

class MetricsServer {
 public:
  // Serves `metrics` (which must outlive the server) at `address`.
  static absl::StatusOr<std::unique_ptr<MetricsServer>> Start(
      const std::string& address, const AgentMetrics* metrics);
  ~MetricsServer();  // Stop()

  int port() const { return port_; }
  // Stops accepting and lets scrapes in flight finish. Idempotent.
  void Stop();

 private:
  MetricsServer();

  std::unique_ptr<httplib::Server> server_;
  int port_ = -1;
  std::thread thread_;
};

}  // namespace deviceshare::agent::metrics

#endif  // DEVICESHARE_AGENT_METRICS_METRICS_SERVER_H_
