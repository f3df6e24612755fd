// The in-memory API server's rules for a ResourceClaim's status writes
// (testing/resource_claim_rules.h), worded as Kubernetes 1.37 words them,
// and the 422 a status PUT gets for breaking one. Found missing when
// serve's allocations were first written to a real API server
// (tests/cluster e2e): the in-memory server took any status.
#include "testing/resource_claim_rules.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "testing/fake_api_server.h"

namespace deviceshare::testing {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

json Claim() {
  return json::parse(R"({
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
    "metadata": {"name": "c", "namespace": "default"},
    "spec": {"devices": {"requests": [
      {"name": "gpu", "exactly": {"deviceClassName": "gpu"}},
      {"name": "any", "firstAvailable": [{"name": "big"}, {"name": "small"}]}
    ]}}})");
}

json Allocation(const std::string& request) {
  return {{"devices",
           {{"results",
             {{{"request", request},
               {"driver", "gpu.deviceshare.io"},
               {"pool", "n1"},
               {"device", "gpu-0"}}}}}}};
}

json Consumer(const std::string& uid) {
  return {{"resource", "pods"}, {"name", "p-" + uid}, {"uid", uid}};
}

std::vector<std::string> Messages(const json& claim, const json& previous) {
  std::vector<std::string> out;
  for (const FieldError& error :
       ValidateResourceClaimStatusUpdate(claim, previous)) {
    out.push_back(error.ToString());
  }
  return out;
}

TEST(ResourceClaimRulesTest, AValidAllocationAndReservationPass) {
  json claim = Claim();
  claim["status"]["allocation"] = Allocation("gpu");
  claim["status"]["reservedFor"] = {Consumer("u1")};
  EXPECT_THAT(Messages(claim, Claim()), IsEmpty());
  json sub = Claim();
  sub["status"]["allocation"] = Allocation("any/small");
  EXPECT_THAT(Messages(sub, Claim()), IsEmpty());
  // Removing the allocation (and the reservations) is allowed.
  EXPECT_THAT(Messages(Claim(), claim), IsEmpty());
}

TEST(ResourceClaimRulesTest, ErrorsAreWordedAsTheServerWordsThem) {
  json claim = Claim();
  claim["status"]["reservedFor"] = {Consumer("u1")};
  EXPECT_THAT(Messages(claim, Claim()),
              ElementsAre("status.reservedFor: Forbidden: may not be "
                          "specified when `allocated` is not set"));
  claim["status"]["allocation"] = Allocation("nope");
  claim["status"]["reservedFor"] = {Consumer("u1"), Consumer("u1")};
  EXPECT_THAT(
      Messages(claim, Claim()),
      ElementsAre(
          "status.reservedFor[1]: Duplicate value: "
          "{\"name\":\"p-u1\",\"resource\":\"pods\",\"uid\":\"u1\"}",
          "status.allocation.devices.results[0].request: Invalid value: "
          "\"nope\": must be the name of a request in the claim or the name "
          "of a request and a subrequest separated by '/'"));
  json stored = Claim();
  stored["status"]["allocation"] = Allocation("gpu");
  json changed = stored;
  changed["status"]["allocation"]["devices"]["results"][0]["device"] = "gpu-1";
  ASSERT_EQ(Messages(changed, stored).size(), 1u);
  EXPECT_THAT(Messages(changed, stored)[0],
              ::testing::HasSubstr("status.allocation: Invalid value: "));
  EXPECT_THAT(Messages(changed, stored)[0],
              ::testing::EndsWith(": field is immutable"));
  json many = stored;
  for (int i = 0; i < 257; ++i) {
    many["status"]["reservedFor"].push_back(Consumer(std::to_string(i)));
  }
  EXPECT_THAT(Messages(many, stored),
              ElementsAre("status.reservedFor: Too many: 257: must have at "
                          "most 256 items"));
}

TEST(ResourceClaimRulesTest, TheInMemoryServerRefusesAnInvalidStatusPut) {
  FakeApiServer api;
  json stored = api.UpsertResourceClaim(Claim());
  json write = stored;
  write["status"]["reservedFor"] = {Consumer("u1")};
  httplib::Client client("127.0.0.1", api.port());
  auto answer = client.Put(
      "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/c/status",
      write.dump(), "application/json");
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 422) << answer->body;
  EXPECT_THAT(answer->body,
              ::testing::HasSubstr("ResourceClaim.resource.k8s.io \\\"c\\\" is "
                                   "invalid: status.reservedFor: Forbidden"));
  write["status"]["allocation"] = Allocation("gpu");
  answer = client.Put(
      "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/c/status",
      write.dump(), "application/json");
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200) << answer->body;
}

}  // namespace
}  // namespace deviceshare::testing
