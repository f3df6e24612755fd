#include "testing/fake_api_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <fstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "testing/fake_api_responses.h"

namespace deviceshare::testing {
namespace {

using fake_api::ConflictMessage;
using fake_api::Guarded;
using fake_api::HttpCodeOf;
using fake_api::MetadataOf;
using fake_api::SendJson;
using fake_api::SendStatus;
using fake_api::StringAt;
using nlohmann::json;

// Most writes are short; a watch that shows nothing new for this long is
// re-polled, which is also how often it notices its client left.
constexpr absl::Duration kWatchPoll = absl::Milliseconds(250);
constexpr int kDefaultWatchSeconds = 1800;

// The counter of a request on `resource`: `core` for pods and nodes.
int RequestCounts::*CounterOf(ApiResource resource, int RequestCounts::*core,
                              int RequestCounts::*slices,
                              int RequestCounts::*claims,
                              int RequestCounts::*classes) {
  switch (resource) {
    case ApiResource::kResourceSlices:
      return slices;
    case ApiResource::kResourceClaims:
      return claims;
    case ApiResource::kDeviceClasses:
      return classes;
    default:
      return core;
  }
}

// The fields a real server lets a list or watch of `resource` select on;
// null: any (the fake's pods and nodes have always allowed any).
const std::vector<std::string>* SelectableFields(ApiResource resource) {
  static const auto* const kSlices = new std::vector<std::string>{
      "metadata.name", "spec.driver", "spec.nodeName"};
  static const auto* const kClaims =
      new std::vector<std::string>{"metadata.name", "metadata.namespace"};
  static const auto* const kClasses =
      new std::vector<std::string>{"metadata.name"};
  switch (resource) {
    case ApiResource::kResourceSlices:
      return kSlices;
    case ApiResource::kResourceClaims:
      return kClaims;
    case ApiResource::kDeviceClasses:
      return kClasses;
    default:
      return nullptr;
  }
}

// The first field of `selector` that `resource` cannot select on; "" if
// none.
std::string UnsupportedField(ApiResource resource, absl::string_view selector) {
  const std::vector<std::string>* allowed = SelectableFields(resource);
  if (allowed == nullptr) return "";
  for (absl::string_view term :
       absl::StrSplit(selector, ',', absl::SkipWhitespace())) {
    const std::string key(
        absl::StripAsciiWhitespace(term.substr(0, term.find_first_of("!="))));
    if (std::find(allowed->begin(), allowed->end(), key) == allowed->end()) {
      return key;
    }
  }
  return "";
}

// httplib listens with a backlog of 5: a burst of clients connecting at once
// overflows it and each extra one waits a second for its SYN to be resent.
class WideBacklogServer : public httplib::Server {
 public:
  void WidenBacklog() { ::listen(svr_sock_, SOMAXCONN); }
};

}  // namespace

FakeApiServer::FakeApiServer(FakeApiServerOptions options)
    : options_(std::move(options)),
      store_(options_.watch, options_.max_history),
      server_(std::make_unique<WideBacklogServer>()),
      random_(std::random_device()()) {
  const int threads = std::max(options_.threads, 4);
  server_->new_task_queue = [threads] {
    return new httplib::ThreadPool(threads);
  };
  server_->set_keep_alive_max_count(100000);
  // Responses go out as several writes; without this, Nagle's algorithm
  // and the client's delayed ACK add 40 ms to many of them.
  server_->set_tcp_nodelay(true);
  // An idle keep-alive connection holds a server thread; a short timeout
  // frees it (and shutdown) soon after a client goes quiet.
  server_->set_keep_alive_timeout(2);
  Route();
  port_ = server_->bind_to_any_port("127.0.0.1");
  if (port_ <= 0) {
    ADD_FAILURE() << "FakeApiServer: cannot bind 127.0.0.1";
    return;
  }
  static_cast<WideBacklogServer*>(server_.get())->WidenBacklog();
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // stop() before the accept loop runs would be lost and the join would
  // hang.
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (!server_->is_running() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(1));
  }
}

FakeApiServer::~FakeApiServer() {
  store_.Shutdown();
  if (thread_.joinable()) {
    server_->stop();
    thread_.join();
  }
}

std::string FakeApiServer::url() const {
  return absl::StrCat("http://127.0.0.1:", port_);
}

kube::KubeConfig FakeApiServer::kube_config() const {
  kube::KubeConfig config;
  config.server = url();
  config.bearer_token = options_.token.empty() ? "fake-token" : options_.token;
  return config;
}

