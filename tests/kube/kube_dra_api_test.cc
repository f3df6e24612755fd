// ApiClient's Put and Delete, and FakeApiServer's resource.k8s.io/v1 part:
// ResourceSlices (validated writes) and ResourceClaims (status rules).
#include <httplib.h>

#include <memory>
#include <string>
#include <vector>

#include "deviceshare/kube/api_client.h"
#include "deviceshare/kube/api_status.h"
#include "deviceshare/kube/object_paths.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/fake_api_server.h"
#include "testing/status_matchers.h"

namespace deviceshare::testing {
namespace {

using ::deviceshare::kube::ApiClient;
using ::deviceshare::kube::HttpStatusOf;
using ::deviceshare::kube::IsConflict;
using ::deviceshare::kube::ResourceClaimPath;
using ::deviceshare::kube::ResourceClaimsPath;
using ::deviceshare::kube::ResourceClaimStatusPath;
using ::deviceshare::kube::ResourceSlicePath;
using ::deviceshare::kube::ResourceSlicesPath;
using ::deviceshare::kube::WithQuery;
using nlohmann::json;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::MatchesRegex;
using ::testing::SizeIs;
using ::testing::StartsWith;

constexpr char kDriver[] = "gpu.deviceshare.io";

json Device(const std::string& name) {
  return {{"name", name},
          {"attributes", {{"index", {{"int", 0}}}}},
          {"capacity", {{"memory", {{"value", "80Gi"}}}}}};
}

json Slice(const std::string& name, const std::string& node = "node-1",
           const std::string& driver = kDriver) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"driver", driver},
            {"nodeName", node},
            {"pool",
             {{"name", node}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"devices", json::array({Device("gpu-0")})}}}};
}

json Claim(const std::string& ns, const std::string& name) {
  return {
      {"metadata", {{"name", name}, {"namespace", ns}}},
      {"spec",
       {{"devices",
         {{"requests",
           json::array({{{"name", "gpu"},
                         {"exactly",
                          {{"deviceClassName", "gpu.deviceshare.io"}}}}})}}}}}};
}

std::vector<std::string> ItemNames(const json& list) {
  std::vector<std::string> names;
  for (const json& item : list["items"]) {
    names.push_back(item["metadata"]["name"]);
  }
  return names;
}

class DraApiTest : public ::testing::Test {
 protected:
  FakeApiServer server_;
  std::unique_ptr<ApiClient> client_ =
      *ApiClient::Create(server_.kube_config());
};

// ---- ApiClient::Put / Delete ----------------------------------------------

TEST_F(DraApiTest, PutReplacesTheSlice) {
  const json stored = server_.UpsertResourceSlice(Slice("s1"));
  json update = Slice("s1");
  update["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"];
  update["spec"]["pool"]["generation"] = 2;
  absl::StatusOr<json> put = client_->Put(ResourceSlicePath("s1"), update);
  ASSERT_OK(put);
  EXPECT_EQ((*put)["spec"]["pool"]["generation"], 2);
  EXPECT_EQ((*put)["metadata"]["uid"], stored["metadata"]["uid"]);
  EXPECT_NE((*put)["metadata"]["resourceVersion"],
            stored["metadata"]["resourceVersion"]);
  EXPECT_EQ(
      server_.GetResourceSlice("s1").value()["spec"]["pool"]["generation"], 2);
  EXPECT_EQ(server_.request_counts().slice_updates, 1);
}

TEST_F(DraApiTest, PutWithoutResourceVersionIsUnconditional) {
  server_.UpsertResourceSlice(Slice("s1"));
  server_.UpsertResourceSlice(Slice("s1"));  // moves the resourceVersion
  EXPECT_OK(client_->Put(ResourceSlicePath("s1"), Slice("s1")));
}

TEST_F(DraApiTest, PutWithStaleResourceVersionIsAConflict) {
  const json stored = server_.UpsertResourceSlice(Slice("s1"));
  server_.UpsertResourceSlice(Slice("s1"));
  json update = Slice("s1");
  update["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"];
  absl::StatusOr<json> put = client_->Put(ResourceSlicePath("s1"), update);
  EXPECT_TRUE(IsConflict(put.status())) << put.status();
  EXPECT_THAT(put.status().message(),
              HasSubstr("Operation cannot be fulfilled on "
                        "resourceslices.resource.k8s.io \"s1\""));
}

