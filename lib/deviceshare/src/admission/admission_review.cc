#include "deviceshare/admission/admission_review.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "deviceshare/json_text.h"
#include "nlohmann/json.hpp"

namespace deviceshare::admission {
namespace {

using nlohmann::json;

constexpr char kApiVersion[] = "admission.k8s.io/v1";
constexpr char kKind[] = "AdmissionReview";

std::string StringAt(const json& object, const char* key) {
  auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>()
                                                     : std::string();
}

absl::Status Bad(std::string message) {
  return absl::InvalidArgumentError(std::move(message));
}

// The request of an AdmissionReview we can answer, or why not.
absl::StatusOr<const json*> RequestOf(const json& review) {
  if (!review.is_object()) return Bad("body: not a JSON object");
  if (StringAt(review, "apiVersion") != kApiVersion) {
    return Bad(absl::StrCat("apiVersion: \"", StringAt(review, "apiVersion"),
                            "\" is not ", kApiVersion));
  }
  if (StringAt(review, "kind") != kKind) {
    return Bad(absl::StrCat("kind: \"", StringAt(review, "kind"), "\" is not ",
                            kKind));
  }
  auto request = review.find("request");
  if (request == review.end() || !request->is_object()) {
    return Bad("request: missing or not an object");
  }
  if (StringAt(*request, "uid").empty()) return Bad("request.uid: missing");
  return &*request;
}

// Why `request` holds no Pod to admit; empty when it does.
std::string NotAPod(const json& request) {
  auto kind = request.find("kind");
  if (kind == request.end() || !kind->is_object()) {
    return "request.kind: missing or not an object";
  }
  const std::string group = StringAt(*kind, "group");
  const std::string name = StringAt(*kind, "kind");
  if (!group.empty() || name != "Pod") {
    return absl::StrCat("request.kind: \"", group, "/", name,
                        "\" is not a core Pod");
  }
  auto object = request.find("object");
  if (object == request.end() || !object->is_object()) {
    return "request.object: missing or not an object";
  }
  if (auto object_kind = object->find("kind");
      object_kind != object->end() && *object_kind != "Pod") {
    return absl::StrCat("request.object.kind: ", object_kind->dump(),
                        " is not Pod");
  }
  return "";
}

// Invalid UTF-8 cannot come from the parser; replace it rather than throw.
json Response(const std::string& uid, bool allowed) {
  return {{"uid", uid}, {"allowed", allowed}};
}

json Review(json response) {
  return {{"apiVersion", kApiVersion},
          {"kind", kKind},
          {"response", std::move(response)}};
}

ReviewAnswer Refused(const std::string& uid, int code, std::string message) {
  json response = Response(uid, false);
  response["status"] = {{"code", code}, {"message", message}};
  return {.body = JsonText(Review(std::move(response))),
          .uid = uid,
          .allowed = false,
          .message = std::move(message)};
}

ReviewAnswer Answer(const json& request, const AdmissionSettings& settings) {
  const std::string uid = StringAt(request, "uid");
  if (std::string why = NotAPod(request); !why.empty()) {
    return Refused(uid, 400, std::move(why));
  }
  const std::string operation = StringAt(request, "operation");
  if (!operation.empty() && operation != "CREATE") {
    return {.body = JsonText(Review(Response(uid, true))),
            .uid = uid,
            .message = absl::StrCat(operation, " is not admitted")};
  }
  PodAdmission verdict = AdmitPod(request["object"], settings);
  if (!verdict.allowed) return Refused(uid, 403, std::move(verdict.message));
  json response = Response(uid, true);
  const bool patched = !verdict.patch.empty();
  if (patched) {
    response["patchType"] = "JSONPatch";
    response["patch"] = absl::Base64Escape(JsonText(verdict.patch));
  }
  return {.body = JsonText(Review(std::move(response))),
          .uid = uid,
          .patched = patched,
          .message = std::move(verdict.message)};
}

}  // namespace

absl::StatusOr<ReviewAnswer> AnswerAdmissionReview(
    absl::string_view body, const AdmissionSettings& settings) {
  const json review = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (review.is_discarded()) return Bad("body: not JSON");
  absl::StatusOr<const json*> request = RequestOf(review);
  if (!request.ok()) return request.status();
  try {
    return Answer(**request, settings);
  } catch (const json::exception& error) {
    // The rules read only shapes they checked; this is a bug, not input.
    return absl::InternalError(
        absl::StrCat("admission review: ", error.what()));
  }
}

}  // namespace deviceshare::admission
