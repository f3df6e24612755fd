#include "deviceshare/extender/extender_server.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "certificate_reloader.h"
#include "deviceshare/extender/extender_wire.h"
#include "extender_log.h"
#include "extender_metrics.h"
#include "http_service.h"

namespace deviceshare::extender {
namespace {

// The connection counters of the listener, for /metrics.
void AppendConnectionMetrics(const HttpServiceStats& stats, std::string& text) {
  absl::StrAppend(
      &text,
      "# HELP deviceshare_extender_connections_open Connections open to the "
      "extender's listener.\n"
      "# TYPE deviceshare_extender_connections_open gauge\n"
      "deviceshare_extender_connections_open ",
      stats.open,
      "\n"
      "# HELP deviceshare_extender_connections_closed_total Connections the "
      "listener closed early, by reason.\n"
      "# TYPE deviceshare_extender_connections_closed_total counter\n");
  const std::pair<const char*, int64_t> reasons[] = {
      {"evicted", stats.evicted},
      {"refused", stats.refused},
      {"timed_out", stats.timed_out},
      {"handshake_failed", stats.handshake_failed},
      {"too_large", stats.too_large}};
  for (const auto& [reason, count] : reasons) {
    absl::StrAppend(&text,
                    "deviceshare_extender_connections_closed_total{reason=\"",
                    reason, "\"} ", count, "\n");
  }
  absl::StrAppend(
      &text,
      "# HELP deviceshare_extender_requests_waiting_for_memory Requests with a "
      "large body waiting, unread, for the body budget.\n"
      "# TYPE deviceshare_extender_requests_waiting_for_memory gauge\n"
      "deviceshare_extender_requests_waiting_for_memory ",
      stats.waiting_for_budget, "\n");
}

}  // namespace

class ExtenderServer::Impl {
 public:
  Impl(Extender* extender, ReadinessCheck not_ready, ServerOptions options,
       MetricsAppender extra, ReadinessCheck notes)
      : extender_(extender),
        not_ready_(std::move(not_ready)),
        readiness_notes_(std::move(notes)),
        options_(std::move(options)),
        metrics_(extender, std::move(extra)) {}

  ~Impl() { Stop(); }

  absl::Status Init() {
    if (options_.tls_cert_file.empty() != options_.tls_key_file.empty()) {
      return absl::InvalidArgumentError(
          "--tls-cert and --tls-key: give both or neither");
    }
    HttpServiceOptions http;
    http.host = options_.host;
    http.port = options_.port;
    http.what = absl::StrCat("--address ", options_.host, ":", options_.port);
    if (!options_.tls_cert_file.empty()) {
      absl::StatusOr<std::unique_ptr<CertificateReloader>> reloader =
          CertificateReloader::Create(options_.tls_cert_file,
                                      options_.tls_key_file,
                                      "--tls-cert / --tls-key");
      if (!reloader.ok()) return reloader.status();
      reloader_ = *std::move(reloader);
      http.install_certificate = [this](SSL_CTX& ctx) {
        return reloader_->Install(ctx);
      };
    }
    // Without TLS, HttpService refuses a client CA, naming the flag.
    http.client_ca_file = options_.tls_client_ca_file;
    http.threads =
        options_.threads > 0
            ? options_.threads
            : std::max(
                  8, 2 * static_cast<int>(std::thread::hardware_concurrency()));
    http.max_body_bytes = options_.max_body_bytes;
    http.large_body_budget = options_.large_body_budget;
    http.max_connections = options_.max_connections;
    http.log_error = [](const std::string& message) {
      LogNode(LogLevel::kError, "", message);
    };
    absl::StatusOr<std::unique_ptr<HttpService>> service =
        HttpService::Create(std::move(http));
    if (!service.ok()) return service.status();
    service_ = *std::move(service);
    Route();
    return absl::OkStatus();
  }

  int port() const { return service_->port(); }
  void Start() { service_->Start(); }
  void Stop() {
    if (service_) service_->Stop();
  }

 private:
  using Clock = std::chrono::steady_clock;