TEST_F(DraApiTest, PutOfAMissingSliceIsNotFound) {
  absl::StatusOr<json> put = client_->Put(ResourceSlicePath("s1"), Slice("s1"));
  EXPECT_THAT(put, StatusIs(absl::StatusCode::kNotFound,
                            HasSubstr("resourceslices.resource.k8s.io \"s1\" "
                                      "not found")));
  EXPECT_EQ(HttpStatusOf(put.status()), 404);
}

TEST_F(DraApiTest, PutUnderAnotherNameIsABadRequest) {
  server_.UpsertResourceSlice(Slice("s1"));
  absl::StatusOr<json> put = client_->Put(ResourceSlicePath("s1"), Slice("s2"));
  EXPECT_EQ(HttpStatusOf(put.status()), 400);
  EXPECT_THAT(put.status().message(),
              HasSubstr("does not match the name on the URL"));
}

TEST_F(DraApiTest, DeleteRemovesTheSliceAndASecondOneIsNotFound) {
  server_.UpsertResourceSlice(Slice("s1"));
  EXPECT_OK(client_->Delete(ResourceSlicePath("s1")));
  EXPECT_FALSE(server_.GetResourceSlice("s1").has_value());
  absl::Status again = client_->Delete(ResourceSlicePath("s1"));
  EXPECT_THAT(again, StatusIs(absl::StatusCode::kNotFound,
                              HasSubstr("DELETE /apis/resource.k8s.io/v1/"
                                        "resourceslices/s1: HTTP 404")));
  EXPECT_EQ(HttpStatusOf(again), 404);
  EXPECT_EQ(server_.request_counts().slice_deletes, 2);
}

TEST_F(DraApiTest, DeleteOfACollectionTakesItsSelector) {
  server_.UpsertResourceSlice(Slice("a", "node-1"));
  server_.UpsertResourceSlice(Slice("b", "node-2"));
  server_.UpsertResourceSlice(Slice("c", "node-1", "other.example.com"));
  EXPECT_OK(client_->Delete(WithQuery(
      ResourceSlicesPath(),
      {{"fieldSelector",
        absl::StrCat("spec.nodeName=node-1,spec.driver=", kDriver)}})));
  std::vector<std::string> left;
  for (const json& slice : server_.ResourceSlices()) {
    left.push_back(slice["metadata"]["name"]);
  }
  EXPECT_THAT(left, ElementsAre("b", "c"));
}

// ---- ResourceSlices --------------------------------------------------------

TEST_F(DraApiTest, PostCreatesASliceOnceByName) {
  absl::StatusOr<json> created =
      client_->Post(ResourceSlicesPath(), Slice("s1"));
  ASSERT_OK(created);
  EXPECT_EQ((*created)["kind"], "ResourceSlice");
  EXPECT_EQ((*created)["apiVersion"], "resource.k8s.io/v1");
  EXPECT_FALSE((*created)["metadata"]["uid"].get<std::string>().empty());
  EXPECT_FALSE((*created)["metadata"].contains("namespace"));
  absl::StatusOr<json> again = client_->Post(ResourceSlicesPath(), Slice("s1"));
  EXPECT_TRUE(IsConflict(again.status()));
  EXPECT_THAT(again.status().message(),
              HasSubstr("resourceslices.resource.k8s.io \"s1\" already "
                        "exists"));
  EXPECT_THAT(server_.ResourceSlices(), SizeIs(1));
  EXPECT_EQ(server_.request_counts().slice_creates, 2);
}

TEST_F(DraApiTest, GenerateNameGetsARandomSuffix) {
  json slice = Slice("");
  slice["metadata"] = {{"generateName", "node-1-gpu.deviceshare.io-"}};
  absl::StatusOr<json> first = client_->Post(ResourceSlicesPath(), slice);
  absl::StatusOr<json> second = client_->Post(ResourceSlicesPath(), slice);
  ASSERT_OK(first);
  ASSERT_OK(second);
  const std::string name = (*first)["metadata"]["name"];
  EXPECT_THAT(name, MatchesRegex("node-1-gpu\\.deviceshare\\.io-[b-z2-9]{5}"));
  EXPECT_NE((*second)["metadata"]["name"], name);
  EXPECT_OK(client_->Get(ResourceSlicePath(name)));
}

