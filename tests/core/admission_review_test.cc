// The AdmissionReview v1 exchange (admission/admission_review.h): the
// response's shape around a verdict, and bad input -- a body no review can
// answer is an error (HTTP 400), a review whose request holds no Pod is
// answered allowed:false naming the field.
#include "deviceshare/admission/admission_review.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/admission_answers.h"
#include "testing/status_matchers.h"

namespace deviceshare::admission {
namespace {

using ::deviceshare::testing::StatusIs;
using nlohmann::json;

constexpr absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;

json GpuPod() {
  return json::parse(R"({"apiVersion":"v1","kind":"Pod",
    "metadata":{"name":"a","namespace":"default"},
    "spec":{"containers":[{"name":"main",
      "resources":{"limits":{"nvidia.com/gpumem":"1000"}}}]}})");
}

json ReviewOf(json request) {
  return {{"apiVersion", "admission.k8s.io/v1"},
          {"kind", "AdmissionReview"},
          {"request", std::move(request)}};
}

json PodRequest(json object) {
  return {
      {"uid", "u-1"},
      {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
      {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
      {"namespace", "default"},
      {"operation", "CREATE"},
      {"object", std::move(object)}};
}

json Answer(const json& review) {
  absl::StatusOr<ReviewAnswer> answer =
      AnswerAdmissionReview(review.dump(), AdmissionSettings{});
  EXPECT_TRUE(answer.ok()) << answer.status();
  return answer.ok() ? json::parse(answer->body) : json();
}

TEST(AdmissionReviewTest, PatchedAnswerEchoesUidWithBase64JsonPatch) {
  const json body = Answer(ReviewOf(PodRequest(GpuPod())));
  EXPECT_EQ(body["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(body["kind"], "AdmissionReview");
  const json& response = body["response"];
  EXPECT_EQ(response["uid"], "u-1");
  EXPECT_EQ(response["allowed"], true);
  EXPECT_EQ(response["patchType"], "JSONPatch");
  EXPECT_EQ(::deviceshare::testing::PatchOf(response), json::parse(R"([
    {"op":"add","path":"/spec/containers/0/resources/limits/nvidia.com~1gpu",
     "value":"1"},
    {"op":"add","path":"/spec/schedulerName",
     "value":"deviceshare-scheduler"}])"));
}

TEST(AdmissionReviewTest, UntouchedAnswerHasNoPatch) {
  json pod = GpuPod();
  pod["spec"]["containers"][0]["resources"] = json::object();
  const json body = Answer(ReviewOf(PodRequest(pod)));
  EXPECT_EQ(body["response"], json::parse(R"({"uid":"u-1","allowed":true})"));
}

TEST(AdmissionReviewTest, RefusalCarries403AndTheMessage) {
  json pod = GpuPod();
  pod["spec"]["nodeName"] = "n1";
  const json body = Answer(ReviewOf(PodRequest(pod)));
  EXPECT_EQ(body["response"]["allowed"], false);
  EXPECT_EQ(body["response"]["status"]["code"], 403);
  EXPECT_THAT(body["response"]["status"]["message"].get<std::string>(),
              ::testing::StartsWith("spec.nodeName: \"n1\" is set"));
  EXPECT_FALSE(body["response"].contains("patch"));
}

TEST(AdmissionReviewTest, OperationsOtherThanCreateAreAllowedUntouched) {
  json request = PodRequest(GpuPod());
  request["operation"] = "UPDATE";
  EXPECT_EQ(Answer(ReviewOf(request))["response"],
            json::parse(R"({"uid":"u-1","allowed":true})"));
}

// Bodies no response could answer: an error naming the field (HTTP 400).
TEST(AdmissionReviewTest, UnanswerableBodiesAreErrorsNamingTheField) {
  const AdmissionSettings settings;
  struct Case {
    std::string body;
    std::string message;
  };
  const Case cases[] = {
      {"", "body: not JSON"},
      {"{not json", "body: not JSON"},
      {"\xff\xfe", "body: not JSON"},
      {"[1,2]", "body: not a JSON object"},
      {R"({"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview"})",
       "apiVersion: \"admission.k8s.io/v1beta1\" is not admission.k8s.io/v1"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"Pod"})",
       "kind: \"Pod\" is not AdmissionReview"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})",
       "request: missing or not an object"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)"
       R"("request":[]})",
       "request: missing or not an object"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)"
       R"("request":{"object":{}}})",
       "request.uid: missing"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)"
       R"("request":{"uid":7}})",
       "request.uid: missing"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(AnswerAdmissionReview(c.body, settings),
                StatusIs(kInvalid, c.message))
        << c.body;
  }
}

// A review with a uid but no Pod in it: allowed:false, code 400, naming
// the field.
TEST(AdmissionReviewTest, RequestsWithoutAPodAreRefusedNamingTheField) {
  struct Case {
    json request;
    std::string message;
  };
  json deployment = PodRequest(GpuPod());
  deployment["kind"] = {
      {"group", "apps"}, {"version", "v1"}, {"kind", "Deployment"}};
  json no_kind = PodRequest(GpuPod());
  no_kind.erase("kind");
  json no_object = PodRequest(GpuPod());
  no_object.erase("object");
  json null_object = PodRequest(nullptr);
  json service = PodRequest(json::parse(R"({"kind":"Service","spec":{}})"));
  const Case cases[] = {
      {deployment, "request.kind: \"apps/Deployment\" is not a core Pod"},
      {no_kind, "request.kind: missing or not an object"},
      {no_object, "request.object: missing or not an object"},
      {null_object, "request.object: missing or not an object"},
      {service, "request.object.kind: \"Service\" is not Pod"},
  };
  for (const Case& c : cases) {
    const json response = Answer(ReviewOf(c.request))["response"];
    EXPECT_EQ(response["uid"], "u-1");
    EXPECT_EQ(response["allowed"], false);
    EXPECT_EQ(response["status"]["code"], 400);
    EXPECT_EQ(response["status"]["message"], c.message);
  }
}

// A Pod object of the wrong shape is refused, never a crash.
TEST(AdmissionReviewTest, MalformedPodIsRefused) {
  const json response = Answer(ReviewOf(
      PodRequest(json::parse(R"({"spec":{"containers":5}})"))))["response"];
  EXPECT_EQ(response["allowed"], false);
  EXPECT_EQ(response["status"]["message"], "spec.containers: 5 is not a list");
}

}  // namespace
}  // namespace deviceshare::admission
