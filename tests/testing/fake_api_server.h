// File: testing/fake_api_server.h
//
// FakeApiServer: an in-memory Kubernetes API server for tests, on
// 127.0.0.1 at a free port, with just what deviceshare talks to:
//
//   GET   /api/v1/nodes, /api/v1/pods, /api/v1/namespaces/{ns}/pods
//         lists; with watch=true|1 a chunked stream of
//         {"type":...,"object":...} lines after resourceVersion (""/"0":
//         ADDED for every object first), BOOKMARKs when
//         allowWatchBookmarks=true, ending after timeoutSeconds;
//         fieldSelector and equality labelSelector (testing/api_selectors.h)
//   GET   /api/v1/nodes/{name}, /api/v1/namespaces/{ns}/pods/{name}
//   PATCH the same objects and their /status, application/merge-patch+json
//         only (RFC 7386); metadata.resourceVersion in the patch is a
//         precondition (409 when it differs)
//   POST  /api/v1/namespaces/{ns}/pods/{name}/binding: 409 when the pod
//         already has spec.nodeName (or metadata.uid differs), else sets
//         it; 201 with a Status
//   POST  /api/v1/namespaces/{ns}/events: recorded, 201
//
// Errors are Status objects with the API server's wording. A watch from a
// resourceVersion older than the history (CompactHistory) gets an ERROR
// event with code 410, or HTTP 410 after AnswerExpiredWatchesWithHttp410.
// Requests need "Authorization: Bearer <token>" when a token is set.
//
// Test code drives the state through the methods below; every change bumps
// the global resourceVersion and reaches open watches like an API write.
// Handlers are cheap and run on a pool of `threads` (each open watch holds
// one), so a benchmark can bind hundreds of pods a second.
//
// Thread safety: every method may be called from any thread, while
// requests are served. The destructor ends open watches and stops serving.
#ifndef DEVICESHARE_TESTS_TESTING_FAKE_API_SERVER_H_
#define DEVICESHARE_TESTS_TESTING_FAKE_API_SERVER_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "deviceshare/kube/kube_config.h"
#include "nlohmann/json.hpp"
#include "testing/fake_api_store.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace deviceshare::testing {

struct FakeApiServerOptions {
  // The bearer token every request must carry; empty accepts any.
  std::string token;
  int threads = 64;
  WatchSettings watch;
  // Changes kept for watches to resume from; beyond it the oldest half is
  // compacted away.
  size_t max_history = 100000;
};

// What a PATCH asked for.
struct RecordedPatch {
  std::string path;  // "/api/v1/namespaces/ns/pods/p"
  nlohmann::json patch;
};

// Requests served, by kind.
struct RequestCounts {
  int lists = 0;
  int watches = 0;
  int gets = 0;
  int patches = 0;
  int bindings = 0;  // every binding POST, failed ones included
  int events = 0;
  int unauthorized = 0;
};

class FakeApiServer {
 public:
  explicit FakeApiServer(FakeApiServerOptions options = {});
  ~FakeApiServer();

  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  int port() const { return port_; }
  std::string url() const;  // "http://127.0.0.1:<port>"
  // Settings for ApiClient::Create: url() and the token.
  kube::KubeConfig kube_config() const;
  // Writes `<dir>/kubeconfig-<port>.yaml` (one context "fake", namespace
  // "default", token auth) and returns its path.
  std::string WriteKubeconfig(const std::string& dir) const;

  // Objects. Upserts return the stored object (uid, resourceVersion, ...);
  // an object without metadata.name is a test failure and gives null.
  nlohmann::json UpsertNode(nlohmann::json node);
  bool DeleteNode(const std::string& name);
  std::optional<nlohmann::json> GetNode(const std::string& name) const;
  nlohmann::json UpsertPod(nlohmann::json pod);
  bool DeletePod(const std::string& ns, const std::string& name);
  std::optional<nlohmann::json> GetPod(const std::string& ns,
                                       const std::string& name) const;
  // Applies `mutate` to the pod (a MODIFIED event); false if it is absent.
  bool UpdatePod(const std::string& ns, const std::string& name,
                 const std::function<void(nlohmann::json& pod)>& mutate);
  bool SetPodPhase(const std::string& ns, const std::string& name,
                   const std::string& phase);
  int64_t resource_version() const;

  // What clients did, in arrival order.
  std::vector<nlohmann::json> Bindings() const;  // successful ones
  std::vector<nlohmann::json> Events() const;
  std::vector<RecordedPatch> Patches() const;  // successful ones
  RequestCounts request_counts() const;

  // Faults.
  void FailNextBindings(int count, int http_status);
  void FailNextPodPatches(int count, int http_status);
  void SetBindingDelay(absl::Duration delay);
  // Forgets the history: a watch from any older resourceVersion gets 410.
  void CompactHistory() { store_.CompactHistory(); }
  // Ends every open watch stream now (cleanly, as a server timeout does).
  void CloseWatches() { store_.CloseWatches(); }
  void SendBookmarks() { store_.SendBookmarks(); }
  // While paused, open streams deliver nothing (changes queue up).
  void PauseWatches() { store_.SetPaused(true); }
  void ResumeWatches() { store_.SetPaused(false); }
  void AnswerExpiredWatchesWithHttp410(bool on);
  int open_watches() const { return store_.open_watches(); }

 private:
  void Route();
  void HandleCollection(ApiResource resource, const std::string& ns,
                        const httplib::Request& req, httplib::Response& res);
  void HandleGet(ApiResource resource, const std::string& ns,
                 const std::string& name, httplib::Response& res);
  void HandlePatch(ApiResource resource, const std::string& ns,
                   const std::string& name, const httplib::Request& req,
                   httplib::Response& res);
  void HandleBinding(const std::string& ns, const std::string& name,
                     const httplib::Request& req, httplib::Response& res);
  void HandleEvent(const std::string& ns, const httplib::Request& req,
                   httplib::Response& res);
  // Takes one injected failure from `remaining`; 0 when there is none.
  int TakeFault(int& remaining, int http_status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const FakeApiServerOptions options_;
  FakeApiStore store_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = -1;

  mutable absl::Mutex mu_;
  std::vector<nlohmann::json> bindings_ ABSL_GUARDED_BY(mu_);
  std::vector<nlohmann::json> events_ ABSL_GUARDED_BY(mu_);
  std::vector<RecordedPatch> patches_ ABSL_GUARDED_BY(mu_);
  RequestCounts counts_ ABSL_GUARDED_BY(mu_);
  int failing_bindings_ ABSL_GUARDED_BY(mu_) = 0;
  int binding_failure_status_ ABSL_GUARDED_BY(mu_) = 0;
  int failing_patches_ ABSL_GUARDED_BY(mu_) = 0;
  int patch_failure_status_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration binding_delay_ ABSL_GUARDED_BY(mu_);
  bool expired_as_http_410_ ABSL_GUARDED_BY(mu_) = false;
  int64_t next_event_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_FAKE_API_SERVER_H_