TEST_F(DraApiTest, AnInvalidSliceIsRejectedWith422InTheServersWords) {
  json slice = Slice("x");
  json& devices = slice["spec"]["devices"];
  devices = json::array(
      {Device("gpu-0"), Device("gpu-1"), Device("gpu-2"), Device("GPU_0")});
  absl::StatusOr<json> created = client_->Post(ResourceSlicesPath(), slice);
  EXPECT_THAT(
      created,
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("ResourceSlice.resource.k8s.io \"x\" is invalid: "
                         "spec.devices[3].name: Invalid value: \"GPU_0\": a "
                         "lowercase RFC 1123 label must consist of lower case "
                         "alphanumeric characters or '-', and must start and "
                         "end with an alphanumeric character (e.g. "
                         "'my-name',  or '123-abc', regex used for validation "
                         "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")));
  EXPECT_EQ(HttpStatusOf(created.status()), 422);
  EXPECT_FALSE(server_.GetResourceSlice("x").has_value());
  EXPECT_THAT(server_.RejectedSliceWrites(),
              ElementsAre(StartsWith("ResourceSlice.resource.k8s.io \"x\"")));
  EXPECT_EQ(server_.request_counts().slice_invalid, 1);

  // The Status carries the causes, as a real server's does.
  httplib::Client raw("127.0.0.1", server_.port());
  httplib::Result result =
      raw.Post(ResourceSlicesPath(), slice.dump(), "application/json");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 422);
  const json status = json::parse(result->body);
  EXPECT_EQ(status["reason"], "Invalid");
  EXPECT_EQ(status["details"]["kind"], "ResourceSlice");
  EXPECT_EQ(status["details"]["group"], "resource.k8s.io");
  EXPECT_EQ(status["details"]["causes"][0]["field"], "spec.devices[3].name");
  EXPECT_EQ(status["details"]["causes"][0]["reason"], "FieldValueInvalid");
}

TEST_F(DraApiTest, SeveralErrorsAreListedInBrackets) {
  json slice = Slice("x");
  slice["spec"]["pool"]["resourceSliceCount"] = 0;
  slice["spec"]["devices"][0]["name"] = "gpu-0";
  slice["spec"]["devices"].push_back(Device("gpu-0"));
  absl::StatusOr<json> created = client_->Post(ResourceSlicesPath(), slice);
  EXPECT_THAT(created.status().message(),
              HasSubstr("is invalid: [spec.pool.resourceSliceCount: Invalid "
                        "value: 0: must be greater than zero, "
                        "spec.devices[1]: Duplicate value: \"gpu-0\"]"));
}

TEST_F(DraApiTest, AnInvalidPatchOrPutChangesNothing) {
  const json stored = server_.UpsertResourceSlice(Slice("s1"));
  absl::StatusOr<json> patched = client_->MergePatch(
      ResourceSlicePath("s1"),
      {{"spec", {{"devices", json::array({{{"name", "Bad_Name"}}})}}}});
  EXPECT_EQ(HttpStatusOf(patched.status()), 422);
  json update = Slice("s1");
  update["spec"]["driver"] = "other.example.com";  // immutable
  absl::StatusOr<json> put = client_->Put(ResourceSlicePath("s1"), update);
  EXPECT_EQ(HttpStatusOf(put.status()), 422);
  EXPECT_THAT(put.status().message(),
              HasSubstr("spec.driver: Invalid value: \"other.example.com\": "
                        "field is immutable"));
  EXPECT_EQ(server_.GetResourceSlice("s1"), stored);
  EXPECT_THAT(server_.Patches(), IsEmpty());
}

TEST_F(DraApiTest, AValidMergePatchIsApplied) {
  server_.UpsertResourceSlice(Slice("s1"));
  absl::StatusOr<json> patched = client_->MergePatch(
      ResourceSlicePath("s1"), {{"spec", {{"pool", {{"generation", 7}}}}}});
  ASSERT_OK(patched);
  EXPECT_EQ((*patched)["spec"]["pool"]["generation"], 7);
  EXPECT_EQ((*patched)["spec"]["pool"]["name"], "node-1");
  EXPECT_EQ(server_.request_counts().slice_patches, 1);
}

