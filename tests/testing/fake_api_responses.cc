#include "testing/fake_api_responses.h"

#include <exception>
#include <utility>

#include "absl/strings/str_cat.h"

namespace deviceshare::testing::fake_api {
namespace {

using nlohmann::json;

const char* ReasonFor(int code) {
  switch (code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 409:
      return "Conflict";
    case 410:
      return "Expired";
    case 415:
      return "UnsupportedMediaType";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 503:
      return "ServiceUnavailable";
    default:
      return code >= 500 ? "InternalError" : "";
  }
}

}  // namespace

void SendStatus(httplib::Response& res, int code, const std::string& message) {
  res.status = code;
  json status = {{"kind", "Status"},
                 {"apiVersion", "v1"},
                 {"metadata", json::object()},
                 {"status", code < 300 ? "Success" : "Failure"},
                 {"code", code}};
  if (!message.empty()) status["message"] = message;
  if (code >= 300) status["reason"] = ReasonFor(code);
  res.set_content(status.dump(-1, ' ', false, json::error_handler_t::replace),
                  "application/json");
}

void SendJson(httplib::Response& res, int code, const json& body) {
  res.status = code;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace),
                  "application/json");
}

int HttpCodeOf(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted:
      return 409;
    case absl::StatusCode::kInvalidArgument:
      return 400;
    default:
      return 500;
  }
}

std::string ConflictMessage(absl::string_view qualified_resource,
                            absl::string_view name) {
  return absl::StrCat("Operation cannot be fulfilled on ", qualified_resource,
                      " \"", name,
                      "\": the object has been modified; please apply your "
                      "changes to the latest version and try again");
}

httplib::Server::Handler Guarded(
    std::function<void(const httplib::Request&, httplib::Response&)> handler) {
  return [handler = std::move(handler)](const httplib::Request& req,
                                        httplib::Response& res) {
    try {
      handler(req, res);
    } catch (const std::exception& e) {
      SendStatus(res, 500, absl::StrCat("fake API server: ", e.what()));
    }
  };
}

std::string StringAt(const json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

const json& MetadataOf(const json& object) {
  static const json kEmpty = json::object();
  if (!object.is_object()) return kEmpty;
  auto it = object.find("metadata");
  return it != object.end() && it->is_object() ? *it : kEmpty;
}

}  // namespace deviceshare::testing::fake_api
