// Tests of the pods file's priorities (input/pod_priorities.h through
// LoadPodObjectsYaml): PriorityClass objects anywhere in the file, running
// pods, the global default, and errors located at their document.
#include <string>

#include "deviceshare/config/device_config.h"
#include "deviceshare/input/pod_loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/input_text.h"
#include "testing/status_matchers.h"

namespace deviceshare::input {
namespace {

using ::deviceshare::testing::Docs;
using ::deviceshare::testing::PodYaml;
using ::deviceshare::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::StartsWith;

constexpr bool kResolve = true;  // resolve_priorities

std::string ClassYaml(const std::string& name, const std::string& rest) {
  return "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
         "metadata: {name: " +
         name + "}\n" + rest;
}

// PodYaml with `spec_lines` (indented two spaces) before the containers.
std::string PodWith(const std::string& name, const std::string& spec_lines) {
  std::string pod = PodYaml(name, "nvidia.com/gpu: 1");
  const size_t spec = pod.find("spec:\n") + 6;
  return pod.substr(0, spec) + spec_lines + pod.substr(spec);
}

TEST(PodPrioritiesTest, ClassesAnywhereInTheFileResolvePods) {
  auto loaded = LoadPodObjectsYaml(
      Docs({PodWith("a", "  priorityClassName: high\n"),
            PodWith("b", "  priority: -3\n"),
            PodWith("c", "  preemptionPolicy: Never\n"), PodWith("d", ""),
            ClassYaml("high", "value: 1000\n")}),
      "p.yaml", DeviceConfig(), kResolve);
  ASSERT_OK(loaded);
  EXPECT_EQ(loaded->priority_classes, 1);
  EXPECT_THAT(loaded->priorities,
              ElementsAre(Pair("default/a", PodPriorityInfo{1000, true}),
                          Pair("default/b", PodPriorityInfo{-3, true}),
                          Pair("default/c", PodPriorityInfo{0, false})));
}

TEST(PodPrioritiesTest, GlobalDefaultCoversPodsWithoutFieldsRunningOnesToo) {
  auto loaded = LoadPodObjectsYaml(
      Docs({PodWith("a", ""),
            PodYaml("old", "nvidia.com/gpu: 1",
                    "hami.io/vgpu-devices-allocated: 'GPU-0,NVIDIA,1,1:;', "
                    "hami.io/vgpu-node: n7"),
            PodWith("b", "  priority: 7\n"),
            ClassYaml("base", "value: 10\nglobalDefault: true\n")}),
      "p.yaml", DeviceConfig(), kResolve);
  ASSERT_OK(loaded);
  EXPECT_THAT(loaded->priorities,
              ElementsAre(Pair("default/a", PodPriorityInfo{10, true}),
                          Pair("default/b", PodPriorityInfo{7, true}),
                          Pair("default/old", PodPriorityInfo{10, true})));
}

TEST(PodPrioritiesTest, NoPriorityFieldsNoEntries) {
  auto loaded = LoadPodObjectsYaml(Docs({PodWith("a", "")}), "p.yaml",
                                   DeviceConfig(), kResolve);
  ASSERT_OK(loaded);
  EXPECT_THAT(loaded->priorities, IsEmpty());
  EXPECT_EQ(loaded->priority_classes, 0);
}

TEST(PodPrioritiesTest, ErrorsNameTheDocumentAndField) {
  EXPECT_THAT(
      LoadPodObjectsYaml(Docs({PodWith("a", ""), ClassYaml("x", "value: 1\n"),
                               ClassYaml("x", "value: 2\n")}),
                         "p.yaml", DeviceConfig(), kResolve),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(StartsWith("p.yaml: document 3"),
                     HasSubstr("PriorityClass x is defined twice"))));
  EXPECT_THAT(
      LoadPodObjectsYaml(Docs({PodWith("a", "  priorityClassName: gold\n")}),
                         "p.yaml", DeviceConfig(), kResolve),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(StartsWith("p.yaml: document 1 (line 1): pod default/a: "
                                "spec.priorityClassName: \"gold\""),
                     HasSubstr("names no PriorityClass"))));
  EXPECT_THAT(LoadPodObjectsYaml(ClassYaml("y", "value: big\n"), "p.yaml",
                                 DeviceConfig(), true),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PriorityClass y: value: \"big\" is not a "
                                 "whole number")));
}

// Without resolving, a pod naming a class the file lacks reads as before.
TEST(PodPrioritiesTest, UnresolvedPriorityFieldsAreNotLookedAt) {
  auto loaded =
      LoadPodObjectsYaml(Docs({PodWith("a", "  priorityClassName: gold\n"),
                               ClassYaml("high", "value: 1000\n")}),
                         "p.yaml", DeviceConfig());
  ASSERT_OK(loaded);
  EXPECT_THAT(loaded->priorities, IsEmpty());
  EXPECT_EQ(loaded->priority_classes, 1);
  EXPECT_EQ(loaded->pods.size(), 1u);
}

// PodDisruptionBudgets and pods' labels are kept for the preemptor, only
// when priorities are resolved.
TEST(PodPrioritiesTest, BudgetsAndLabelsAreKeptWhenResolving) {
  std::string labelled = PodWith("a", "");
  labelled.insert(labelled.find("  namespace:"), "  labels: {app: db}\n");
  const std::string text =
      Docs({labelled, PodWith("b", ""),
            "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: "
            "{name: guard}\nspec: {minAvailable: 1}\n"});
  auto resolved = LoadPodObjectsYaml(text, "p.yaml", DeviceConfig(), kResolve);
  ASSERT_OK(resolved);
  ASSERT_EQ(resolved->disruption_budgets.size(), 1u);
  EXPECT_EQ(resolved->disruption_budgets[0]["metadata"]["name"], "guard");
  ASSERT_EQ(resolved->pod_labels.size(), 1u);
  EXPECT_EQ(resolved->pod_labels.at("default/a"),
            nlohmann::json({{"app", "db"}}));
  auto plain = LoadPodObjectsYaml(text, "p.yaml", DeviceConfig());
  ASSERT_OK(plain);
  EXPECT_TRUE(plain->disruption_budgets.empty());
  EXPECT_TRUE(plain->pod_labels.empty());
  EXPECT_EQ(plain->pods.size(), 2u);
}

}  // namespace
}  // namespace deviceshare::input