  void Route() {
    service_->Handle(
        "POST", "/filter",
        [this](const HttpRequest& request, HttpResponse& response) {
          const auto start = Clock::now();
          absl::StatusOr<ExtenderArgs> args = DecodeExtenderArgs(request.body);
          if (!Decoded(args.status(), "filter", response, start)) return;
          FilterResult result;
          if (std::string why = not_ready_(); !why.empty()) {
            result.error = std::move(why);
          } else {
            result = extender_->Filter(*args);
          }
          response.Set(EncodeFilterResult(result, args->nodes.has_value()),
                       "application/json");
          metrics_.Observe("filter", response.status, Clock::now() - start);
        },
        HttpAccess::kAuthenticated);
    service_->Handle(
        "POST", "/prioritize",
        [this](const HttpRequest& request, HttpResponse& response) {
          const auto start = Clock::now();
          absl::StatusOr<ExtenderArgs> args = DecodeExtenderArgs(request.body);
          if (!Decoded(args.status(), "prioritize", response, start)) return;
          if (std::string why = not_ready_(); !why.empty()) {
            response.status = 503;
            response.Set(why + "\n", "text/plain");
          } else {
            response.Set(extender_->PrioritizeJson(*args), "application/json");
          }
          metrics_.Observe("prioritize", response.status, Clock::now() - start);
        },
        HttpAccess::kAuthenticated);
    service_->Handle(
        "POST", "/bind",
        [this](const HttpRequest& request, HttpResponse& response) {
          const auto start = Clock::now();
          absl::StatusOr<BindingArgs> args = DecodeBindingArgs(request.body);
          if (!Decoded(args.status(), "bind", response, start)) return;
          // Without the first full list the ledgers miss pods, and a replica
          // that does not lead may race the leader: refuse rather than
          // overcommit.
          std::string error = not_ready_();
          if (error.empty()) error = extender_->Bind(*args);
          response.Set(EncodeBindingResult(error), "application/json");
          metrics_.Observe("bind", response.status, Clock::now() - start);
        },
        HttpAccess::kAuthenticated);
    service_->Handle(
        "POST", "/preempt",
        [this](const HttpRequest& request, HttpResponse& response) {
          const auto start = Clock::now();
          absl::StatusOr<PreemptionArgs> args =
              DecodePreemptionArgs(request.body);
          if (!Decoded(args.status(), "preempt", response, start)) return;
          // Victims chosen from a partial view could be the wrong pods.
          if (std::string why = not_ready_(); !why.empty()) {
            response.status = 503;
            response.Set(why + "\n", "text/plain");
          } else {
            absl::StatusOr<PreemptionResult> result = extender_->Preempt(*args);
            if (!Decoded(result.status(), "preempt", response, start)) return;
            response.Set(EncodePreemptionResult(*result), "application/json");
          }
          metrics_.Observe("preempt", response.status, Clock::now() - start);
        },
        HttpAccess::kAuthenticated);
    service_->Handle("GET", "/healthz",
                     [](const HttpRequest&, HttpResponse& response) {
                       response.Set("ok\n", "text/plain");
                     });
    service_->Handle(
        "GET", "/readyz", [this](const HttpRequest&, HttpResponse& response) {
          const std::string why = not_ready_();
          if (why.empty()) {
            const std::string notes =
                readiness_notes_ ? readiness_notes_() : "";
            response.Set(
                notes.empty() ? "ok\n" : absl::StrCat("ok; ", notes, "\n"),
                "text/plain");
          } else {
            response.status = 503;
            response.Set(why + "\n", "text/plain");
          }
        });
    service_->Handle("GET", "/metrics",
                     [this](const HttpRequest&, HttpResponse& response) {
                       std::string text = metrics_.Render();
                       AppendConnectionMetrics(service_->stats(), text);
                       response.Set(std::move(text),
                                    "text/plain; version=0.0.4; charset=utf-8");
                     });
  }

  // False (and a 400 answer) when the body did not decode.
  bool Decoded(const absl::Status& status, absl::string_view verb,
               HttpResponse& response, Clock::time_point start) {
    if (status.ok()) return true;
    response.status = 400;
    response.Set(absl::StrCat(status.message(), "\n"), "text/plain");
    LogNode(LogLevel::kWarn, "",
            absl::StrCat(verb, ": bad request: ", status.message()));
    metrics_.Observe(verb, 400, Clock::now() - start);
    return false;
  }

  Extender* const extender_;
  const ReadinessCheck not_ready_;
  const ReadinessCheck readiness_notes_;  // may be null
  const ServerOptions options_;
  ExtenderMetrics metrics_;
  std::unique_ptr<CertificateReloader> reloader_;  // with TLS
  std::unique_ptr<HttpService> service_;
};

ExtenderServer::ExtenderServer(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

ExtenderServer::~ExtenderServer() = default;

absl::StatusOr<std::unique_ptr<ExtenderServer>> ExtenderServer::Create(
    Extender* extender, ReadinessCheck not_ready, const ServerOptions& options,
    MetricsAppender extra_metrics, ReadinessCheck readiness_notes) {
  auto impl = std::make_unique<Impl>(extender, std::move(not_ready), options,
                                     std::move(extra_metrics),
                                     std::move(readiness_notes));
  absl::Status status = impl->Init();
  if (!status.ok()) return status;
  return std::unique_ptr<ExtenderServer>(new ExtenderServer(std::move(impl)));
}

int ExtenderServer::port() const { return impl_->port(); }
void ExtenderServer::Start() { impl_->Start(); }
void ExtenderServer::Stop() { impl_->Stop(); }

}  // namespace deviceshare::extender
