#include "http_connection.h"

#include <chrono>
#include <utility>

namespace deviceshare::kube::internal {
namespace {

std::chrono::microseconds ToChrono(absl::Duration d) {
  return absl::ToChronoMicroseconds(d);
}

}  // namespace

ConnectionFactory::ConnectionFactory(ServerUrl url, TlsMaterial tls,
                                     bool verify_server,
                                     absl::Duration connect_timeout)
    : url_(std::move(url)),
      tls_(std::move(tls)),
      verify_server_(verify_server),
      connect_timeout_(connect_timeout) {}

std::unique_ptr<httplib::ClientImpl> ConnectionFactory::New(
    absl::Duration read_timeout) const {
  std::unique_ptr<httplib::ClientImpl> client;
  if (url_.https) {
    auto ssl = std::make_unique<httplib::SSLClient>(
        url_.host, url_.port, tls_.client_cert.get(), tls_.client_key.get());
    if (!ssl->is_valid()) return nullptr;
    ssl->enable_server_certificate_verification(verify_server_);
    // httplib takes ownership of the store, so each client gets its own.
    if (!tls_.ca_certs.empty()) {
      ssl->set_ca_cert_store(NewCertStore(tls_.ca_certs));
    }
    client = std::move(ssl);
  } else {
    client = std::make_unique<httplib::ClientImpl>(url_.host, url_.port);
  }
  client->set_connection_timeout(ToChrono(connect_timeout_));
  client->set_read_timeout(ToChrono(read_timeout));
  client->set_write_timeout(ToChrono(read_timeout));
  client->set_keep_alive(true);
  client->set_tcp_nodelay(true);
  return client;
}

}  // namespace deviceshare::kube::internal
