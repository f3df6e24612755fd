#include "deviceshare/extender/webhook_server.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "certificate_reloader.h"
#include "deviceshare/admission/admission_review.h"
#include "extender_log.h"
#include "httplib.h"
#include "listener.h"

namespace deviceshare::extender {

class WebhookServer::Impl {
 public:
  Impl(admission::AdmissionSettings settings, WebhookOptions options)
      : settings_(std::move(settings)), options_(std::move(options)) {}

  ~Impl() { Stop(); }

  absl::Status Init() {
    if (options_.tls_cert_file.empty() || options_.tls_key_file.empty()) {
      return absl::InvalidArgumentError(
          "--webhook-tls-cert and --webhook-tls-key: both are required with "
          "--webhook-port (the API server calls webhooks over HTTPS only)");
    }
    absl::StatusOr<std::unique_ptr<CertificateReloader>> reloader =
        CertificateReloader::Create(options_.tls_cert_file,
                                    options_.tls_key_file,
                                    "--webhook-tls-cert / --webhook-tls-key",
                                    options_.reload_check_interval);
    if (!reloader.ok()) return reloader.status();
    reloader_ = *std::move(reloader);
    server_ = std::make_unique<httplib::SSLServer>(
        [this](SSL_CTX& ctx) { return reloader_->Install(ctx); });
    if (!server_->is_valid()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--webhook-tls-cert ", options_.tls_cert_file,
                       " / --webhook-tls-key ", options_.tls_key_file,
                       ": not a usable certificate and key"));
    }
    const int threads = std::max(1, options_.threads);
    server_->new_task_queue = [threads] {
      return new httplib::ThreadPool(threads);
    };
    server_->set_payload_max_length(options_.max_body_bytes);
    server_->set_tcp_nodelay(true);
    server_->set_keep_alive_timeout(5);
    server_->set_read_timeout(10, 0);
    server_->set_write_timeout(10, 0);
    Route();
    return listener_.Bind(
        server_.get(), options_.host, options_.port,
        absl::StrCat("--webhook-port ", options_.port, " on ", options_.host));
  }

  int port() const { return listener_.port(); }
  void Start() { listener_.Start(); }
  void Stop() { listener_.Stop(); }

 private:
  void Route() {
    server_->Post("/webhook", [this](const httplib::Request& request,
                                     httplib::Response& response) {
      Review(request.body, response);
    });
    server_->Get("/healthz",
                 [](const httplib::Request&, httplib::Response& response) {
                   response.set_content("ok\n", "text/plain");
                 });
    server_->set_exception_handler([](const httplib::Request& request,
                                      httplib::Response& response,
                                      std::exception_ptr) {
      LogNode(LogLevel::kError, "",
              absl::StrCat("webhook: internal error serving ", request.path));
      response.status = 500;
      response.set_content("internal error\n", "text/plain");
    });
  }

  void Review(const std::string& body, httplib::Response& response) {
    absl::StatusOr<admission::ReviewAnswer> answer =
        admission::AnswerAdmissionReview(body, settings_);
    if (!answer.ok()) {
      const bool bad_input = absl::IsInvalidArgument(answer.status());
      response.status = bad_input ? 400 : 500;
      response.set_content(absl::StrCat(answer.status().message(), "\n"),
                           "text/plain");
      LogNode(
          bad_input ? LogLevel::kWarn : LogLevel::kError, "",
          absl::StrCat("webhook: bad request: ", answer.status().message()));
      return;
    }
    response.set_content(answer->body, "application/json");
    LogNode(
        answer->allowed ? LogLevel::kDebug : LogLevel::kInfo, "",
        absl::StrCat("webhook: uid=", answer->uid,
                     answer->allowed ? " allowed" : " refused",
                     answer->patched ? " patched" : "", ": ", answer->message));
  }

  const admission::AdmissionSettings settings_;
  const WebhookOptions options_;
  std::unique_ptr<CertificateReloader> reloader_;
  std::unique_ptr<httplib::SSLServer> server_;
  Listener listener_;
};

WebhookServer::WebhookServer(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

WebhookServer::~WebhookServer() = default;

absl::StatusOr<std::unique_ptr<WebhookServer>> WebhookServer::Create(
    admission::AdmissionSettings settings, const WebhookOptions& options) {
  auto impl = std::make_unique<Impl>(std::move(settings), options);
  absl::Status status = impl->Init();
  if (!status.ok()) return status;
  return std::unique_ptr<WebhookServer>(new WebhookServer(std::move(impl)));
}

int WebhookServer::port() const { return impl_->port(); }
void WebhookServer::Start() { impl_->Start(); }
void WebhookServer::Stop() { impl_->Stop(); }

}  // namespace deviceshare::extender
