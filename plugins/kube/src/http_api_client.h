// File: http_api_client.h (internal)
//
// ApiClient over cpp-httplib: pooled keep-alive connections for requests, a
// fresh connection per watch so that a watch can be cut from another thread
// (httplib's stop()) without disturbing other requests.
#ifndef DEVICESHARE_KUBE_SRC_HTTP_API_CLIENT_H_
#define DEVICESHARE_KUBE_SRC_HTTP_API_CLIENT_H_

#include <memory>
#include <string>

#include "connection_pool.h"
#include "deviceshare/kube/api_client.h"
#include "http_connection.h"
#include "token_source.h"

namespace deviceshare::kube::internal {

class HttpApiClient final : public ApiClient {
 public:
  HttpApiClient(std::unique_ptr<ConnectionFactory> factory,
                std::unique_ptr<TokenSource> token,
                const ApiClientOptions& options);

  absl::StatusOr<nlohmann::json> Get(const std::string& path) override;
  absl::StatusOr<nlohmann::json> Post(const std::string& path,
                                      const nlohmann::json& body) override;
  absl::StatusOr<nlohmann::json> MergePatch(
      const std::string& path, const nlohmann::json& patch) override;
  absl::StatusOr<nlohmann::json> Put(const std::string& path,
                                     const nlohmann::json& body) override;
  absl::Status Delete(const std::string& path) override;
  absl::Status Watch(const std::string& path, const WatchEventHandler& on_event,
                     const std::atomic<bool>* stop) override;

 private:
  // One request/response exchange on a pooled connection. `body` is null
  // for a GET and a DELETE.
  absl::StatusOr<nlohmann::json> Send(const char* method,
                                      const std::string& path,
                                      const nlohmann::json* body,
                                      const char* content_type);
  httplib::Headers RequestHeaders();

  const std::unique_ptr<ConnectionFactory> factory_;
  const std::unique_ptr<TokenSource> token_;
  const ApiClientOptions options_;
  ConnectionPool pool_;
};

}  // namespace deviceshare::kube::internal

#endif  // DEVICESHARE_KUBE_SRC_HTTP_API_CLIENT_H_
