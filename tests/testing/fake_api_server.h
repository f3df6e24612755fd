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
// and of resource.k8s.io/v1 (Dynamic Resource Allocation, Kubernetes 1.34),
// under /apis/resource.k8s.io/v1:
//
//   resourceslices (cluster-scoped)
//     GET    list and watch as above; fieldSelector only on metadata.name,
//            spec.nodeName and spec.driver (400 for others)
//     POST   create: 409 when the name exists; metadata.generateName gives
//            a name with a random 5-character suffix
//     DELETE the collection, with the list's selectors
//     GET | PUT | PATCH | DELETE resourceslices/{name}: PUT replaces the
//            object (404 when absent, 409 when its metadata.resourceVersion
//            is set and stale); PATCH is a merge patch as above; DELETE
//            answers the deleted object (404 when absent)
//     Creates and updates are validated (testing/resource_slice_rules.h);
//     a broken rule is HTTP 422 with the API server's Invalid Status.
//   resourceclaims (namespaced)
//     GET    resourceclaims, namespaces/{ns}/resourceclaims: list, watch
//     GET    namespaces/{ns}/resourceclaims/{name}
//     PATCH  the same, and its /status (merge patches); PUT its /status.
//            As on a real server, a write of the object keeps the stored
//            status and a write of /status changes only the status.
//   deviceclasses (cluster-scoped)
//     GET    list and watch as above (fieldSelector only on metadata.name);
//            deviceclasses/{name}
//
// and coordination.k8s.io/v1 Leases (leader election), not watched:
//
//   GET  /apis/coordination.k8s.io/v1/namespaces/{ns}/leases/{name}
//   POST /apis/coordination.k8s.io/v1/namespaces/{ns}/leases: 409 when the
//        name exists
//   PUT  .../leases/{name}: 404 when absent, 409 when metadata.
//        resourceVersion is set and stale
//
// and policy/v1 (fake_api_server_policy.cc), not watched:
//
//   GET  /apis/policy/v1/poddisruptionbudgets,
//        /apis/policy/v1/namespaces/{ns}/poddisruptionbudgets[/{name}]
//   POST /api/v1/namespaces/{ns}/pods/{name}/eviction: a running pod that
//        one budget selects (spec.selector: matchLabels, matchExpressions)
//        whose status.disruptionsAllowed is 0 gets 429 with the API
//        server's Status ("Cannot evict pod as it would violate the pod's
//        disruption budget."); two budgets: 500; else the pod is deleted,
//        the budget's disruptionsAllowed goes down by one, 201
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
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "deviceshare/kube/kube_config.h"
#include "nlohmann/json.hpp"
#include "testing/fake_api_store.h"
#include "testing/field_errors.h"

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

// Requests served, by kind. lists, watches, gets and patches count pods and
// nodes; the DRA resources have their own counters. Lists and watches with
// a selector answered 400 are not counted; writes are, failed and rejected
// ones included.
struct RequestCounts {
  int lists = 0;
  int watches = 0;
  int gets = 0;
  int patches = 0;
  int bindings = 0;  // every binding POST, failed ones included
  int events = 0;
  int unauthorized = 0;

  int slice_lists = 0;
  int slice_watches = 0;
  int slice_gets = 0;
  int slice_creates = 0;  // POST
  int slice_updates = 0;  // PUT
  int slice_patches = 0;
  int slice_deletes = 0;  // of one slice or of the collection
  int slice_invalid = 0;  // writes answered 422

  int claim_lists = 0;
  int claim_watches = 0;
  int claim_gets = 0;
  int claim_patches = 0;         // of the object and of /status
  int claim_status_updates = 0;  // PUT /status

  int class_lists = 0;
  int class_watches = 0;
  int class_gets = 0;
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