std::string FakeApiServer::WriteKubeconfig(const std::string& dir) const {
  const std::string path = absl::StrCat(dir, "/kubeconfig-", port_, ".yaml");
  std::ofstream out(path);
  out << "apiVersion: v1\n"
      << "kind: Config\n"
      << "clusters:\n"
      << "- name: fake\n"
      << "  cluster:\n"
      << "    server: " << url() << "\n"
      << "users:\n"
      << "- name: fake\n"
      << "  user:\n"
      << "    token: " << kube_config().bearer_token << "\n"
      << "contexts:\n"
      << "- name: fake\n"
      << "  context:\n"
      << "    cluster: fake\n"
      << "    user: fake\n"
      << "    namespace: default\n"
      << "current-context: fake\n";
  out.close();
  if (!out) ADD_FAILURE() << "FakeApiServer: cannot write " << path;
  return path;
}

void FakeApiServer::Route() {
  httplib::Server& s = *server_;
  s.set_pre_routing_handler([this](const httplib::Request& req,
                                   httplib::Response& res) {
    if (options_.token.empty() || req.get_header_value("Authorization") ==
                                      absl::StrCat("Bearer ", options_.token)) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    {
      absl::MutexLock lock(&mu_);
      ++counts_.unauthorized;
    }
    SendStatus(res, 401, "Unauthorized");
    return httplib::Server::HandlerResponse::Handled;
  });
  s.set_error_handler(httplib::Server::HandlerWithResponse(
      [](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty())
          return httplib::Server::HandlerResponse::Unhandled;
        SendStatus(res, res.status,
                   absl::StrCat("fake API server: no route for ", req.method,
                                " ", req.path));
        return httplib::Server::HandlerResponse::Handled;
      }));

  s.Get("/api/v1/pods", Guarded([this](const auto& req, auto& res) {
          HandleCollection(ApiResource::kPods, "", req, res);
        }));
  s.Get("/api/v1/nodes", Guarded([this](const auto& req, auto& res) {
          HandleCollection(ApiResource::kNodes, "", req, res);
        }));
  s.Get(R"(/api/v1/namespaces/([^/]+)/pods)",
        Guarded([this](const auto& req, auto& res) {
          HandleCollection(ApiResource::kPods, req.matches[1], req, res);
        }));
  s.Get(R"(/api/v1/namespaces/([^/]+)/pods/([^/]+))",
        Guarded([this](const auto& req, auto& res) {
          HandleGet(ApiResource::kPods, req.matches[1], req.matches[2], res);
        }));
  s.Get(R"(/api/v1/nodes/([^/]+))", Guarded([this](const auto& req, auto& res) {
          HandleGet(ApiResource::kNodes, "", req.matches[1], res);
        }));
  s.Patch(R"(/api/v1/namespaces/([^/]+)/pods/([^/]+)(/status)?)",
          Guarded([this](const auto& req, auto& res) {
            HandlePatch(ApiResource::kPods, req.matches[1], req.matches[2],
                        req.matches[3].matched, req, res);
          }));
  s.Patch(R"(/api/v1/nodes/([^/]+)(/status)?)",
          Guarded([this](const auto& req, auto& res) {
            HandlePatch(ApiResource::kNodes, "", req.matches[1],
                        req.matches[2].matched, req, res);
          }));
  s.Post(R"(/api/v1/namespaces/([^/]+)/pods/([^/]+)/binding)",
         Guarded([this](const auto& req, auto& res) {
           HandleBinding(req.matches[1], req.matches[2], req, res);
         }));
  s.Post(R"(/api/v1/namespaces/([^/]+)/events)",
         Guarded([this](const auto& req, auto& res) {
           HandleEvent(req.matches[1], req, res);
         }));
  RouteDra();
  RouteQuotas();
  RouteLeases();
  RoutePolicy();
}

void FakeApiServer::Count(int RequestCounts::*counter) {
  absl::MutexLock lock(&mu_);
  ++(counts_.*counter);
}

