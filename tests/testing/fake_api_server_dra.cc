// FakeApiServer's resource.k8s.io/v1 part: ResourceSlices (validated
// writes), ResourceClaims (status rules of a real server) and
// DeviceClasses (read only).
#include <httplib.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "testing/fake_api_responses.h"
#include "testing/fake_api_server.h"
#include "testing/resource_claim_rules.h"
#include "testing/resource_slice_rules.h"

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

constexpr char kSlices[] = R"(/apis/resource\.k8s\.io/v1/resourceslices)";
constexpr char kClaimsPrefix[] = R"(/apis/resource\.k8s\.io/v1/)";
constexpr char kClasses[] = R"(/apis/resource\.k8s\.io/v1/deviceclasses)";

// names.SimpleNameGenerator: 5 characters without vowels (no words), the
// base cut so that the name fits a DNS label.
constexpr char kSuffixAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
constexpr size_t kSuffixLength = 5;
constexpr size_t kMaxGeneratedBase = 63 - kSuffixLength;
// A generated name that collides is tried again, as the server does.
constexpr int kGenerateNameAttempts = 8;

std::optional<json> ParseObject(const httplib::Request& req,
                                httplib::Response& res) {
  json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) {
    SendStatus(res, 400, "the request body is not a JSON object");
    return std::nullopt;
  }
  if (!body["metadata"].is_object()) body["metadata"] = json::object();
  return body;
}

// A body for `name` at its URL: 400 (as the server) when it names another.
bool NameMatches(const json& body, const std::string& name,
                 httplib::Response& res) {
  const std::string in_body = StringAt(MetadataOf(body), "name");
  if (in_body == name) return true;
  SendStatus(res, 400,
             absl::StrCat("the name of the object (", in_body,
                          ") does not match the name on the URL (", name, ")"));
  return false;
}

void FillTypeMeta(ApiResource resource, json& object) {
  const ApiResourceInfo& info = InfoOf(resource);
  if (!object.contains("kind")) object["kind"] = info.kind;
  if (!object.contains("apiVersion")) object["apiVersion"] = info.api_version;
}

}  // namespace

void FakeApiServer::RouteDra() {
  httplib::Server& s = *server_;
  const std::string slice = absl::StrCat(kSlices, "/([^/]+)");
  s.Get(kSlices, Guarded([this](const auto& req, auto& res) {
          HandleCollection(ApiResource::kResourceSlices, "", req, res);
        }));
  s.Post(kSlices, Guarded([this](const auto& req, auto& res) {
           HandleSliceCreate(req, res);
         }));
  s.Delete(kSlices, Guarded([this](const auto& req, auto& res) {
             HandleSliceDeleteCollection(req, res);
           }));
  s.Get(slice, Guarded([this](const auto& req, auto& res) {
          HandleGet(ApiResource::kResourceSlices, "", req.matches[1], res);
        }));
  s.Put(slice, Guarded([this](const auto& req, auto& res) {
          HandleSlicePut(req.matches[1], req, res);
        }));
  s.Patch(slice, Guarded([this](const auto& req, auto& res) {
            HandlePatch(ApiResource::kResourceSlices, "", req.matches[1],
                        /*status=*/false, req, res);
          }));
  s.Delete(slice, Guarded([this](const auto& req, auto& res) {
             HandleSliceDelete(req.matches[1], res);
           }));

  const std::string claims =
      absl::StrCat(kClaimsPrefix, "namespaces/([^/]+)/resourceclaims");
  const std::string claim = absl::StrCat(claims, "/([^/]+)");
  s.Get(absl::StrCat(kClaimsPrefix, "resourceclaims"),
        Guarded([this](const auto& req, auto& res) {
          HandleCollection(ApiResource::kResourceClaims, "", req, res);
        }));
  s.Get(claims, Guarded([this](const auto& req, auto& res) {
          HandleCollection(ApiResource::kResourceClaims, req.matches[1], req,
                           res);
        }));
  s.Get(claim, Guarded([this](const auto& req, auto& res) {
          HandleGet(ApiResource::kResourceClaims, req.matches[1],
                    req.matches[2], res);
        }));
  s.Patch(absl::StrCat(claim, "(/status)?"),
          Guarded([this](const auto& req, auto& res) {
            HandlePatch(ApiResource::kResourceClaims, req.matches[1],
                        req.matches[2], req.matches[3].matched, req, res);
          }));
  s.Put(absl::StrCat(claim, "/status"),
        Guarded([this](const auto& req, auto& res) {
          HandleClaimStatusPut(req.matches[1], req.matches[2], req, res);
        }));

  s.Get(kClasses, Guarded([this](const auto& req, auto& res) {
          HandleCollection(ApiResource::kDeviceClasses, "", req, res);
        }));
  s.Get(absl::StrCat(kClasses, "/([^/]+)"),
        Guarded([this](const auto& req, auto& res) {
          HandleGet(ApiResource::kDeviceClasses, "", req.matches[1], res);
        }));
}

