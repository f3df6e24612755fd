// File: kube/api_client.h
//
// ApiClient: JSON requests to the Kubernetes API server. Paths are API paths
// with their query ("/api/v1/namespaces/ns/pods/p", "/api/v1/pods?watch=1");
// kube/object_paths.h builds them. Results are the decoded JSON body; errors
// follow kube/api_status.h (HttpStatusOf tells 409 and 410 apart).
//
// The client made by Create speaks HTTP/1.1 over keep-alive connections,
// with TLS when the server is https:// (CA from the config, or the system
// store; optional client certificate). A pool of up to
// `max_connections` connections lets that many requests run at once; more
// wait for a free connection. Every request carries the bearer token; a
// token file is re-read at most once per `token_refresh_interval`, so a
// rotated service-account token is picked up without a restart. Nothing is
// retried here: callers know which requests are safe to repeat.
//
// The interface exists so that code using the API can be tested with a fake
// client; tests of the wire use FakeApiServer (tests/testing).
//
// Thread safety: every method may be called from any number of threads at
// once. Watch blocks its caller until the stream ends.
#ifndef DEVICESHARE_KUBE_API_CLIENT_H_
#define DEVICESHARE_KUBE_API_CLIENT_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "deviceshare/clock.h"
#include "deviceshare/kube/api_status.h"
#include "deviceshare/kube/kube_config.h"
#include "nlohmann/json.hpp"

namespace deviceshare::kube {

struct ApiClientOptions {
  absl::Duration connect_timeout = absl::Seconds(5);
  // The longest wait for a response of a non-watch request.
  absl::Duration read_timeout = absl::Seconds(30);
  // The longest silence a watch stream may have before it is considered
  // dead (a half-open connection). Keep it above the watches' timeoutSeconds
  // unless the server sends bookmarks.
  absl::Duration watch_idle_timeout = absl::Minutes(5);
  // Connections kept for non-watch requests (each watch has its own).
  int max_connections = 16;
  std::string user_agent = "deviceshare/0.1";
  absl::Duration token_refresh_interval = absl::Minutes(1);
  // Times the token file re-reads; null means RealClock().
  const Clock* clock = nullptr;
};

// Called for each event of a watch stream, in order; returning false ends
// the watch (Watch then returns OK).
using WatchEventHandler = std::function<bool(const nlohmann::json& event)>;

class ApiClient {
 public:
  // A client for `config.server`. InvalidArgument for a malformed server
  // URL, PEM block or mismatched client key; the token file, if any, must be
  // readable now.
  static absl::StatusOr<std::unique_ptr<ApiClient>> Create(
      const KubeConfig& config, ApiClientOptions options = {});

  virtual ~ApiClient() = default;

  virtual absl::StatusOr<nlohmann::json> Get(const std::string& path) = 0;

  // POST of `body` (a create, or a subresource such as pods/binding). An
  // empty response body gives a null JSON value.
  virtual absl::StatusOr<nlohmann::json> Post(const std::string& path,
                                              const nlohmann::json& body) = 0;

  // PATCH with an RFC 7386 JSON merge patch (null deletes a key). Put
  // metadata.resourceVersion in the patch to make it conditional (409 when
  // the object changed since).
  virtual absl::StatusOr<nlohmann::json> MergePatch(
      const std::string& path, const nlohmann::json& patch) = 0;

  // PUT of `body`: a full update that replaces the object (or a
  // subresource such as /status). With metadata.resourceVersion set, the
  // server answers 409 when the object changed since; without it the write
  // is unconditional.
  virtual absl::StatusOr<nlohmann::json> Put(const std::string& path,
                                             const nlohmann::json& body) = 0;

  // DELETE of the object at `path`. The response body (the deleted object
  // or a Status) is dropped. A missing object is NotFound with HTTP status
  // 404 (HttpStatusOf): whether that counts as done is the caller's call.
  virtual absl::Status Delete(const std::string& path) = 0;

  // A streaming GET: `path` should ask for a watch (`watch=true`). The
  // server sends one JSON object per line; `on_event` gets each as it
  // completes. Returns OK when the server ends the stream, when `on_event`
  // returns false or when `*stop` (optional) becomes true -- noticed within
  // about 50 ms even while the server is silent. Errors: an HTTP status
  // other than 200 (kube/api_status.h), a transport failure or silence
  // beyond watch_idle_timeout (Unavailable), a line that is not JSON
  // (DataLoss). The events handed over before an error stand.
  virtual absl::Status Watch(const std::string& path,
                             const WatchEventHandler& on_event,
                             const std::atomic<bool>* stop = nullptr) = 0;
};

}  // namespace deviceshare::kube

#endif  // DEVICESHARE_KUBE_API_CLIENT_H_
