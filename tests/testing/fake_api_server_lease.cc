// FakeApiServer's coordination.k8s.io/v1 part: Leases, for leader
// election. Each lease has its own resourceVersion sequence; writes that
// name a stale one get 409 as on a real server.
#include <httplib.h>

#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "testing/fake_api_responses.h"
#include "testing/fake_api_server.h"

namespace deviceshare::testing {

namespace {

using fake_api::ConflictMessage;
using fake_api::Guarded;
using fake_api::MetadataOf;
using fake_api::SendJson;
using fake_api::SendStatus;
using fake_api::StringAt;
using nlohmann::json;

constexpr char kLeases[] =
    R"(/apis/coordination\.k8s\.io/v1/namespaces/([^/]+)/leases)";

std::string KeyOf(const std::string& ns, const std::string& name) {
  return absl::StrCat(ns, "/", name);
}

// The body as a Lease for `ns`, or a 400 answer.
std::optional<json> LeaseBody(const httplib::Request& req,
                              const std::string& ns, httplib::Response& res) {
  json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) {
    SendStatus(res, 400, "the request body is not a JSON object");
    return std::nullopt;
  }
  if (!body["metadata"].is_object()) body["metadata"] = json::object();
  if (StringAt(body["metadata"], "name").empty()) {
    SendStatus(res, 400, "Lease: metadata.name: Required value");
    return std::nullopt;
  }
  body["metadata"]["namespace"] = ns;
  body["kind"] = "Lease";
  body["apiVersion"] = "coordination.k8s.io/v1";
  return body;
}

}  // namespace

struct FakeApiServer::LeaseTable {
  // An injected failure for this write, or 0.
  int TakeFailure() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (fail_writes == 0) return 0;
    --fail_writes;
    return fail_status;
  }

  // Stores `lease` under `key` with the next resourceVersion and answers it.
  void Store(const std::string& key, json lease, httplib::Response& res,
             int code) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    lease["metadata"]["resourceVersion"] = std::to_string(++version);
    leases[key] = lease;
    SendJson(res, code, lease);
  }

  mutable absl::Mutex mu;
  // "ns/name" -> the stored lease.
  std::map<std::string, json> leases ABSL_GUARDED_BY(mu);
  int64_t version ABSL_GUARDED_BY(mu) = 0;
  int fail_writes ABSL_GUARDED_BY(mu) = 0;
  int fail_status ABSL_GUARDED_BY(mu) = 500;
};

void FakeApiServer::RouteLeases() {
  leases_ = std::make_shared<LeaseTable>();
  httplib::Server& s = *server_;
  const std::string one = absl::StrCat(kLeases, "/([^/]+)");
  s.Get(one, Guarded([this](const auto& req, auto& res) {
          std::optional<json> lease = GetLease(req.matches[1], req.matches[2]);
          if (!lease) {
            SendStatus(
                res, 404,
                absl::StrCat("leases.coordination.k8s.io \"",
                             std::string(req.matches[2]), "\" not found"));
            return;
          }
          SendJson(res, 200, *lease);
        }));
  s.Post(kLeases, Guarded([this](const auto& req, auto& res) {
           std::optional<json> lease = LeaseBody(req, req.matches[1], res);
           if (!lease) return;
           const std::string name = StringAt((*lease)["metadata"], "name");
           absl::MutexLock lock(&leases_->mu);
           if (int failure = leases_->TakeFailure(); failure != 0) {
             SendStatus(res, failure, "fake API server: injected failure");
             return;
           }
           const std::string key = KeyOf(req.matches[1], name);
           if (leases_->leases.count(key) != 0) {
             SendStatus(res, 409,
                        absl::StrCat("leases.coordination.k8s.io \"", name,
                                     "\" already exists"));
             return;
           }
           leases_->Store(key, *std::move(lease), res, 201);
         }));
  s.Put(one, Guarded([this](const auto& req, auto& res) {
          std::optional<json> lease = LeaseBody(req, req.matches[1], res);
          if (!lease) return;
          const std::string name = req.matches[2];
          absl::MutexLock lock(&leases_->mu);
          if (int failure = leases_->TakeFailure(); failure != 0) {
            SendStatus(res, failure, "fake API server: injected failure");
            return;
          }
          auto it = leases_->leases.find(KeyOf(req.matches[1], name));
          if (it == leases_->leases.end()) {
            SendStatus(res, 404,
                       absl::StrCat("leases.coordination.k8s.io \"", name,
                                    "\" not found"));
            return;
          }
          const std::string wanted =
              StringAt(MetadataOf(*lease), "resourceVersion");
          if (!wanted.empty() &&
              wanted != StringAt(MetadataOf(it->second), "resourceVersion")) {
            SendStatus(res, 409,
                       ConflictMessage("leases.coordination.k8s.io", name));
            return;
          }
          leases_->Store(it->first, *std::move(lease), res, 200);
        }));
}

std::optional<json> FakeApiServer::GetLease(const std::string& ns,
                                            const std::string& name) const {
  absl::MutexLock lock(&leases_->mu);
  auto it = leases_->leases.find(KeyOf(ns, name));
  if (it == leases_->leases.end()) return std::nullopt;
  return it->second;
}

void FakeApiServer::FailNextLeaseWrites(int count, int http_status) {
  absl::MutexLock lock(&leases_->mu);
  leases_->fail_writes = count;
  leases_->fail_status = http_status;
}

}  // namespace deviceshare::testing
