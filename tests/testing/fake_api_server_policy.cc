// FakeApiServer's policy/v1 part: PodDisruptionBudgets (list and get; the
// test sets them) and the Eviction subresource of pods, which deletes a pod
// unless the one budget that selects it has no disruption left, as the API
// server's eviction REST handler does.
#include <httplib.h>

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "deviceshare/kube/label_selector.h"
#include "gtest/gtest.h"
#include "testing/fake_api_responses.h"
#include "testing/fake_api_server.h"

namespace deviceshare::testing {

using fake_api::Guarded;
using fake_api::MetadataOf;
using fake_api::SendJson;
using fake_api::SendStatus;
using fake_api::StringAt;
using nlohmann::json;

struct FakeApiServer::PolicyTable {
  mutable absl::Mutex mu;
  // By (namespace, name).
  std::map<std::pair<std::string, std::string>, json> budgets
      ABSL_GUARDED_BY(mu);
  std::vector<json> evictions ABSL_GUARDED_BY(mu);  // accepted ones
  std::function<void(const json&)> on_eviction ABSL_GUARDED_BY(mu);
  int64_t version ABSL_GUARDED_BY(mu) = 0;
};

namespace {

constexpr char kBudgets[] = R"(/apis/policy/v1/poddisruptionbudgets)";
constexpr char kNamespacedBudgets[] =
    R"(/apis/policy/v1/namespaces/([^/]+)/poddisruptionbudgets)";

// Whether the disruption controller has not yet seen the budget's latest
// spec: the API server then refuses every eviction under it.
bool Unobserved(const json& budget) {
  const json& metadata = MetadataOf(budget);
  const json& status = budget.value("status", json::object());
  const json generation = metadata.value("generation", json(0));
  const json observed = status.value("observedGeneration", json(0));
  return generation.is_number_integer() && observed.is_number_integer() &&
         observed.get<int64_t>() < generation.get<int64_t>();
}

// What the API server answers when a budget refuses (pkg/registry/core/pod/
// storage/eviction.go): 429 TooManyRequests with a DisruptionBudget cause,
// which says why: no disruption left, or the budget's latest edit not yet
// observed by the disruption controller (status.observedGeneration below
// metadata.generation; seen against the real API server, tests/cluster).
json RefusedStatus(const json& budget) {
  const json& status = budget.value("status", json::object());
  const std::string name = StringAt(MetadataOf(budget), "name");
  const bool unobserved = Unobserved(budget);
  return {
      {"kind", "Status"},
      {"apiVersion", "v1"},
      {"metadata", json::object()},
      {"status", "Failure"},
      {"message",
       "Cannot evict pod as it would violate the pod's disruption "
       "budget."},
      {"reason", "TooManyRequests"},
      {"details",
       {{"causes",
         json::array(
             {{{"reason", "DisruptionBudget"},
               {"message",
                unobserved
                    ? absl::StrCat("The disruption budget ", name,
                                   " is still being processed by the server.")
                    : absl::StrCat("The disruption budget ", name, " needs ",
                                   status.value("desiredHealthy", 0),
                                   " healthy pods and has ",
                                   status.value("currentHealthy", 0),
                                   " currently")}}})}}},
      {"code", 429}};
}

// A pod that is not running is evicted without asking its budget.
bool IgnoresBudget(const json& pod) {
  const std::string phase =
      StringAt(pod.value("status", json::object()), "phase");
  return phase == "Pending" || phase == "Succeeded" || phase == "Failed";
}

}  // namespace

void FakeApiServer::RoutePolicy() {
  policy_ = std::make_shared<PolicyTable>();
  httplib::Server& s = *server_;
  auto list = [this](const std::string& ns, httplib::Response& res) {
    absl::MutexLock lock(&policy_->mu);
    json items = json::array();
    for (const auto& [key, budget] : policy_->budgets) {
      if (ns.empty() || key.first == ns) items.push_back(budget);
    }
    SendJson(
        res, 200,
        {{"kind", "PodDisruptionBudgetList"},
         {"apiVersion", "policy/v1"},
         {"metadata", {{"resourceVersion", absl::StrCat(policy_->version)}}},
         {"items", std::move(items)}});
  };
  s.Get(kBudgets, Guarded([list](const auto&, auto& res) { list("", res); }));
  s.Get(kNamespacedBudgets, Guarded([list](const auto& req, auto& res) {
          list(req.matches[1], res);
        }));
  s.Get(absl::StrCat(kNamespacedBudgets, "/([^/]+)"),
        Guarded([this](const auto& req, auto& res) {
          std::optional<json> budget =
              GetPodDisruptionBudget(req.matches[1], req.matches[2]);
          if (!budget.has_value()) {
            SendStatus(
                res, 404,
                absl::StrCat("poddisruptionbudgets.policy \"",
                             std::string(req.matches[2]), "\" not found"));
            return;
          }
          SendJson(res, 200, *budget);
        }));
  s.Post(R"(/api/v1/namespaces/([^/]+)/pods/([^/]+)/eviction)",
         Guarded([this](const auto& req, auto& res) {
           HandleEviction(req.matches[1], req.matches[2], req, res);
         }));
}

void FakeApiServer::HandleEviction(const std::string& ns,
                                   const std::string& name,
                                   const httplib::Request& req,
                                   httplib::Response& res) {
  std::optional<json> pod = store_.Get(ApiResource::kPods, ns, name);
  if (!pod.has_value()) {
    SendStatus(res, 404, absl::StrCat("pods \"", name, "\" not found"));
    return;
  }
  std::function<void(const json&)> hook;
  if (!EvictUnderBudget(ns, *pod, req, res)) return;
  {
    absl::MutexLock lock(&policy_->mu);
    hook = policy_->on_eviction;
  }
  if (hook) hook(*pod);
}

bool FakeApiServer::EvictUnderBudget(const std::string& ns, const json& pod,
                                     const httplib::Request& req,
                                     httplib::Response& res) {
  const json labels = MetadataOf(pod).value("labels", json::object());
  absl::MutexLock lock(&policy_->mu);
  std::vector<json*> selecting;
  for (auto& [key, budget] : policy_->budgets) {
    if (key.first != ns) continue;
    absl::StatusOr<bool> matches = kube::SelectorMatches(
        budget.value("spec", json::object()).value("selector", json()), labels);
    if (matches.ok() && *matches) selecting.push_back(&budget);
  }
  if (!IgnoresBudget(pod)) {
    if (selecting.size() > 1) {
      SendStatus(res, 500,
                 "This pod has more than one PodDisruptionBudget, which the "
                 "eviction subresource does not support.");
      return false;
    }
    if (selecting.size() == 1) {
      json& status = (*selecting[0])["status"];
      const int64_t allowed = status.value("disruptionsAllowed", 0);
      if (allowed <= 0 || Unobserved(*selecting[0])) {
        SendJson(res, 429, RefusedStatus(*selecting[0]));
        return false;
      }
      status["disruptionsAllowed"] = allowed - 1;
      ++policy_->version;
    }
  }
  store_.Delete(ApiResource::kPods, ns, StringAt(MetadataOf(pod), "name"));
  policy_->evictions.push_back(
      json::parse(req.body, nullptr, /*allow_exceptions=*/false));
  SendStatus(res, 201, "");
  return true;
}

void FakeApiServer::OnEviction(std::function<void(const json& pod)> hook) {
  absl::MutexLock lock(&policy_->mu);
  policy_->on_eviction = std::move(hook);
}

json FakeApiServer::UpsertPodDisruptionBudget(json budget) {
  json& metadata = budget["metadata"];
  if (!metadata.is_object() || StringAt(metadata, "name").empty()) {
    ADD_FAILURE() << "UpsertPodDisruptionBudget: no metadata.name";
    return json();
  }
  if (StringAt(metadata, "namespace").empty())
    metadata["namespace"] = "default";
  budget["kind"] = "PodDisruptionBudget";
  budget["apiVersion"] = "policy/v1";
  absl::MutexLock lock(&policy_->mu);
  metadata["resourceVersion"] = absl::StrCat(++policy_->version);
  policy_
      ->budgets[{StringAt(metadata, "namespace"), StringAt(metadata, "name")}] =
      budget;
  return budget;
}

std::optional<json> FakeApiServer::GetPodDisruptionBudget(
    const std::string& ns, const std::string& name) const {
  absl::MutexLock lock(&policy_->mu);
  auto it = policy_->budgets.find({ns, name});
  if (it == policy_->budgets.end()) return std::nullopt;
  return it->second;
}

std::vector<json> FakeApiServer::Evictions() const {
  absl::MutexLock lock(&policy_->mu);
  return policy_->evictions;
}

}  // namespace deviceshare::testing
