// Tests of simulate/disruption_budgets.h (how many of a budget's pods must
// stay up, as the disruption controller computes it) and of budgets in
// `simulate --preemption`: kept where they can be, broken only when no
// node offers a set within them, and then the fewest broken wins.
#include "deviceshare/simulate/disruption_budgets.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/simulate/simulate.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simulate_fixtures.h"
#include "testing/status_matchers.h"

namespace deviceshare::simulate {
namespace {

using ::deviceshare::testing::Docs;
using ::deviceshare::testing::Gpus;
using ::deviceshare::testing::PodYaml;
using ::deviceshare::testing::ShortCluster;
using ::deviceshare::testing::ShortNode;
using ::deviceshare::testing::SimulateJson;
using ::deviceshare::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using Json = nlohmann::json;

Json BudgetObject(const std::string& name, Json spec,
                  const std::string& ns = "default") {
  return Json{{"apiVersion", "policy/v1"},
              {"kind", "PodDisruptionBudget"},
              {"metadata", {{"name", name}, {"namespace", ns}}},
              {"spec", std::move(spec)}};
}

Json AppSelector(const std::string& app) {
  return Json{{"matchLabels", {{"app", app}}}};
}

TEST(DisruptionBudgetsTest, MinHealthyAsTheDisruptionControllerCountsIt) {
  const Json db = {{"app", "db"}};
  const Json web = {{"app", "web"}};
  std::vector<BudgetPod> pods = {
      {"d1", "default", &db},    {"d2", "default", &db},
      {"d3", "default", &db},    {"w1", "default", &web},
      {"other-ns", "team", &db}, {"bare", "default", nullptr}};
  std::vector<Json> budgets = {
      BudgetObject("a-min",
                   {{"selector", AppSelector("db")}, {"minAvailable", 2}}),
      BudgetObject("b-pct",
                   {{"selector", AppSelector("db")}, {"minAvailable", "50%"}}),
      BudgetObject("c-max",
                   {{"selector", AppSelector("db")}, {"maxUnavailable", 1}}),
      BudgetObject("d-maxpct", {{"selector", AppSelector("db")},
                                {"maxUnavailable", "34%"}}),
      BudgetObject("e-none", {{"selector", AppSelector("web")}}),
      BudgetObject("f-noselector", {{"minAvailable", 1}})};
  absl::StatusOr<BudgetGroups> groups = GroupPodsByBudget(budgets, pods);
  ASSERT_OK(groups);
  // Three db pods: 2; ceil(50% of 3) = 2; 3 - 1 = 2; 3 - ceil(1.02) = 1;
  // neither field: 0; a whole minAvailable stands as written, pods or not.
  EXPECT_THAT(
      groups->min_healthy,
      ElementsAre(Pair("default/a-min", 2), Pair("default/b-pct", 2),
                  Pair("default/c-max", 2), Pair("default/d-maxpct", 1),
                  Pair("default/e-none", 0), Pair("default/f-noselector", 1)));
  // Each db pod counts against the first budget by name; a pod of another
  // namespace or without labels against none.
  EXPECT_THAT(
      groups->group_of,
      ElementsAre(Pair("d1", "default/a-min"), Pair("d2", "default/a-min"),
                  Pair("d3", "default/a-min"), Pair("w1", "default/e-none")));
}

TEST(DisruptionBudgetsTest, BadBudgetsNameTheBudgetAndField) {
  EXPECT_THAT(
      GroupPodsByBudget(
          {BudgetObject("x", {{"minAvailable", 1}, {"maxUnavailable", 1}})},
          {}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("PodDisruptionBudget default/x: spec.minAvailable "
                         "and spec.maxUnavailable are both set")));
  EXPECT_THAT(
      GroupPodsByBudget({BudgetObject("x", {{"maxUnavailable", "half"}})}, {}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("PodDisruptionBudget default/x: spec.maxUnavailable: "
                         "\"half\" is not a whole number from 0 to "
                         "2147483647 or a percentage from 0% to 100%")));
  EXPECT_THAT(
      GroupPodsByBudget({BudgetObject("x", {{"minAvailable", -1}})}, {}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("spec.minAvailable: -1")));
  // Past the API server's ranges: refused, not wrapped or read as more
  // than every pod.
  EXPECT_THAT(
      GroupPodsByBudget({BudgetObject("x", {{"minAvailable", "150%"}})}, {}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("spec.minAvailable: \"150%\"")));
  EXPECT_THAT(GroupPodsByBudget(
                  {BudgetObject("x", {{"maxUnavailable", 2147483648LL}})}, {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.maxUnavailable: 2147483648")));
  EXPECT_THAT(GroupPodsByBudget({BudgetObject("x", {{"minAvailable", 1}}),
                                 BudgetObject("x", {{"minAvailable", 2}})},
                                {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("default/x is defined twice")));
}

// A pod pinned to GPU-<node>-0 with `memory_mib`, priority and labels.
std::string PinnedPod(const std::string& name, const std::string& node,
                      int memory_mib, int priority,
                      const std::string& app = "") {
  std::string pod = PodYaml(
      name, absl::StrCat("nvidia.com/gpu: 1, nvidia.com/gpumem: ", memory_mib),
      node.empty() ? ""
                   : absl::StrCat("nvidia.com/use-gpuuuid: GPU-", node, "-0"));
  pod.insert(pod.find("  containers:"),
             absl::StrCat("  priority: ", priority, "\n"));
  if (!app.empty()) {
    pod.insert(pod.find("  namespace:"),
               absl::StrCat("  labels: {app: ", app, "}\n"));
  }
  return pod;
}

constexpr char kGuard[] =
    "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: "
    "guard}\nspec:\n  minAvailable: 1\n  selector: {matchLabels: {app: db}}\n";

SimulateOptions WithPreemption() {
  SimulateOptions options;
  options.preemption = true;
  return options;
}

// n1 holds a db pod at 10 its budget may not lose (minAvailable 1 of 1),
// n2 a plain pod at 20. Without the budget n1 wins (lower highest victim
// priority); with it n1's only set breaks the budget, n2's breaks none.
TEST(DisruptionBudgetsTest, PreemptionGoesWhereNoBudgetBreaks) {
  const std::string cluster = ShortCluster(
      {ShortNode("n1", Gpus("n1", 1)), ShortNode("n2", Gpus("n2", 1))});
  const std::string pods = Docs({PinnedPod("db", "n1", 60000, 10, "db"),
                                 PinnedPod("plain", "n2", 60000, 20),
                                 PinnedPod("new", "", 50000, 100)});
  absl::StatusOr<nlohmann::ordered_json> unguarded =
      SimulateJson(cluster, pods, "", WithPreemption());
  ASSERT_OK(unguarded);
  EXPECT_EQ((*unguarded)["evictions"][0]["pod"], "default/db");
  absl::StatusOr<nlohmann::ordered_json> guarded =
      SimulateJson(cluster, Docs({kGuard, pods}), "", WithPreemption());
  ASSERT_OK(guarded);
  EXPECT_EQ((*guarded)["evictions"],
            nlohmann::ordered_json::parse(
                R"([{"pod": "default/plain", "node": "n2",
                     "for": "default/new"}])"));
}

// Budgets are best effort in preemption, as in kube-scheduler: when every
// set breaks one, the pod still preempts.
TEST(DisruptionBudgetsTest, PreemptionBreaksABudgetWhenNothingElseHelps) {
  absl::StatusOr<nlohmann::ordered_json> report =
      SimulateJson(ShortCluster({ShortNode("n1", Gpus("n1", 1))}),
                   Docs({kGuard, PinnedPod("db", "n1", 60000, 10, "db"),
                         PinnedPod("new", "", 50000, 100)}),
                   "", WithPreemption());
  ASSERT_OK(report);
  EXPECT_EQ((*report)["evictions"][0]["pod"], "default/db");
}

}  // namespace
}  // namespace deviceshare::simulate
