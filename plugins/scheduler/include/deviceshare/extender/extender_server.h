// File: extender/extender_server.h
//
// ExtenderServer: the HTTP(S) face of an Extender, as kube-scheduler calls
// it:
//   POST /filter, /prioritize   ExtenderArgs -> ExtenderFilterResult /
//                               HostPriorityList
//   POST /bind                  ExtenderBindingArgs -> ExtenderBindingResult
//   POST /preempt               ExtenderPreemptionArgs ->
//                               ExtenderPreemptionResult (Extender::Preempt)
//   GET  /healthz               200 while the process serves
//   GET  /readyz                200 while `not_ready()` is empty (the first
//                               full list of every watched collection is
//                               done and, with leader election, this
//                               replica leads), else 503 with its text;
//                               while ready, `ok` and then what
//                               `readiness_notes()` says (a watch failing
//                               since its first list: the view may be
//                               stale)
//   GET  /metrics               Prometheus text: latency histograms per
//                               verb, rejections per reason code, bind
//                               failures, per-GPU allocated memory and
//                               cores, reservations in flight, watch state
// A body over `max_body_bytes` gets 413, a body that is not the verb's JSON
// 400 with the decoder's message (which names the field); the verbs'
// own failures travel inside the 200 answer's Error field, as the protocol
// wants. While not ready, /filter and /bind answer with the reason in that
// Error field and /prioritize and /preempt with 503: a replica that does
// not lead never reserves, scores, picks victims or binds.
//
// The listener is event-driven (src/extender/http_service.h): slow or idle
// clients hold no worker, every step of a request has a deadline, the
// connections open are bounded (the one waiting longest for a request gives
// way to a new one), `threads` handlers run at once, and large bodies are
// admitted within `large_body_budget` so memory stays bounded. With
// `tls_client_ca_file`, the verbs answer only a client that presented a
// certificate that CA signed (kube-scheduler's, from the extender's
// tlsConfig; 403 without one, and a certificate of another CA fails the
// handshake); /healthz, /readyz and /metrics need none, for the kubelet's
// probes. Stop() stops accepting, lets requests in flight finish, and
// returns.
//
// Thread safety: Start and Stop from one thread; everything else is
// internal.
#ifndef DEVICESHARE_EXTENDER_EXTENDER_SERVER_H_
#define DEVICESHARE_EXTENDER_EXTENDER_SERVER_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "deviceshare/extender/extender.h"

namespace deviceshare::extender {

struct ServerOptions {
  std::string host = "0.0.0.0";
  int port = 8888;  // 0: any free port (see ExtenderServer::port())
  // Both set: serve HTTPS with this PEM certificate chain and key (read
  // again when the files change).
  std::string tls_cert_file;
  std::string tls_key_file;
  // With TLS: require a client certificate signed by a CA in this PEM file.
  std::string tls_client_ca_file;
  size_t max_body_bytes = 16 << 20;
  // Bodies over 1 MiB are read and handled only while those admitted sum to
  // at most this (one alone always is): a full-Node /filter body takes
  // about 20 times its size to parse and answer.
  size_t large_body_budget = 32 << 20;
  int max_connections = 4096;
  // Handlers run at once. 0: max(8, 2 x hardware threads).
  int threads = 0;
};

// Extra /metrics lines computed at scrape time (watch state, say).
using MetricsAppender = std::function<void(std::string& text)>;

// Why the server may not serve the verbs now; "" when it may.
using ReadinessCheck = std::function<std::string()>;

class ExtenderServer {
 public:
  // Binds the listening socket (so port() is known) but serves nothing until
  // Start(). `extender` must outlive the server.
  static absl::StatusOr<std::unique_ptr<ExtenderServer>> Create(
      Extender* extender, ReadinessCheck not_ready,
      const ServerOptions& options, MetricsAppender extra_metrics = nullptr,
      ReadinessCheck readiness_notes = nullptr);
  ~ExtenderServer();

  int port() const;
  // Serves on a background thread.
  void Start();
  // Graceful: stops accepting, finishes requests in flight. Idempotent.
  void Stop();

 private:
  class Impl;
  explicit ExtenderServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_EXTENDER_SERVER_H_
