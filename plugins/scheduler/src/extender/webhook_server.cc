#include "deviceshare/extender/webhook_server.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "certificate_reloader.h"
#include "deviceshare/admission/admission_review.h"
#include "extender_log.h"
#include "http_service.h"

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
    HttpServiceOptions http;
    http.host = options_.host;
    http.port = options_.port;
    http.what =
        absl::StrCat("--webhook-port ", options_.port, " on ", options_.host);
    http.install_certificate = [this](SSL_CTX& ctx) {
      return reloader_->Install(ctx);
    };
    http.threads = std::max(1, options_.threads);
    http.max_body_bytes = options_.max_body_bytes;
    http.max_connections = options_.max_connections;
    http.log_error = [](const std::string& message) {
      LogNode(LogLevel::kError, "", absl::StrCat("webhook: ", message));
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
  void Route() {
    service_->Handle(
        "POST", "/webhook",
        [this](const HttpRequest& request, HttpResponse& response) {
          Review(request.body, response);
        });
    service_->Handle("GET", "/healthz",
                     [](const HttpRequest&, HttpResponse& response) {
                       response.Set("ok\n", "text/plain");
                     });
  }

  void Review(const std::string& body, HttpResponse& response) {
    absl::StatusOr<admission::ReviewAnswer> answer =
        admission::AnswerAdmissionReview(body, settings_);
    if (!answer.ok()) {
      const bool bad_input = absl::IsInvalidArgument(answer.status());
      response.status = bad_input ? 400 : 500;
      response.Set(absl::StrCat(answer.status().message(), "\n"), "text/plain");
      LogNode(
          bad_input ? LogLevel::kWarn : LogLevel::kError, "",
          absl::StrCat("webhook: bad request: ", answer.status().message()));
      return;
    }
    response.Set(answer->body, "application/json");
    LogNode(
        answer->allowed ? LogLevel::kDebug : LogLevel::kInfo, "",
        absl::StrCat("webhook: uid=", answer->uid,
                     answer->allowed ? " allowed" : " refused",
                     answer->patched ? " patched" : "", ": ", answer->message));
  }

  const admission::AdmissionSettings settings_;
  const WebhookOptions options_;
  std::unique_ptr<CertificateReloader> reloader_;
  std::unique_ptr<HttpService> service_;
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
