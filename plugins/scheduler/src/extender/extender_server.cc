#include "deviceshare/extender/extender_server.h"

#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "deviceshare/extender/extender_wire.h"
#include "extender_log.h"
#include "extender_metrics.h"
#include "httplib.h"
#include "listener.h"

namespace deviceshare::extender {
namespace {

// httplib listens with a backlog of 5: when kube-scheduler opens a burst of
// connections (parallel binds), the overflow stalls for a second or is
// dropped. Listening again on the bound socket widens the queue.
template <typename Base>
class WideBacklog : public Base {
 public:
  using Base::Base;
  void WidenBacklog() { ::listen(this->svr_sock_, SOMAXCONN); }
};

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
    if (!options_.tls_cert_file.empty()) {
      auto server = std::make_unique<WideBacklog<httplib::SSLServer>>(
          options_.tls_cert_file.c_str(), options_.tls_key_file.c_str());
      if (!server->is_valid()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--tls-cert ", options_.tls_cert_file, " / --tls-key ",
            options_.tls_key_file, ": not a usable PEM certificate and key"));
      }
      widen_backlog_ = [raw = server.get()] { raw->WidenBacklog(); };
      server_ = std::move(server);
    } else {
      auto server = std::make_unique<WideBacklog<httplib::Server>>();
      widen_backlog_ = [raw = server.get()] { raw->WidenBacklog(); };
      server_ = std::move(server);
    }
    const int threads =
        options_.threads > 0
            ? options_.threads
            : std::max(
                  8, 2 * static_cast<int>(std::thread::hardware_concurrency()));
    server_->new_task_queue = [threads] {
      return new httplib::ThreadPool(threads);
    };
    server_->set_payload_max_length(options_.max_body_bytes);
    // Answers are written in pieces; without this, Nagle and delayed ACKs
    // add tens of milliseconds to a round trip.
    server_->set_tcp_nodelay(true);
    // kube-scheduler keeps its connections; let it, but free the thread an
    // idle connection holds (httplib serves a connection per thread) soon.
    server_->set_keep_alive_max_count(100000);
    server_->set_keep_alive_timeout(5);
    server_->set_read_timeout(30, 0);
    server_->set_write_timeout(30, 0);
    Route();
    absl::Status bound = listener_.Bind(
        server_.get(), options_.host, options_.port,
        absl::StrCat("--address ", options_.host, ":", options_.port));
    if (bound.ok()) widen_backlog_();
    return bound;
  }

  int port() const { return listener_.port(); }
  void Start() { listener_.Start(); }
  void Stop() { listener_.Stop(); }

 private:
  using Clock = std::chrono::steady_clock;

  void Route() {
    server_->Post("/filter", [this](const httplib::Request& request,
                                    httplib::Response& response) {
      const auto start = Clock::now();
      absl::StatusOr<ExtenderArgs> args = DecodeExtenderArgs(request.body);
      if (!Decoded(args.status(), "filter", response, start)) return;
      FilterResult result;
      if (std::string why = not_ready_(); !why.empty()) {
        result.error = std::move(why);
      } else {
        result = extender_->Filter(*args);
      }
      response.set_content(EncodeFilterResult(result, args->nodes.has_value()),
                           "application/json");
      metrics_.Observe("filter", response.status, Clock::now() - start);
    });
    server_->Post("/prioritize", [this](const httplib::Request& request,
                                        httplib::Response& response) {
      const auto start = Clock::now();
      absl::StatusOr<ExtenderArgs> args = DecodeExtenderArgs(request.body);
      if (!Decoded(args.status(), "prioritize", response, start)) return;
      if (std::string why = not_ready_(); !why.empty()) {
        response.status = 503;
        response.set_content(why + "\n", "text/plain");
      } else {
        response.set_content(extender_->PrioritizeJson(*args),
                             "application/json");
      }
      metrics_.Observe("prioritize", response.status, Clock::now() - start);
    });
    server_->Post("/bind", [this](const httplib::Request& request,
                                  httplib::Response& response) {
      const auto start = Clock::now();
      absl::StatusOr<BindingArgs> args = DecodeBindingArgs(request.body);
      if (!Decoded(args.status(), "bind", response, start)) return;
      // Without the first full list the ledgers miss pods, and a replica
      // that does not lead may race the leader: refuse rather than
      // overcommit.
      std::string error = not_ready_();
      if (error.empty()) error = extender_->Bind(*args);
      response.set_content(EncodeBindingResult(error), "application/json");
      metrics_.Observe("bind", response.status, Clock::now() - start);
    });
    server_->Post("/preempt", [this](const httplib::Request& request,
                                     httplib::Response& response) {
      const auto start = Clock::now();
      absl::StatusOr<PreemptionArgs> args = DecodePreemptionArgs(request.body);
      if (!Decoded(args.status(), "preempt", response, start)) return;
      // Victims chosen from a partial view could be the wrong pods.
      if (std::string why = not_ready_(); !why.empty()) {
        response.status = 503;
        response.set_content(why + "\n", "text/plain");
      } else {
        absl::StatusOr<PreemptionResult> result = extender_->Preempt(*args);
        if (!Decoded(result.status(), "preempt", response, start)) return;
        response.set_content(EncodePreemptionResult(*result),
                             "application/json");
      }
      metrics_.Observe("preempt", response.status, Clock::now() - start);
    });
    server_->Get("/healthz",
                 [](const httplib::Request&, httplib::Response& response) {
                   response.set_content("ok\n", "text/plain");
                 });
    server_->Get("/readyz", [this](const httplib::Request&,
                                   httplib::Response& response) {
      const std::string why = not_ready_();
      if (why.empty()) {
        const std::string notes = readiness_notes_ ? readiness_notes_() : "";
        response.set_content(
            notes.empty() ? "ok\n" : absl::StrCat("ok; ", notes, "\n"),
            "text/plain");
      } else {
        response.status = 503;
        response.set_content(why + "\n", "text/plain");
      }
    });
    server_->Get("/metrics", [this](const httplib::Request&,
                                    httplib::Response& response) {
      response.set_content(metrics_.Render(),
                           "text/plain; version=0.0.4; charset=utf-8");
    });
    server_->set_exception_handler([](const httplib::Request& request,
                                      httplib::Response& response,
                                      std::exception_ptr) {
      // Nothing here should throw; if something does, answer and log
      // instead of dropping the connection.
      LogNode(LogLevel::kError, "",
              absl::StrCat("internal error serving ", request.path));
      response.status = 500;
      response.set_content("internal error\n", "text/plain");
    });
  }

  // False (and a 400 answer) when the body did not decode.
  bool Decoded(const absl::Status& status, absl::string_view verb,
               httplib::Response& response, Clock::time_point start) {
    if (status.ok()) return true;
    response.status = 400;
    response.set_content(absl::StrCat(status.message(), "\n"), "text/plain");
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
  std::unique_ptr<httplib::Server> server_;
  std::function<void()> widen_backlog_;
  Listener listener_;
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