void FakeApiServer::HandleCollection(ApiResource resource,
                                     const std::string& ns,
                                     const httplib::Request& req,
                                     httplib::Response& res) {
  absl::StatusOr<ObjectFilter> filter = FilterOf(resource, ns, req);
  if (!filter.ok()) {
    SendStatus(res, 400, std::string(filter.status().message()));
    return;
  }
  const std::string watch = req.get_param_value("watch");
  const bool watching = watch == "true" || watch == "1";
  Count(watching
            ? CounterOf(resource, &RequestCounts::watches,
                        &RequestCounts::slice_watches,
                        &RequestCounts::claim_watches,
                        &RequestCounts::class_watches)
            : CounterOf(
                  resource, &RequestCounts::lists, &RequestCounts::slice_lists,
                  &RequestCounts::claim_lists, &RequestCounts::class_lists));
  if (const int fault = TakeListOrWatchFault(); fault != 0) {
    SendStatus(res, fault, "injected failure");
    return;
  }
  if (!watching) {
    const ApiResourceInfo& info = InfoOf(resource);
    auto [rv, items] = store_.List(resource, *filter);
    std::string body = absl::StrCat(
        "{\"kind\":\"", info.kind, "List\",\"apiVersion\":\"", info.api_version,
        "\",\"metadata\":{\"resourceVersion\":\"", rv, "\"},\"items\":[");
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) body += ",";
      body += items[i]->dump(-1, ' ', false, json::error_handler_t::replace);
    }
    body += "]}";
    res.set_content(body, "application/json");
    return;
  }

  int timeout_seconds = 0;
  if (!absl::SimpleAtoi(req.get_param_value("timeoutSeconds"),
                        &timeout_seconds) ||
      timeout_seconds <= 0) {
    timeout_seconds = kDefaultWatchSeconds;
  }
  const std::string rv = req.get_param_value("resourceVersion");
  absl::StatusOr<std::shared_ptr<WatchCursor>> cursor =
      store_.StartWatch(resource, *std::move(filter), rv,
                        req.get_param_value("allowWatchBookmarks") == "true",
                        absl::Seconds(timeout_seconds));
  if (!cursor.ok()) {
    SendStatus(res, 400, std::string(cursor.status().message()));
    return;
  }
  bool http_410 = false;
  {
    absl::MutexLock lock(&mu_);
    http_410 = expired_as_http_410_ && (*cursor)->expired;
  }
  if (http_410) {
    store_.EndWatch();
    SendStatus(res, 410, absl::StrCat("too old resource version: ", rv));
    return;
  }
  res.set_chunked_content_provider(
      "application/json",
      [this, cursor = *std::move(cursor)](size_t /*offset*/,
                                          httplib::DataSink& sink) {
        FakeApiStore::Batch batch = store_.NextBatch(*cursor, kWatchPoll);
        if (!batch.data.empty() &&
            !sink.write(batch.data.data(), batch.data.size())) {
          return false;
        }
        if (batch.end) sink.done();
        return true;
      },
      [this](bool /*success*/) { store_.EndWatch(); });
}

absl::StatusOr<ObjectFilter> FakeApiServer::FilterOf(
    ApiResource resource, const std::string& ns, const httplib::Request& req) {
  const std::string field_selector = req.get_param_value("fieldSelector");
  if (const std::string field = UnsupportedField(resource, field_selector);
      !field.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("field label not supported: ", field));
  }
  return ObjectFilter::Parse(ns, field_selector,
                             req.get_param_value("labelSelector"));
}

void FakeApiServer::HandleGet(ApiResource resource, const std::string& ns,
                              const std::string& name, httplib::Response& res) {
  Count(CounterOf(resource, &RequestCounts::gets, &RequestCounts::slice_gets,
                  &RequestCounts::claim_gets, &RequestCounts::class_gets));
  if (resource == ApiResource::kResourceClaims) {
    absl::Duration delay;
    {
      absl::MutexLock lock(&mu_);
      delay = claim_get_delay_;
    }
    if (delay > absl::ZeroDuration()) absl::SleepFor(delay);
  }
  std::optional<json> object = store_.Get(resource, ns, name);
  if (!object.has_value()) {
    SendStatus(
        res, 404,
        absl::StrCat(QualifiedResource(resource), " \"", name, "\" not found"));
    return;
  }
  SendJson(res, 200, *object);
}

int FakeApiServer::TakeFault(int& remaining, int http_status) {
  if (remaining <= 0) return 0;
  --remaining;
  return http_status;
}

