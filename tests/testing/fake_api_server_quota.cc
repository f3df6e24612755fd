// FakeApiServer's v1 ResourceQuotas: listed and watched across namespaces
// and in one, as serve reads HAMi's namespace GPU quotas from them. A real
// API server always serves them; without them the fake answered 404 and
// every serve under test ran with that watch failing.
#include <httplib.h>

#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "testing/fake_api_responses.h"
#include "testing/fake_api_server.h"

namespace deviceshare::testing {

using fake_api::Guarded;
using nlohmann::json;

void FakeApiServer::RouteQuotas() {
  httplib::Server& s = *server_;
  s.Get(R"(/api/v1/resourcequotas)",
        Guarded([this](const auto& req, auto& res) {
          HandleCollection(ApiResource::kResourceQuotas, "", req, res);
        }));
  s.Get(R"(/api/v1/namespaces/([^/]+)/resourcequotas)",
        Guarded([this](const auto& req, auto& res) {
          HandleCollection(ApiResource::kResourceQuotas, req.matches[1], req,
                           res);
        }));
  s.Get(R"(/api/v1/namespaces/([^/]+)/resourcequotas/([^/]+))",
        Guarded([this](const auto& req, auto& res) {
          HandleGet(ApiResource::kResourceQuotas, req.matches[1],
                    req.matches[2], res);
        }));
}

json FakeApiServer::UpsertResourceQuota(json quota) {
  if (!quota["metadata"].contains("namespace")) {
    quota["metadata"]["namespace"] = "default";
  }
  absl::StatusOr<json> stored =
      store_.Upsert(ApiResource::kResourceQuotas, std::move(quota));
  if (!stored.ok()) {
    ADD_FAILURE() << "UpsertResourceQuota: " << stored.status();
    return json();
  }
  return *std::move(stored);
}

bool FakeApiServer::DeleteResourceQuota(const std::string& ns,
                                        const std::string& name) {
  return store_.Delete(ApiResource::kResourceQuotas, ns, name).has_value();
}

}  // namespace deviceshare::testing