int FakeApiServer::StartSliceWrite(int RequestCounts::*counter) {
  absl::MutexLock lock(&mu_);
  ++(counts_.*counter);
  return TakeFault(failing_slice_writes_, slice_write_failure_status_);
}

int FakeApiServer::StartClaimStatusWrite(int RequestCounts::*counter) {
  absl::MutexLock lock(&mu_);
  ++(counts_.*counter);
  return TakeFault(failing_claim_status_writes_, claim_status_failure_status_);
}

bool FakeApiServer::RejectInvalidSlice(const std::string& name,
                                       const std::vector<FieldError>& errors,
                                       httplib::Response& res) {
  if (errors.empty()) return false;
  const ApiResourceInfo& info = InfoOf(ApiResource::kResourceSlices);
  json status = InvalidStatus(info.group, info.kind, name, errors);
  {
    absl::MutexLock lock(&mu_);
    ++counts_.slice_invalid;
    rejected_slice_writes_.push_back(status["message"].get<std::string>());
  }
  SendJson(res, 422, status);
  return true;
}

bool FakeApiServer::RejectInvalidClaim(const std::string& name,
                                       const std::vector<FieldError>& errors,
                                       httplib::Response& res) {
  if (errors.empty()) return false;
  const ApiResourceInfo& info = InfoOf(ApiResource::kResourceClaims);
  SendJson(res, 422, InvalidStatus(info.group, info.kind, name, errors));
  return true;
}

absl::Status FakeApiServer::FinishWrite(ApiResource resource, bool status,
                                        const json& previous, json& object,
                                        std::vector<FieldError>* errors) {
  if (!object.is_object()) object = json::object();
  if (!object["metadata"].is_object()) object["metadata"] = json::object();
  // The store restores the identity after this; validation needs it now.
  object["metadata"]["name"] = MetadataOf(previous).value("name", "");
  FillTypeMeta(resource, object);
  switch (resource) {
    case ApiResource::kResourceSlices:
      *errors = ValidateResourceSliceUpdate(object, previous);
      // The message goes out with the 422; this only stops the write.
      return errors->empty() ? absl::OkStatus()
                             : absl::InvalidArgumentError("invalid");
    case ApiResource::kResourceClaims: {
      // As the claim strategies of a real server: the object's writers
      // cannot set the status, and /status writers only the status, which
      // is validated (testing/resource_claim_rules.h).
      json result = status ? previous : object;
      const json& status_from = status ? object : previous;
      auto kept = status_from.find("status");
      if (kept != status_from.end() && !kept->is_null()) {
        result["status"] = *kept;
      } else {
        result.erase("status");
      }
      if (status) {
        *errors = ValidateResourceClaimStatusUpdate(result, previous);
        if (!errors->empty()) return absl::InvalidArgumentError("invalid");
      }
      object = std::move(result);
      return absl::OkStatus();
    }
    default:
      return absl::OkStatus();
  }
}

