// File: src/extender/http_service.h (internal)
//
// HttpService: the event-driven HTTP/1.1 (or HTTPS) server under the
// extender's and the webhook's listeners, on Boost.Asio and Boost.Beast.
//
// Why event-driven: a server that gives each connection a thread (as
// cpp-httplib does) is stopped by as many slow or idle clients as it has
// threads -- eight clients trickling a header byte every few seconds, or
// fifty idle keep-alive connections, made the extender and the webhook time
// out for everyone. Here one I/O thread drives every connection, and a
// connection costs a worker only while its handler runs:
//   - a TLS handshake must finish within `handshake_timeout`, a request's
//     header within `header_timeout` of its first byte (of the connection's
//     start, for its first request), its body within `body_timeout`; a
//     kept-alive connection may wait `idle_timeout` for its next request
//     (longer than Go's 90 s, so kube-scheduler's client closes first);
//   - at most `max_connections` are open; one more arriving closes the
//     connection that has waited longest for a request header, or, when
//     none waits, is closed itself;
//   - at most `threads` handlers run at once;
//   - a body over `max_body_bytes` gets 413 without being read; bodies over
//     `small_body_bytes` are read and handled only while the sum of such
//     bodies admitted stays within `large_body_budget` (a larger one waits,
//     unread, its turn; one alone is always admitted), because parsing and
//     answering a large body takes many times its size, and the kit's
//     memory limit must hold. Small bodies (kube-scheduler's node-name
//     lists) never wait behind large ones.
// Handlers see a whole request and fill a whole response. A handler that
// throws gets a 500 and `log_error` is called.
//
// Thread safety: Handle before Start; Start and Stop from one thread;
// handlers run on the worker threads, concurrently; stats() from any
// thread.
#ifndef DEVICESHARE_EXTENDER_HTTP_SERVICE_H_
#define DEVICESHARE_EXTENDER_HTTP_SERVICE_H_

#include <openssl/ssl.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace deviceshare::extender {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // the target without its query
  std::string body;
  // No client CA is configured, or the client presented a certificate one
  // of its CAs signed.
  bool authenticated = false;
};

// Who may call a route.
enum class HttpAccess {
  kAnyone,         // probes, metrics
  kAuthenticated,  // with a client CA: clients with its certificate only
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain";
  std::string body;
  void Set(std::string text, std::string type) {
    body = std::move(text);
    content_type = std::move(type);
  }
};

using HttpHandler = std::function<void(const HttpRequest&, HttpResponse&)>;

struct HttpServiceOptions {
  std::string host = "0.0.0.0";
  int port = 0;  // 0: any free port (see HttpService::port())
  // Names the listener in errors ("--address 0.0.0.0:8888").
  std::string what;
  // Set: serve TLS (1.2 or newer) with the certificate it installs on the
  // context (false: unusable). Null: plain HTTP.
  std::function<bool(SSL_CTX&)> install_certificate;
  // With TLS: a PEM bundle of CAs. A client that presents a certificate
  // must present one they signed (else the handshake fails); one that
  // presents none is served only the kAnyone routes (403 on the others),
  // so the kubelet's probes need no certificate.
  std::string client_ca_file;
  std::string client_ca_flag = "--tls-client-ca";  // for errors
  int threads = 8;
  size_t max_body_bytes = 16 << 20;
  size_t small_body_bytes = 1 << 20;
  size_t large_body_budget = 32 << 20;
  int max_connections = 4096;
  std::chrono::milliseconds handshake_timeout{10'000};
  std::chrono::milliseconds header_timeout{10'000};
  std::chrono::milliseconds body_timeout{30'000};
  std::chrono::milliseconds idle_timeout{120'000};
  std::chrono::milliseconds write_timeout{30'000};
  // Called with a message when a handler throws (on a worker) or the
  // server meets an internal error (on the I/O thread).
  std::function<void(const std::string&)> log_error;
};

// Counters since the start; `open` and `waiting_for_budget` are gauges.
struct HttpServiceStats {
  int64_t open = 0;
  int64_t evicted = 0;    // closed to make room for a new connection
  int64_t refused = 0;    // closed at once: full, none to evict
  int64_t timed_out = 0;  // handshake, header, body, idle or write deadline
  int64_t handshake_failed = 0;  // TLS, incl. no or untrusted client cert
  int64_t too_large = 0;         // 413
  int64_t waiting_for_budget = 0;
};

class HttpService {
 public:
  // Prepares TLS and binds the listening socket (so port() is known);
  // serves nothing until Start(). InvalidArgument naming the flag for an
  // unusable certificate or client CA, Unavailable naming `what` when the
  // address cannot be bound.
  static absl::StatusOr<std::unique_ptr<HttpService>> Create(
      HttpServiceOptions options);
  ~HttpService();

  // Routes `method` `path` to `handler`. Another method on a known path
  // gets 405, an unknown path 404, a kAuthenticated route called without
  // the client certificate 403.
  void Handle(absl::string_view method, absl::string_view path,
              HttpHandler handler, HttpAccess access = HttpAccess::kAnyone);

  int port() const;
  // Serves on background threads.
  void Start();
  // Stops accepting, closes connections waiting for a request, lets
  // requests in flight finish (for up to 5 s), and returns. Idempotent.
  void Stop();

  HttpServiceStats stats() const;

  class Impl;

 private:
  explicit HttpService(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_HTTP_SERVICE_H_
