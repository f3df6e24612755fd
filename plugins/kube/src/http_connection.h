// File: http_connection.h (internal)
//
// Makes cpp-httplib clients for one API server: plain for http://, TLS for
// https:// with the config's CA store and client certificate. A client
// holds one keep-alive connection and serialises its requests, so
// concurrency comes from having several (ConnectionPool).
//
// Thread safety: New() may be called from any thread.
#ifndef DEVICESHARE_KUBE_SRC_HTTP_CONNECTION_H_
#define DEVICESHARE_KUBE_SRC_HTTP_CONNECTION_H_

#include <httplib.h>

#include <memory>

#include "absl/time/time.h"
#include "server_url.h"
#include "tls_material.h"

namespace deviceshare::kube::internal {

class ConnectionFactory {
 public:
  ConnectionFactory(ServerUrl url, TlsMaterial tls, bool verify_server,
                    absl::Duration connect_timeout);

  const ServerUrl& url() const { return url_; }

  // A client whose reads give up after `read_timeout` of silence. Null when
  // OpenSSL cannot set up a context (out of memory).
  std::unique_ptr<httplib::ClientImpl> New(absl::Duration read_timeout) const;

 private:
  const ServerUrl url_;
  const TlsMaterial tls_;
  const bool verify_server_;
  const absl::Duration connect_timeout_;
};

}  // namespace deviceshare::kube::internal

#endif  // DEVICESHARE_KUBE_SRC_HTTP_CONNECTION_H_