void FakeApiServer::HandleSliceCreate(const httplib::Request& req,
                                      httplib::Response& res) {
  if (int fault = StartSliceWrite(&RequestCounts::slice_creates); fault != 0) {
    SendStatus(res, fault, "injected failure");
    return;
  }
  std::optional<json> slice = ParseObject(req, res);
  if (!slice.has_value()) return;
  json& metadata = (*slice)["metadata"];
  if (!StringAt(metadata, "resourceVersion").empty()) {
    SendStatus(res, 500,
               "resourceVersion should not be set on objects to be created");
    return;
  }
  // A create gets a fresh identity whatever the body says.
  metadata.erase("uid");
  metadata.erase("creationTimestamp");
  FillTypeMeta(ApiResource::kResourceSlices, *slice);
  std::string base = StringAt(metadata, "generateName");
  const bool generate = StringAt(metadata, "name").empty() && !base.empty();
  if (base.size() > kMaxGeneratedBase) base.resize(kMaxGeneratedBase);
  for (int attempt = 1;; ++attempt) {
    if (generate) {
      std::string name = base;
      absl::MutexLock lock(&mu_);
      for (size_t i = 0; i < kSuffixLength; ++i) {
        name += kSuffixAlphabet[random_() % (sizeof(kSuffixAlphabet) - 1)];
      }
      metadata["name"] = name;
    }
    const std::string name = StringAt(metadata, "name");
    if (RejectInvalidSlice(name, ValidateResourceSlice(*slice), res)) return;
    absl::StatusOr<json> created =
        store_.Create(ApiResource::kResourceSlices, *slice);
    if (created.ok()) {
      SendJson(res, 201, *created);
      return;
    }
    if (generate && absl::IsAlreadyExists(created.status()) &&
        attempt < kGenerateNameAttempts) {
      continue;
    }
    SendStatus(res, HttpCodeOf(created.status()),
               std::string(created.status().message()));
    return;
  }
}

void FakeApiServer::HandleSlicePut(const std::string& name,
                                   const httplib::Request& req,
                                   httplib::Response& res) {
  if (int fault = StartSliceWrite(&RequestCounts::slice_updates); fault != 0) {
    SendStatus(res, fault, "injected failure");
    return;
  }
  std::optional<json> body = ParseObject(req, res);
  if (!body.has_value() || !NameMatches(*body, name, res)) return;
  const std::string precondition =
      StringAt(MetadataOf(*body), "resourceVersion");
  std::vector<FieldError> errors;
  absl::StatusOr<json> updated =
      store_.Update(ApiResource::kResourceSlices, "", name, [&](json& object) {
        if (!precondition.empty() &&
            StringAt(MetadataOf(object), "resourceVersion") != precondition) {
          return absl::AbortedError(ConflictMessage(
              QualifiedResource(ApiResource::kResourceSlices), name));
        }
        const json previous = std::move(object);
        object = *body;
        return FinishWrite(ApiResource::kResourceSlices, /*status=*/false,
                           previous, object, &errors);
      });
  if (RejectInvalidSlice(name, errors, res)) return;
  if (!updated.ok()) {
    SendStatus(res, HttpCodeOf(updated.status()),
               std::string(updated.status().message()));
    return;
  }
  SendJson(res, 200, *updated);
}

void FakeApiServer::HandleSliceDelete(const std::string& name,
                                      httplib::Response& res) {
  if (int fault = StartSliceWrite(&RequestCounts::slice_deletes); fault != 0) {
    SendStatus(res, fault, "injected failure");
    return;
  }
  std::optional<json> deleted =
      store_.Delete(ApiResource::kResourceSlices, "", name);
  if (!deleted.has_value()) {
    SendStatus(res, 404,
               absl::StrCat(QualifiedResource(ApiResource::kResourceSlices),
                            " \"", name, "\" not found"));
    return;
  }
  SendJson(res, 200, *deleted);
}

void FakeApiServer::HandleSliceDeleteCollection(const httplib::Request& req,
                                                httplib::Response& res) {
  if (int fault = StartSliceWrite(&RequestCounts::slice_deletes); fault != 0) {
    SendStatus(res, fault, "injected failure");
    return;
  }
  absl::StatusOr<ObjectFilter> filter =
      FilterOf(ApiResource::kResourceSlices, "", req);
  if (!filter.ok()) {
    SendStatus(res, 400, std::string(filter.status().message()));
    return;
  }
  auto [rv, items] = store_.List(ApiResource::kResourceSlices, *filter);
  json deleted = json::array();
  for (const FakeApiStore::ObjectPtr& item : items) {
    std::optional<json> gone = store_.Delete(
        ApiResource::kResourceSlices, "", StringAt(MetadataOf(*item), "name"));
    if (gone.has_value()) deleted.push_back(*std::move(gone));
  }
  const ApiResourceInfo& info = InfoOf(ApiResource::kResourceSlices);
  SendJson(res, 200,
           {{"kind", absl::StrCat(info.kind, "List")},
            {"apiVersion", info.api_version},
            {"metadata",
             {{"resourceVersion", absl::StrCat(store_.resource_version())}}},
            {"items", std::move(deleted)}});
}