  // DRA objects. Writes made here are not validated, so a test can plant
  // any slice; writes through the API are.
  nlohmann::json UpsertResourceSlice(nlohmann::json slice);
  bool DeleteResourceSlice(const std::string& name);
  std::optional<nlohmann::json> GetResourceSlice(const std::string& name) const;
  // Every slice as stored, by name.
  std::vector<nlohmann::json> ResourceSlices() const;
  nlohmann::json UpsertResourceClaim(nlohmann::json claim);
  bool DeleteResourceClaim(const std::string& ns, const std::string& name);
  std::optional<nlohmann::json> GetResourceClaim(const std::string& ns,
                                                 const std::string& name) const;
  nlohmann::json UpsertDeviceClass(nlohmann::json device_class);
  bool DeleteDeviceClass(const std::string& name);
  std::optional<nlohmann::json> GetDeviceClass(const std::string& name) const;
  // ResourceQuotas (read only through the API, as serve uses them), in
  // their namespace (metadata.namespace, "default" when unset).
  nlohmann::json UpsertResourceQuota(nlohmann::json quota);
  bool DeleteResourceQuota(const std::string& ns, const std::string& name);

  // What clients did, in arrival order.
  std::vector<nlohmann::json> Bindings() const;  // successful ones
  std::vector<nlohmann::json> Events() const;
  std::vector<RecordedPatch> Patches() const;  // successful ones
  // The messages of the 422 answers to slice writes, in order.
  std::vector<std::string> RejectedSliceWrites() const;
  RequestCounts request_counts() const;

  // Faults.
  void FailNextBindings(int count, int http_status);
  void FailNextPodPatches(int count, int http_status);
  // The next `count` slice writes (POST, PUT, PATCH, DELETE) answer
  // `http_status` with a Status and change nothing.
  void FailNextResourceSliceWrites(int count, int http_status);
  // The next `count` writes of a ResourceClaim's status (PUT or PATCH of
  // /status) answer `http_status` with a Status and change nothing (409: a
  // writer whose resourceVersion went stale meanwhile).
  void FailNextClaimStatusWrites(int count, int http_status);
  void SetBindingDelay(absl::Duration delay);
  // fake_api_server_faults.cc: the next `count` lists and watches of any
  // collection answer `http_status` with a Status (a watch then sends no
  // stream); every PATCH of a pod waits `delay` before it is applied.
  void FailNextListsAndWatches(int count, int http_status);
  void SetPodPatchDelay(absl::Duration delay);
  // Every stored pod, by namespace and name, without copying (a soak's
  // auditor reads them each second).
  std::vector<std::shared_ptr<const nlohmann::json>> PodSnapshot() const;
  // Every GET of one ResourceClaim waits this long before it is answered
  // (a slow API server; a window to kill a DRA driver mid-prepare).
  void SetResourceClaimGetDelay(absl::Duration delay);
  // Leases (fake_api_server_lease.cc): the stored lease, and faults for
  // its writes (POST, PUT): the next `count` answer `http_status`.
  std::optional<nlohmann::json> GetLease(const std::string& ns,
                                         const std::string& name) const;
  void FailNextLeaseWrites(int count, int http_status);
  // PodDisruptionBudgets (fake_api_server_policy.cc): stored as given
  // (status.disruptionsAllowed is the test's to set); the accepted
  // Eviction bodies, in order.
  nlohmann::json UpsertPodDisruptionBudget(nlohmann::json budget);
  std::optional<nlohmann::json> GetPodDisruptionBudget(
      const std::string& ns, const std::string& name) const;
  std::vector<nlohmann::json> Evictions() const;
  // Runs after each accepted eviction, with the evicted pod, before the
  // client gets the answer (say, another disruption that a budget sees
  // meanwhile). May call this server's methods.
  void OnEviction(std::function<void(const nlohmann::json& pod)> hook);
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
  // The selectors of a list, watch or collection delete; InvalidArgument
  // for a selector the fake (or the real server) does not support.
  absl::StatusOr<ObjectFilter> FilterOf(ApiResource resource,
                                        const std::string& ns,
                                        const httplib::Request& req);
  void HandleGet(ApiResource resource, const std::string& ns,
                 const std::string& name, httplib::Response& res);
  // `status`: the request was for the /status subresource.
  void HandlePatch(ApiResource resource, const std::string& ns,
                   const std::string& name, bool status,
                   const httplib::Request& req, httplib::Response& res);
  void HandleBinding(const std::string& ns, const std::string& name,
                     const httplib::Request& req, httplib::Response& res);
  void HandleEvent(const std::string& ns, const httplib::Request& req,
                   httplib::Response& res);

