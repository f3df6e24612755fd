#include "http_api_client.h"

#include <string>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/notification.h"
#include "deviceshare/json_text.h"
#include "deviceshare/kube/api_status.h"
#include "deviceshare/status_macros.h"
#include "line_splitter.h"

namespace deviceshare::kube {
namespace internal {
namespace {

using nlohmann::json;

// How often a watch checks its stop flag while the server is silent.
constexpr absl::Duration kStopPollInterval = absl::Milliseconds(50);
// Enough of an error response to explain it.
constexpr size_t kMaxErrorBody = 64 * 1024;

absl::Status TransportError(const char* method, const std::string& path,
                            httplib::Error error, httplib::ClientImpl& client) {
  std::string message =
      absl::StrCat(method, " ", path, ": ", httplib::to_string(error));
  if (error == httplib::Error::SSLServerVerification) {
    if (auto* ssl = dynamic_cast<httplib::SSLClient*>(&client)) {
      const long verify = ssl->get_openssl_verify_result();
      if (verify != X509_V_OK) {
        absl::StrAppend(&message, ": server certificate not trusted (",
                        X509_verify_cert_error_string(verify), ")");
      } else {
        absl::StrAppend(&message, ": server certificate is not for this host");
      }
    }
  }
  return absl::UnavailableError(message);
}

absl::StatusOr<json> ParseBody(const char* method, const std::string& path,
                               const std::string& body) {
  if (body.empty()) return json();
  json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return absl::DataLossError(
        absl::StrCat(method, " ", path, ": response body is not JSON"));
  }
  return parsed;
}

}  // namespace

HttpApiClient::HttpApiClient(std::unique_ptr<ConnectionFactory> factory,
                             std::unique_ptr<TokenSource> token,
                             const ApiClientOptions& options)
    : factory_(std::move(factory)),
      token_(std::move(token)),
      options_(options),
      pool_(factory_.get(), options.max_connections, options.read_timeout) {}

httplib::Headers HttpApiClient::RequestHeaders() {
  httplib::Headers headers = {
      {"Accept", "application/json"},
      {"User-Agent", options_.user_agent},
      // httplib would write an IPv6 host without brackets.
      {"Host", factory_->url().host_header},
  };
  const std::string token = token_->Token();
  if (!token.empty()) {
    headers.emplace("Authorization", absl::StrCat("Bearer ", token));
  }
  return headers;
}

absl::StatusOr<json> HttpApiClient::Send(const char* method,
                                         const std::string& path,
                                         const json* body,
                                         const char* content_type) {
  ConnectionPool::Lease lease = pool_.Acquire();
  httplib::ClientImpl* client = lease.get();
  if (client == nullptr) {
    return absl::InternalError(
        absl::StrCat(method, " ", path, ": cannot set up a TLS context"));
  }
  const std::string target = factory_->url().base_path + path;
  const httplib::Headers headers = RequestHeaders();
  const absl::string_view verb = method;
  httplib::Result result = [&] {
    if (verb == "DELETE") return client->Delete(target, headers);
    if (body == nullptr) return client->Get(target, headers);
    if (verb == "POST") {
      return client->Post(target, headers, JsonText(*body), content_type);
    }
    if (verb == "PUT") {
      return client->Put(target, headers, JsonText(*body), content_type);
    }
    return client->Patch(target, headers, JsonText(*body), content_type);
  }();
  if (!result) return TransportError(method, path, result.error(), *client);
  if (result->status < 200 || result->status > 299) {
    return ApiError(method, path, result->status, result->body);
  }
  return ParseBody(method, path, result->body);
}

absl::StatusOr<json> HttpApiClient::Get(const std::string& path) {
  return Send("GET", path, nullptr, nullptr);
}

absl::StatusOr<json> HttpApiClient::Post(const std::string& path,
                                         const json& body) {
  return Send("POST", path, &body, "application/json");
}

absl::StatusOr<json> HttpApiClient::MergePatch(const std::string& path,
                                               const json& patch) {
  return Send("PATCH", path, &patch, "application/merge-patch+json");
}

absl::StatusOr<json> HttpApiClient::Put(const std::string& path,
                                        const json& body) {
  return Send("PUT", path, &body, "application/json");
}

absl::Status HttpApiClient::Delete(const std::string& path) {
  return Send("DELETE", path, nullptr, nullptr).status();
}

absl::Status HttpApiClient::Watch(const std::string& path,
                                  const WatchEventHandler& on_event,
                                  const std::atomic<bool>* stop) {
  auto stopped = [stop] { return stop != nullptr && stop->load(); };
  if (stopped()) return absl::OkStatus();
  std::unique_ptr<httplib::ClientImpl> client =
      factory_->New(options_.watch_idle_timeout);
  if (client == nullptr) {
    return absl::InternalError(
        absl::StrCat("GET ", path, ": cannot set up a TLS context"));
  }
  // httplib blocks in read() while the server is silent; shutting the
  // socket down from here is the only way to cut that short. stop() is
  // repeated because a call that lands before the connection exists is lost.
  absl::Notification finished;
  std::thread canceller;
  if (stop != nullptr) {
    canceller = std::thread([&] {
      while (!finished.WaitForNotificationWithTimeout(kStopPollInterval)) {
        if (stopped()) client->stop();
      }
    });
  }

  int http_status = 0;
  std::string error_body;
  LineSplitter splitter;
  absl::Status stream_error;
  bool handler_done = false;
  httplib::Result result = client->Get(
      factory_->url().base_path + path, RequestHeaders(),
      [&](const httplib::Response& response) {
        http_status = response.status;
        return true;
      },
      [&](const char* data, size_t size) {
        if (stopped()) return false;
        if (http_status != 200) {
          if (error_body.size() < kMaxErrorBody) error_body.append(data, size);
          return true;
        }
        return splitter.Feed(
            absl::string_view(data, size), [&](absl::string_view line) {
              json event = json::parse(line.begin(), line.end(), nullptr,
                                       /*allow_exceptions=*/false);
              if (event.is_discarded()) {
                stream_error = absl::DataLossError(absl::StrCat(
                    "GET ", path,
                    ": watch event is not JSON: ", line.substr(0, 200)));
                return false;
              }
              if (!on_event(event)) {
                handler_done = true;
                return false;
              }
              return true;
            });
      });
  finished.Notify();
  if (canceller.joinable()) canceller.join();

  if (!stream_error.ok()) return stream_error;
  if (handler_done || stopped()) return absl::OkStatus();
  if (!result) return TransportError("GET", path, result.error(), *client);
  if (http_status != 200) {
    return ApiError("GET", path, http_status, error_body);
  }
  return absl::OkStatus();
}

}  // namespace internal