void FakeApiServer::HandlePatch(ApiResource resource, const std::string& ns,
                                const std::string& name, bool status,
                                const httplib::Request& req,
                                httplib::Response& res) {
  int fault = 0;
  if (resource == ApiResource::kResourceSlices) {
    fault = StartSliceWrite(&RequestCounts::slice_patches);
  } else if (resource == ApiResource::kResourceClaims && status) {
    fault = StartClaimStatusWrite(&RequestCounts::claim_patches);
  } else {
    absl::MutexLock lock(&mu_);
    ++(counts_.*CounterOf(resource, &RequestCounts::patches,
                          &RequestCounts::slice_patches,
                          &RequestCounts::claim_patches,
                          &RequestCounts::patches));
    if (resource == ApiResource::kPods) {
      fault = TakeFault(failing_patches_, patch_failure_status_);
    }
  }
  if (fault != 0) {
    SendStatus(res, fault, "injected failure");
    return;
  }
  if (resource == ApiResource::kPods) absl::SleepFor(PodPatchDelay());
  if (!absl::StartsWith(req.get_header_value("Content-Type"),
                        "application/merge-patch+json")) {
    SendStatus(res, 415,
               absl::StrCat("the fake supports only merge patches, not \"",
                            req.get_header_value("Content-Type"), "\""));
    return;
  }
  json patch = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (!patch.is_object()) {
    SendStatus(res, 400, "the patch is not a JSON object");
    return;
  }
  const std::string precondition =
      StringAt(MetadataOf(patch), "resourceVersion");
  std::vector<FieldError> errors;
  absl::StatusOr<json> patched =
      store_.Update(resource, ns, name, [&](json& object) -> absl::Status {
        if (!precondition.empty() &&
            StringAt(MetadataOf(object), "resourceVersion") != precondition) {
          return absl::AbortedError(
              ConflictMessage(QualifiedResource(resource), name));
        }
        if (resource == ApiResource::kPods || resource == ApiResource::kNodes) {
          object.merge_patch(patch);
          return absl::OkStatus();
        }
        const json previous = object;
        object.merge_patch(patch);
        return FinishWrite(resource, status, previous, object, &errors);
      });
  if (resource == ApiResource::kResourceClaims) {
    if (RejectInvalidClaim(name, errors, res)) return;
  } else if (RejectInvalidSlice(name, errors, res)) {
    return;
  }
  if (!patched.ok()) {
    SendStatus(res, HttpCodeOf(patched.status()),
               std::string(patched.status().message()));
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    patches_.push_back({req.path, std::move(patch)});
  }
  SendJson(res, 200, *patched);
}

void FakeApiServer::HandleBinding(const std::string& ns,
                                  const std::string& name,
                                  const httplib::Request& req,
                                  httplib::Response& res) {
  int fault = 0;
  absl::Duration delay;
  {
    absl::MutexLock lock(&mu_);
    ++counts_.bindings;
    fault = TakeFault(failing_bindings_, binding_failure_status_);
    delay = binding_delay_;
  }
  if (delay > absl::ZeroDuration()) absl::SleepFor(delay);
  if (fault != 0) {
    SendStatus(res, fault, "injected failure");
    return;
  }
  json binding = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  const json& target = binding.is_object() && binding.contains("target")
                           ? binding["target"]
                           : json();
  const std::string node = StringAt(target, "name");
  if (node.empty()) {
    SendStatus(res, 400, "Binding: target.name: Required value");
    return;
  }
  const std::string uid = StringAt(MetadataOf(binding), "uid");
  absl::StatusOr<json> bound = store_.Update(
      ApiResource::kPods, ns, name, [&](json& pod) -> absl::Status {
        const std::string pod_uid = StringAt(MetadataOf(pod), "uid");
        if (!uid.empty() && uid != pod_uid) {
          return absl::AbortedError(absl::StrCat(
              "Operation cannot be fulfilled on pods/binding \"", name,
              "\": Precondition failed: UID in precondition: ", uid,
              ", UID in object meta: ", pod_uid));
        }
        const std::string current =
            pod.contains("spec") ? StringAt(pod["spec"], "nodeName") : "";
        if (!current.empty()) {
          return absl::AlreadyExistsError(
              absl::StrCat("Operation cannot be fulfilled on pods/binding \"",
                           name, "\": pod ", name,
                           " is already assigned to node \"", current, "\""));
        }
        if (!pod["spec"].is_object()) pod["spec"] = json::object();
        pod["spec"]["nodeName"] = node;
        if (!pod["status"].is_object()) pod["status"] = json::object();
        json& conditions = pod["status"]["conditions"];
        if (!conditions.is_array()) conditions = json::array();
        conditions.push_back({{"type", "PodScheduled"}, {"status", "True"}});
        return absl::OkStatus();
      });
  if (!bound.ok()) {
    SendStatus(res, HttpCodeOf(bound.status()),
               std::string(bound.status().message()));
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    bindings_.push_back(std::move(binding));
  }
  SendStatus(res, 201, "");
}