TEST_F(DraApiTest, ListsSelectByNodeNameAndDriver) {
  server_.UpsertResourceSlice(Slice("a", "node-1"));
  server_.UpsertResourceSlice(Slice("b", "node-2"));
  json labelled = Slice("c", "node-1", "other.example.com");
  labelled["metadata"]["labels"] = {{"tier", "x"}};
  server_.UpsertResourceSlice(labelled);

  absl::StatusOr<json> all = client_->Get(ResourceSlicesPath());
  ASSERT_OK(all);
  EXPECT_EQ((*all)["kind"], "ResourceSliceList");
  EXPECT_EQ((*all)["apiVersion"], "resource.k8s.io/v1");
  EXPECT_THAT(ItemNames(*all), ElementsAre("a", "b", "c"));
  absl::StatusOr<json> node1 = client_->Get(WithQuery(
      ResourceSlicesPath(), {{"fieldSelector", "spec.nodeName=node-1"}}));
  EXPECT_THAT(ItemNames(*node1), ElementsAre("a", "c"));
  absl::StatusOr<json> both = client_->Get(WithQuery(
      ResourceSlicesPath(),
      {{"fieldSelector",
        absl::StrCat("spec.nodeName=node-1,spec.driver=", kDriver)}}));
  EXPECT_THAT(ItemNames(*both), ElementsAre("a"));
  absl::StatusOr<json> labels = client_->Get(
      WithQuery(ResourceSlicesPath(), {{"labelSelector", "tier=x"}}));
  EXPECT_THAT(ItemNames(*labels), ElementsAre("c"));

  absl::StatusOr<json> unknown = client_->Get(WithQuery(
      ResourceSlicesPath(), {{"fieldSelector", "spec.pool.name=node-1"}}));
  EXPECT_EQ(HttpStatusOf(unknown.status()), 400);
  EXPECT_THAT(unknown.status().message(),
              HasSubstr("field label not supported: spec.pool.name"));

  const RequestCounts counts = server_.request_counts();
  EXPECT_EQ(counts.slice_lists, 4);  // the rejected selector is not counted
  EXPECT_EQ(counts.lists, 0);        // pods and nodes only
}

TEST_F(DraApiTest, WatchOfSlicesSeesEveryChange) {
  server_.UpsertResourceSlice(Slice("a"));
  std::vector<std::string> seen;
  std::thread writer;
  EXPECT_OK(client_->Watch(
      WithQuery(ResourceSlicesPath(),
                {{"watch", "true"}, {"fieldSelector", "spec.nodeName=node-1"}}),
      [&](const json& event) {
        seen.push_back(event["type"].get<std::string>() + " " +
                       event["object"]["metadata"]["name"].get<std::string>());
        if (seen.size() == 1) {
          writer = std::thread([&] {
            EXPECT_OK(client_->Post(ResourceSlicesPath(), Slice("b")));
            EXPECT_OK(
                client_->Post(ResourceSlicesPath(), Slice("other", "node-2")));
            EXPECT_OK(client_->MergePatch(
                ResourceSlicePath("a"),
                {{"spec", {{"pool", {{"generation", 2}}}}}}));
            EXPECT_OK(client_->Delete(ResourceSlicePath("b")));
          });
        }
        return seen.size() < 4;
      }));
  writer.join();
  EXPECT_THAT(seen,
              ElementsAre("ADDED a", "ADDED b", "MODIFIED a", "DELETED b"));
  EXPECT_EQ(server_.request_counts().slice_watches, 1);
}

TEST_F(DraApiTest, InjectedSliceWriteFailuresComeFirst) {
  server_.FailNextResourceSliceWrites(2, 503);
  absl::StatusOr<json> first = client_->Post(ResourceSlicesPath(), Slice("s1"));
  EXPECT_EQ(HttpStatusOf(first.status()), 503);
  absl::Status second = client_->Delete(ResourceSlicePath("s1"));
  EXPECT_EQ(HttpStatusOf(second), 503);
  EXPECT_THAT(server_.ResourceSlices(), IsEmpty());
  EXPECT_OK(client_->Post(ResourceSlicesPath(), Slice("s1")));
  EXPECT_EQ(server_.request_counts().slice_creates, 2);
}

// ---- ResourceClaims ---------------------------------------------------------

TEST_F(DraApiTest, ClaimsAreListedPerNamespaceOrAll) {
  server_.UpsertResourceClaim(Claim("a", "c1"));
  server_.UpsertResourceClaim(Claim("b", "c2"));
  absl::StatusOr<json> all = client_->Get(ResourceClaimsPath());
  ASSERT_OK(all);
  EXPECT_EQ((*all)["kind"], "ResourceClaimList");
  EXPECT_THAT(ItemNames(*all), ElementsAre("c1", "c2"));
  absl::StatusOr<json> in_b = client_->Get(ResourceClaimsPath("b"));
  EXPECT_THAT(ItemNames(*in_b), ElementsAre("c2"));
  absl::StatusOr<json> one = client_->Get(ResourceClaimPath("a", "c1"));
  ASSERT_OK(one);
  EXPECT_EQ((*one)["kind"], "ResourceClaim");
  EXPECT_EQ((*one)["metadata"]["namespace"], "a");
  EXPECT_EQ(HttpStatusOf(client_->Get(ResourceClaimPath("b", "c1")).status()),
            404);
  const RequestCounts counts = server_.request_counts();
  EXPECT_EQ(counts.claim_lists, 2);
  EXPECT_EQ(counts.claim_gets, 2);
}

