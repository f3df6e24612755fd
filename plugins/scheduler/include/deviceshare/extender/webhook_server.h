// File: extender/webhook_server.h
//
// WebhookServer: the HTTPS listener of serve's mutating admission webhook,
// beside the extender's own listener:
//   POST /webhook   AdmissionReview v1 -> AdmissionReview v1 (the decision
//                   is admission/admission_review.h's; a body it cannot
//                   answer gets 400 with the field named, an internal error
//                   500 -- never a crash)
//   GET  /healthz   200 while the process serves
// Always TLS: the API server calls webhooks over HTTPS only. The
// certificate and key are read again when their files change
// (certificate_reloader.h): a rotated Secret needs no restart.
//
// The listener is event-driven (src/extender/http_service.h): slow or idle
// connections hold no worker, so they cannot stop AdmissionReviews.
//
// Thread safety: Start and Stop from one thread; requests are served by a
// pool of threads.
#ifndef DEVICESHARE_EXTENDER_WEBHOOK_SERVER_H_
#define DEVICESHARE_EXTENDER_WEBHOOK_SERVER_H_

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "deviceshare/admission/pod_admission.h"

namespace deviceshare::extender {

struct WebhookOptions {
  std::string host = "0.0.0.0";
  int port = 9443;            // 0: any free port (see WebhookServer::port())
  std::string tls_cert_file;  // PEM chain; required
  std::string tls_key_file;   // PEM key; required
  size_t max_body_bytes = 16 << 20;
  int threads = 8;  // handlers at once
  int max_connections = 4096;
  // How often a handshake may look at the certificate files.
  std::chrono::milliseconds reload_check_interval = std::chrono::seconds(1);
};

class WebhookServer {
 public:
  // Loads the certificate and binds the socket (so port() is known); serves
  // nothing until Start(). InvalidArgument naming the flag for a missing or
  // unusable certificate, Unavailable when the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<WebhookServer>> Create(
      admission::AdmissionSettings settings, const WebhookOptions& options);
  ~WebhookServer();

  int port() const;
  // Serves on a background thread.
  void Start();
  // Graceful: stops accepting, finishes requests in flight. Idempotent.
  void Stop();

 private:
  class Impl;
  explicit WebhookServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_WEBHOOK_SERVER_H_