void FakeApiServer::HandleEvent(const std::string& ns,
                                const httplib::Request& req,
                                httplib::Response& res) {
  json event = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (!event.is_object()) {
    SendStatus(res, 400, "the event is not a JSON object");
    return;
  }
  if (!event["metadata"].is_object()) event["metadata"] = json::object();
  json& metadata = event["metadata"];
  {
    absl::MutexLock lock(&mu_);
    ++counts_.events;
    if (StringAt(metadata, "name").empty()) {
      metadata["name"] =
          absl::StrCat(StringAt(metadata, "generateName"), next_event_++);
    }
    metadata["namespace"] = ns;
    events_.push_back(event);
  }
  SendJson(res, 201, event);
}

json FakeApiServer::UpsertNode(json node) {
  absl::StatusOr<json> stored = store_.Upsert(ApiResource::kNodes, node);
  if (!stored.ok()) {
    ADD_FAILURE() << "UpsertNode: " << stored.status();
    return json();
  }
  return *std::move(stored);
}

bool FakeApiServer::DeleteNode(const std::string& name) {
  return store_.Delete(ApiResource::kNodes, "", name).has_value();
}

std::optional<json> FakeApiServer::GetNode(const std::string& name) const {
  return store_.Get(ApiResource::kNodes, "", name);
}

json FakeApiServer::UpsertPod(json pod) {
  absl::StatusOr<json> stored = store_.Upsert(ApiResource::kPods, pod);
  if (!stored.ok()) {
    ADD_FAILURE() << "UpsertPod: " << stored.status();
    return json();
  }
  return *std::move(stored);
}

bool FakeApiServer::DeletePod(const std::string& ns, const std::string& name) {
  return store_.Delete(ApiResource::kPods, ns, name).has_value();
}

std::optional<json> FakeApiServer::GetPod(const std::string& ns,
                                          const std::string& name) const {
  return store_.Get(ApiResource::kPods, ns, name);
}

bool FakeApiServer::UpdatePod(const std::string& ns, const std::string& name,
                              const std::function<void(json& pod)>& mutate) {
  return store_
      .Update(ApiResource::kPods, ns, name,
              [&](json& pod) {
                mutate(pod);
                return absl::OkStatus();
              })
      .ok();
}

bool FakeApiServer::SetPodPhase(const std::string& ns, const std::string& name,
                                const std::string& phase) {
  return UpdatePod(ns, name, [&](json& pod) {
    if (!pod["status"].is_object()) pod["status"] = json::object();
    pod["status"]["phase"] = phase;
  });
}

int64_t FakeApiServer::resource_version() const {
  return store_.resource_version();
}

std::vector<json> FakeApiServer::Bindings() const {
  absl::MutexLock lock(&mu_);
  return bindings_;
}

std::vector<json> FakeApiServer::Events() const {
  absl::MutexLock lock(&mu_);
  return events_;
}

std::vector<RecordedPatch> FakeApiServer::Patches() const {
  absl::MutexLock lock(&mu_);
  return patches_;
}

std::vector<std::string> FakeApiServer::RejectedSliceWrites() const {
  absl::MutexLock lock(&mu_);
  return rejected_slice_writes_;
}

RequestCounts FakeApiServer::request_counts() const {
  absl::MutexLock lock(&mu_);
  return counts_;
}

void FakeApiServer::FailNextBindings(int count, int http_status) {
  absl::MutexLock lock(&mu_);
  failing_bindings_ = count;
  binding_failure_status_ = http_status;
}

void FakeApiServer::FailNextPodPatches(int count, int http_status) {
  absl::MutexLock lock(&mu_);
  failing_patches_ = count;
  patch_failure_status_ = http_status;
}

void FakeApiServer::FailNextResourceSliceWrites(int count, int http_status) {
  absl::MutexLock lock(&mu_);
  failing_slice_writes_ = count;
  slice_write_failure_status_ = http_status;
}

void FakeApiServer::FailNextClaimStatusWrites(int count, int http_status) {
  absl::MutexLock lock(&mu_);
  failing_claim_status_writes_ = count;
  claim_status_failure_status_ = http_status;
}

void FakeApiServer::SetBindingDelay(absl::Duration delay) {
  absl::MutexLock lock(&mu_);
  binding_delay_ = delay;
}

void FakeApiServer::SetResourceClaimGetDelay(absl::Duration delay) {
  absl::MutexLock lock(&mu_);
  claim_get_delay_ = delay;
}

void FakeApiServer::AnswerExpiredWatchesWithHttp410(bool on) {
  absl::MutexLock lock(&mu_);
  expired_as_http_410_ = on;
}

}  // namespace deviceshare::testing