void FakeApiServer::HandleClaimStatusPut(const std::string& ns,
                                         const std::string& name,
                                         const httplib::Request& req,
                                         httplib::Response& res) {
  if (int fault = StartClaimStatusWrite(&RequestCounts::claim_status_updates);
      fault != 0) {
    SendStatus(res, fault,
               fault == 409
                   ? ConflictMessage(
                         QualifiedResource(ApiResource::kResourceClaims), name)
                   : "injected failure");
    return;
  }
  std::optional<json> body = ParseObject(req, res);
  if (!body.has_value() || !NameMatches(*body, name, res)) return;
  const std::string precondition =
      StringAt(MetadataOf(*body), "resourceVersion");
  std::vector<FieldError> errors;
  absl::StatusOr<json> updated =
      store_.Update(ApiResource::kResourceClaims, ns, name, [&](json& object) {
        if (!precondition.empty() &&
            StringAt(MetadataOf(object), "resourceVersion") != precondition) {
          return absl::AbortedError(ConflictMessage(
              QualifiedResource(ApiResource::kResourceClaims), name));
        }
        const json previous = std::move(object);
        object = *body;
        return FinishWrite(ApiResource::kResourceClaims, /*status=*/true,
                           previous, object, &errors);
      });
  if (RejectInvalidClaim(name, errors, res)) return;
  if (!updated.ok()) {
    SendStatus(res, HttpCodeOf(updated.status()),
               std::string(updated.status().message()));
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    patches_.push_back({req.path, *body});
  }
  SendJson(res, 200, *updated);
}

json FakeApiServer::UpsertResourceSlice(json slice) {
  absl::StatusOr<json> stored =
      store_.Upsert(ApiResource::kResourceSlices, std::move(slice));
  if (!stored.ok()) {
    ADD_FAILURE() << "UpsertResourceSlice: " << stored.status();
    return json();
  }
  return *std::move(stored);
}

bool FakeApiServer::DeleteResourceSlice(const std::string& name) {
  return store_.Delete(ApiResource::kResourceSlices, "", name).has_value();
}

std::optional<json> FakeApiServer::GetResourceSlice(
    const std::string& name) const {
  return store_.Get(ApiResource::kResourceSlices, "", name);
}

std::vector<json> FakeApiServer::ResourceSlices() const {
  absl::StatusOr<ObjectFilter> all = ObjectFilter::Parse("", "", "");
  std::vector<json> slices;
  if (!all.ok()) return slices;
  for (const FakeApiStore::ObjectPtr& slice :
       store_.List(ApiResource::kResourceSlices, *all).second) {
    slices.push_back(*slice);
  }
  return slices;
}

json FakeApiServer::UpsertResourceClaim(json claim) {
  absl::StatusOr<json> stored =
      store_.Upsert(ApiResource::kResourceClaims, std::move(claim));
  if (!stored.ok()) {
    ADD_FAILURE() << "UpsertResourceClaim: " << stored.status();
    return json();
  }
  return *std::move(stored);
}

bool FakeApiServer::DeleteResourceClaim(const std::string& ns,
                                        const std::string& name) {
  return store_.Delete(ApiResource::kResourceClaims, ns, name).has_value();
}

std::optional<json> FakeApiServer::GetResourceClaim(
    const std::string& ns, const std::string& name) const {
  return store_.Get(ApiResource::kResourceClaims, ns, name);
}

json FakeApiServer::UpsertDeviceClass(json device_class) {
  absl::StatusOr<json> stored =
      store_.Upsert(ApiResource::kDeviceClasses, std::move(device_class));
  if (!stored.ok()) {
    ADD_FAILURE() << "UpsertDeviceClass: " << stored.status();
    return json();
  }
  return *std::move(stored);
}

bool FakeApiServer::DeleteDeviceClass(const std::string& name) {
  return store_.Delete(ApiResource::kDeviceClasses, "", name).has_value();
}

std::optional<json> FakeApiServer::GetDeviceClass(
    const std::string& name) const {
  return store_.Get(ApiResource::kDeviceClasses, "", name);
}

}  // namespace deviceshare::testing
