#include "deviceshare/kube/api_status.h"

#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace deviceshare::kube {
namespace {

constexpr char kHttpStatusPayload[] = "deviceshare.io/kube/http-status";
// Enough of a non-JSON body (an HTML error page from a proxy) to recognise.
constexpr size_t kMaxQuotedBody = 200;

absl::StatusCode CodeFor(int http_status) {
  switch (http_status) {
    case 400:
    case 422:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 409:
      return absl::StatusCode::kAlreadyExists;
    case 410:
      return absl::StatusCode::kFailedPrecondition;
    case 408:
    case 429:
      return absl::StatusCode::kUnavailable;
    default:
      return http_status >= 500 && http_status <= 599
                 ? absl::StatusCode::kUnavailable
                 : absl::StatusCode::kUnknown;
  }
}

// The API's own explanation: Status.message from a JSON body, else the start
// of the body.
std::string Explanation(absl::string_view body) {
  nlohmann::json parsed =
      nlohmann::json::parse(body.begin(), body.end(), nullptr,
                            /*allow_exceptions=*/false);
  if (parsed.is_object()) {
    auto message = parsed.find("message");
    if (message != parsed.end() && message->is_string()) {
      return message->get<std::string>();
    }
  }
  if (body.size() > kMaxQuotedBody) {
    return absl::StrCat(body.substr(0, kMaxQuotedBody), "...");
  }
  return std::string(body);
}

}  // namespace

absl::Status ApiError(absl::string_view method, absl::string_view path,
                      int http_status, absl::string_view body) {
  std::string message = absl::StrCat(method, " ", path, ": HTTP ", http_status);
  const std::string explanation = Explanation(body);
  if (!explanation.empty()) absl::StrAppend(&message, ": ", explanation);
  absl::Status status(CodeFor(http_status), message);
  status.SetPayload(kHttpStatusPayload, absl::Cord(absl::StrCat(http_status)));
  return status;
}

std::optional<int> HttpStatusOf(const absl::Status& status) {
  auto payload = status.GetPayload(kHttpStatusPayload);
  int http_status = 0;
  if (!payload.has_value() ||
      !absl::SimpleAtoi(std::string(*payload), &http_status)) {
    return std::nullopt;
  }
  return http_status;
}

}  // namespace deviceshare::kube
