// The Eviction API as `defrag --apply` uses it: kube::EvictPod against the
// in-memory API server's PodDisruptionBudgets, and the label selectors
// that pick a budget's pods (kube/label_selector.h).
#include <memory>
#include <string>

#include "deviceshare/kube/api_client.h"
#include "deviceshare/kube/api_status.h"
#include "deviceshare/kube/eviction.h"
#include "deviceshare/kube/label_selector.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/fake_api_server.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::StatusIs;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Optional;

json RunningPod(const std::string& name, const std::string& app) {
  return {
      {"metadata",
       {{"name", name}, {"namespace", "default"}, {"labels", {{"app", app}}}}},
      {"spec", {{"nodeName", "n1"}}},
      {"status", {{"phase", "Running"}}}};
}

json Budget(const std::string& name, const std::string& app, int allowed) {
  return {{"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec", {{"selector", {{"matchLabels", {{"app", app}}}}}}},
          {"status", {{"disruptionsAllowed", allowed}}}};
}

class EvictionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto client = kube::ApiClient::Create(server_.kube_config());
    ASSERT_OK(client);
    client_ = *std::move(client);
  }
  testing::FakeApiServer server_;
  std::unique_ptr<kube::ApiClient> client_;
};

TEST_F(EvictionTest, PodWithoutBudgetIsDeleted) {
  server_.UpsertPod(RunningPod("a", "web"));
  ASSERT_OK(kube::EvictPod(*client_, "default", "a"));
  EXPECT_FALSE(server_.GetPod("default", "a").has_value());
  ASSERT_EQ(server_.Evictions().size(), 1u);
  EXPECT_EQ(server_.Evictions()[0]["kind"], "Eviction");
  EXPECT_EQ(server_.Evictions()[0]["apiVersion"], "policy/v1");
}

TEST_F(EvictionTest, BudgetAllowsItsDisruptionsThenRefuses) {
  server_.UpsertPod(RunningPod("a", "web"));
  server_.UpsertPod(RunningPod("b", "web"));
  server_.UpsertPodDisruptionBudget(Budget("web", "web", 1));
  ASSERT_OK(kube::EvictPod(*client_, "default", "a"));
  EXPECT_EQ(server_.GetPodDisruptionBudget("default", "web")
                ->at("status")["disruptionsAllowed"],
            0);
  absl::Status refused = kube::EvictPod(*client_, "default", "b");
  EXPECT_THAT(refused, StatusIs(absl::StatusCode::kUnavailable,
                                HasSubstr("violate the pod's disruption "
                                          "budget")));
  EXPECT_THAT(kube::HttpStatusOf(refused), Optional(429));
  EXPECT_TRUE(server_.GetPod("default", "b").has_value());
}

// Seen against the real API server (tests/cluster e2e, defrag): a budget
// whose latest edit the disruption controller has not observed refuses
// every eviction, whatever disruptionsAllowed says.
TEST_F(EvictionTest, AnUnobservedBudgetRefuses) {
  server_.UpsertPod(RunningPod("a", "web"));
  json budget = Budget("web", "web", 1);
  budget["metadata"]["generation"] = 2;
  budget["status"]["observedGeneration"] = 1;
  server_.UpsertPodDisruptionBudget(budget);
  absl::Status refused = kube::EvictPod(*client_, "default", "a");
  EXPECT_THAT(kube::HttpStatusOf(refused), Optional(429));
  EXPECT_TRUE(server_.GetPod("default", "a").has_value());
  budget["status"]["observedGeneration"] = 2;
  server_.UpsertPodDisruptionBudget(budget);
  ASSERT_OK(kube::EvictPod(*client_, "default", "a"));
}

TEST_F(EvictionTest, MissingPodIsNotFound) {
  EXPECT_THAT(kube::HttpStatusOf(kube::EvictPod(*client_, "default", "x")),
              Optional(404));
}

TEST_F(EvictionTest, BudgetsAreListed) {
  server_.UpsertPodDisruptionBudget(Budget("web", "web", 2));
  absl::StatusOr<json> list =
      client_->Get("/apis/policy/v1/poddisruptionbudgets");
  ASSERT_OK(list);
  ASSERT_EQ((*list)["items"].size(), 1u);
  EXPECT_EQ((*list)["items"][0]["status"]["disruptionsAllowed"], 2);
}

MATCHER_P(Selects, want, "") { return arg.ok() && *arg == want; }

TEST(LabelSelectorTest, MatchLabelsAndExpressions) {
  const json labels = {{"app", "web"}, {"tier", "gpu"}};
  EXPECT_THAT(kube::SelectorMatches(json::object(), labels), Selects(true));
  EXPECT_THAT(kube::SelectorMatches(json(), labels), Selects(false));
  EXPECT_THAT(
      kube::SelectorMatches({{"matchLabels", {{"app", "web"}}}}, labels),
      Selects(true));
  EXPECT_THAT(kube::SelectorMatches({{"matchLabels", {{"app", "db"}}}}, labels),
              Selects(false));
  auto expression = [](const std::string& key, const std::string& op,
                       json values = json()) {
    json e = {{"key", key}, {"operator", op}};
    if (!values.is_null()) e["values"] = values;
    return json{{"matchExpressions", json::array({e})}};
  };
  EXPECT_THAT(
      kube::SelectorMatches(expression("tier", "In", {"gpu", "x"}), labels),
      Selects(true));
  EXPECT_THAT(
      kube::SelectorMatches(expression("tier", "NotIn", {"gpu"}), labels),
      Selects(false));
  EXPECT_THAT(kube::SelectorMatches(expression("zone", "NotIn", {"a"}), labels),
              Selects(true));
  EXPECT_THAT(kube::SelectorMatches(expression("zone", "Exists"), labels),
              Selects(false));
  EXPECT_THAT(kube::SelectorMatches(expression("zone", "DoesNotExist"), labels),
              Selects(true));
  EXPECT_THAT(kube::SelectorMatches(expression("app", "Like", {"w"}), labels),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("Like")));
  EXPECT_THAT(
      kube::SelectorMatches(expression("app", "In"), labels),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("values")));
}

}  // namespace
}  // namespace deviceshare