TEST_F(DraApiTest, AStatusPatchChangesOnlyTheStatus) {
  server_.UpsertResourceClaim(Claim("a", "c1"));
  absl::StatusOr<json> patched = client_->MergePatch(
      ResourceClaimStatusPath("a", "c1"),
      {{"spec", nullptr},
       // Valid as a real server sees it: a reservation needs an allocation
       // and names the consumer whole.
       {"status",
        {{"allocation", {{"devices", {{"results", json::array()}}}}},
         {"reservedFor", json::array({{{"resource", "pods"},
                                       {"name", "p1"},
                                       {"uid", "u1"}}})}}}});
  ASSERT_OK(patched);
  EXPECT_EQ((*patched)["status"]["reservedFor"][0]["name"], "p1");
  EXPECT_TRUE((*patched)["spec"].is_object());
  EXPECT_EQ(server_.GetResourceClaim("a", "c1").value()["status"],
            (*patched)["status"]);
}

TEST_F(DraApiTest, AnObjectPatchKeepsTheStatus) {
  json claim = Claim("a", "c1");
  claim["status"] = {{"allocation", {{"devices", json::object()}}}};
  server_.UpsertResourceClaim(claim);
  absl::StatusOr<json> patched = client_->MergePatch(
      ResourceClaimPath("a", "c1"),
      {{"metadata", {{"annotations", {{"k", "v"}}}}}, {"status", nullptr}});
  ASSERT_OK(patched);
  EXPECT_EQ((*patched)["metadata"]["annotations"]["k"], "v");
  EXPECT_EQ((*patched)["status"], claim["status"]);
  EXPECT_EQ(server_.request_counts().claim_patches, 1);
}

TEST_F(DraApiTest, AStatusPutIsConditionalOnTheResourceVersion) {
  const json stored = server_.UpsertResourceClaim(Claim("a", "c1"));
  json update = stored;
  update["status"] = {{"devices", json::array({{{"driver", kDriver}}})}};
  update["spec"] = json::object();  // ignored on /status
  absl::StatusOr<json> put =
      client_->Put(ResourceClaimStatusPath("a", "c1"), update);
  ASSERT_OK(put);
  EXPECT_EQ((*put)["status"], update["status"]);
  EXPECT_EQ((*put)["spec"], stored["spec"]);
  absl::StatusOr<json> stale =
      client_->Put(ResourceClaimStatusPath("a", "c1"), update);
  EXPECT_TRUE(IsConflict(stale.status())) << stale.status();
  EXPECT_EQ(server_.request_counts().claim_status_updates, 2);
}

TEST_F(DraApiTest, TestSideClaimMethods) {
  server_.UpsertResourceClaim(Claim("a", "c1"));
  EXPECT_TRUE(server_.GetResourceClaim("a", "c1").has_value());
  EXPECT_TRUE(server_.DeleteResourceClaim("a", "c1"));
  EXPECT_FALSE(server_.DeleteResourceClaim("a", "c1"));
  EXPECT_FALSE(server_.GetResourceClaim("a", "c1").has_value());
}

TEST_F(DraApiTest, WatchOfClaimsInANamespace) {
  server_.UpsertResourceClaim(Claim("a", "c1"));
  server_.UpsertResourceClaim(Claim("b", "c2"));
  std::vector<std::string> seen;
  EXPECT_OK(client_->Watch(
      WithQuery(ResourceClaimsPath("b"), {{"watch", "true"}}),
      [&](const json& event) {
        seen.push_back(event["type"].get<std::string>() + " " +
                       event["object"]["metadata"]["name"].get<std::string>());
        return false;
      }));
  EXPECT_THAT(seen, ElementsAre("ADDED c2"));
  EXPECT_EQ(server_.request_counts().claim_watches, 1);
}

}  // namespace
}  // namespace deviceshare::testing