absl::StatusOr<std::unique_ptr<ApiClient>> ApiClient::Create(
    const KubeConfig& config, ApiClientOptions options) {
  if (options.max_connections < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_connections: ", options.max_connections, " is not at least 1"));
  }
  DS_ASSIGN_OR_RETURN(internal::ServerUrl url,
                      internal::ParseServerUrl(config.server));
  internal::TlsMaterial tls;
  if (url.https) {
    DS_ASSIGN_OR_RETURN(
        tls, internal::ParseTlsMaterial(config.ca_pem, config.client_cert_pem,
                                        config.client_key_pem));
  }
  const Clock* clock = options.clock != nullptr ? options.clock : &RealClock();
  auto token = std::make_unique<internal::TokenSource>(
      config.bearer_token, config.token_file, options.token_refresh_interval,
      clock);
  DS_RETURN_IF_ERROR(token->Load());
  auto factory = std::make_unique<internal::ConnectionFactory>(
      std::move(url), std::move(tls), !config.insecure_skip_tls_verify,
      options.connect_timeout);
  if (factory->New(options.read_timeout) == nullptr) {
    return absl::InternalError("cannot set up a TLS context");
  }
  return std::unique_ptr<ApiClient>(new internal::HttpApiClient(
      std::move(factory), std::move(token), options));
}

}  // namespace deviceshare::kube