  // coordination.k8s.io Leases (fake_api_server_lease.cc); the table is
  // made by RouteLeases.
  struct LeaseTable;
  void RouteLeases();
  std::shared_ptr<LeaseTable> leases_;

  // policy/v1 (fake_api_server_policy.cc); the table is made by
  // RoutePolicy.
  struct PolicyTable;
  void RoutePolicy();
  void HandleEviction(const std::string& ns, const std::string& name,
                      const httplib::Request& req, httplib::Response& res);
  // Answers the eviction of `pod`; true when it was evicted.
  bool EvictUnderBudget(const std::string& ns, const nlohmann::json& pod,
                        const httplib::Request& req, httplib::Response& res);
  std::shared_ptr<PolicyTable> policy_;

  // v1 ResourceQuotas (fake_api_server_quota.cc): list, watch, get.
  void RouteQuotas();

  // resource.k8s.io (fake_api_server_dra.cc).
  void RouteDra();
  void HandleSliceCreate(const httplib::Request& req, httplib::Response& res);
  void HandleSlicePut(const std::string& name, const httplib::Request& req,
                      httplib::Response& res);
  void HandleSliceDelete(const std::string& name, httplib::Response& res);
  void HandleSliceDeleteCollection(const httplib::Request& req,
                                   httplib::Response& res);
  void HandleClaimStatusPut(const std::string& ns, const std::string& name,
                            const httplib::Request& req,
                            httplib::Response& res);
  // The injected failure for a slice write, counted under `counter`; 0
  // when none.
  int StartSliceWrite(int RequestCounts::*counter);
  // The injected failure for a claim status write, counted under
  // `counter`; 0 when none.
  int StartClaimStatusWrite(int RequestCounts::*counter);
  // Answers 422 for `errors` about slice `name`; false when there are none.
  bool RejectInvalidSlice(const std::string& name,
                          const std::vector<FieldError>& errors,
                          httplib::Response& res);
  // The same for a claim's status write (testing/resource_claim_rules.h).
  bool RejectInvalidClaim(const std::string& name,
                          const std::vector<FieldError>& errors,
                          httplib::Response& res);
  // The writes the store's mutate callbacks cannot express themselves.
  // For a slice: `errors` of the updated object. For a claim: the status
  // rule of a real server. `previous` is the stored object.
  absl::Status FinishWrite(ApiResource resource, bool status,
                           const nlohmann::json& previous,
                           nlohmann::json& object,
                           std::vector<FieldError>* errors);
  void Count(int RequestCounts::*counter);
  // The injected failure for a list or watch; 0 when none.
  int TakeListOrWatchFault();
  absl::Duration PodPatchDelay() const;
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
  int failing_slice_writes_ ABSL_GUARDED_BY(mu_) = 0;
  int slice_write_failure_status_ ABSL_GUARDED_BY(mu_) = 0;
  int failing_claim_status_writes_ ABSL_GUARDED_BY(mu_) = 0;
  int claim_status_failure_status_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> rejected_slice_writes_ ABSL_GUARDED_BY(mu_);
  std::mt19937_64 random_ ABSL_GUARDED_BY(mu_);
  absl::Duration binding_delay_ ABSL_GUARDED_BY(mu_);
  absl::Duration claim_get_delay_ ABSL_GUARDED_BY(mu_);
  bool expired_as_http_410_ ABSL_GUARDED_BY(mu_) = false;
  int failing_reads_ ABSL_GUARDED_BY(mu_) = 0;
  int read_failure_status_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration pod_patch_delay_ ABSL_GUARDED_BY(mu_);
  int64_t next_event_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_FAKE_API_SERVER_H_
