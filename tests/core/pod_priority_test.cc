#include "deviceshare/k8s/pod_priority.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using Json = nlohmann::json;

MATCHER_P(IsOkAndHolds, value, "") {
  if (!arg.ok()) {
    *result_listener << "status: " << arg.status();
    return false;
  }
  *result_listener << "holds " << *arg;
  return *arg == value;
}

Json ClassObject(const std::string& name, Json value,
                 bool global_default = false) {
  Json object = {{"apiVersion", "scheduling.k8s.io/v1"},
                 {"kind", "PriorityClass"},
                 {"metadata", {{"name", name}}},
                 {"value", std::move(value)}};
  if (global_default) object["globalDefault"] = true;
  return object;
}

Json PodWith(Json spec) {
  return Json{{"kind", "Pod"},
              {"metadata", {{"name", "a"}, {"namespace", "team"}}},
              {"spec", std::move(spec)}};
}

PriorityClasses ClassesOf(std::initializer_list<Json> objects) {
  PriorityClasses classes;
  for (const Json& object : objects) {
    absl::Status added = classes.Add(object);
    EXPECT_TRUE(added.ok()) << added;
  }
  return classes;
}

TEST(PriorityClassTest, ReadsValueGlobalDefaultAndPreemptionPolicy) {
  Json object = ClassObject("batch", 100, /*global_default=*/true);
  object["preemptionPolicy"] = "Never";
  absl::StatusOr<PriorityClass> pc = ParsePriorityClass(object);
  ASSERT_OK(pc);
  EXPECT_EQ(*pc, (PriorityClass{"batch", 100, true, false}));
  absl::StatusOr<PriorityClass> low =
      ParsePriorityClass(ClassObject("low", -5));
  ASSERT_OK(low);
  EXPECT_EQ(*low, (PriorityClass{"low", -5, false, true}));
}

TEST(PriorityClassTest, BadObjectsNameTheFieldAndValue) {
  EXPECT_THAT(ParsePriorityClass(ClassObject("x", "high")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PriorityClass x: value: \"high\" is not a "
                                 "whole number")));
  EXPECT_THAT(ParsePriorityClass(ClassObject("x", 1.5)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("value: 1.5 is not a whole number")));
  EXPECT_THAT(ParsePriorityClass(ClassObject("x", int64_t{3000000000})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("value: 3000000000 is outside int32")));
  EXPECT_THAT(ParsePriorityClass(ClassObject("x", 1000000001)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("value: 1000000001 is above 1000000000")));
  Json no_value = ClassObject("x", 1);
  no_value.erase("value");
  EXPECT_THAT(ParsePriorityClass(no_value),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PriorityClass x: value is missing")));
  Json no_name = ClassObject("x", 1);
  no_name.erase("metadata");
  EXPECT_THAT(ParsePriorityClass(no_name),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("metadata.name is missing")));
  Json bad_default = ClassObject("x", 1);
  bad_default["globalDefault"] = "yes";
  EXPECT_THAT(ParsePriorityClass(bad_default),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("globalDefault: \"yes\" is not true or "
                                 "false")));
  Json bad_policy = ClassObject("x", 1);
  bad_policy["preemptionPolicy"] = "Sometimes";
  EXPECT_THAT(ParsePriorityClass(bad_policy),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("preemptionPolicy: \"Sometimes\" is not "
                                 "PreemptLowerPriority or Never")));
}

TEST(PriorityClassTest, SystemNamesAreReservedButMayBeRestated) {
  EXPECT_THAT(
      ParsePriorityClass(ClassObject("system-mine", 5)),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("reserved")));
  EXPECT_THAT(ParsePriorityClass(ClassObject("system-node-critical", 7)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("keeps value 2000001000")));
  PriorityClasses classes = ClassesOf(
      {ClassObject("system-cluster-critical", kSystemClusterCriticalPriority)});
  EXPECT_EQ(classes.all().size(), 2u);
  ASSERT_NE(classes.Find("system-node-critical"), nullptr);
  EXPECT_EQ(classes.Find("system-node-critical")->value, 2000001000);
}

TEST(PriorityClassesTest, DuplicatesAndTwoGlobalDefaultsAreRefused) {
  PriorityClasses classes =
      ClassesOf({ClassObject("high", 1000), ClassObject("base", 10, true)});
  EXPECT_THAT(classes.Add(ClassObject("high", 5)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PriorityClass high is defined twice")));
  EXPECT_THAT(
      classes.Add(ClassObject("other", 1, true)),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("PriorityClass other: globalDefault"),
                     HasSubstr("PriorityClass base is already the global "
                               "default"))));
  // The refused objects left nothing behind.
  EXPECT_EQ(classes.Find("other"), nullptr);
  EXPECT_EQ(classes.Find("high")->value, 1000);
  ASSERT_NE(classes.global_default(), nullptr);
  EXPECT_EQ(classes.global_default()->name, "base");
}

TEST(PodPriorityTest, SpecPriorityThenClassThenGlobalDefaultThenZero) {
  const PriorityClasses none;
  const PriorityClasses classes =
      ClassesOf({ClassObject("high", 1000), ClassObject("base", 10, true)});
  // spec.priority wins: admission wrote it from the class at creation.
  EXPECT_THAT(
      PodPriority(PodWith({{"priority", 7}, {"priorityClassName", "high"}}),
                  classes),
      IsOkAndHolds(7));
  EXPECT_THAT(PodPriority(PodWith({{"priorityClassName", "high"}}), classes),
              IsOkAndHolds(1000));
  EXPECT_THAT(
      PodPriority(PodWith({{"priorityClassName", "system-node-critical"}}),
                  none),
      IsOkAndHolds(kSystemNodeCriticalPriority));
  EXPECT_THAT(PodPriority(PodWith(Json::object()), classes), IsOkAndHolds(10));
  EXPECT_THAT(PodPriority(PodWith({{"priorityClassName", ""}}), classes),
              IsOkAndHolds(10));
  EXPECT_THAT(PodPriority(PodWith(Json::object()), none), IsOkAndHolds(0));
  EXPECT_THAT(PodPriority(Json{{"kind", "Pod"}}, none), IsOkAndHolds(0));
}

TEST(PodPriorityTest, UnknownClassAndBadPriorityAreErrorsNamingThem) {
  EXPECT_THAT(
      PodPriority(PodWith({{"priorityClassName", "gold"}}), PriorityClasses()),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("pod team/a: spec.priorityClassName: \"gold\" "
                               "names no PriorityClass"),
                     HasSubstr("admission"))));
  EXPECT_THAT(PodPriority(PodWith({{"priority", "high"}}), PriorityClasses()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("pod team/a: spec.priority: \"high\" is not "
                                 "a whole number")));
  EXPECT_THAT(
      PodPriority(PodWith({{"priorityClassName", 3}}), PriorityClasses()),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("spec.priorityClassName: 3 is not a "
                         "string")));
}

TEST(PodPreemptsTest, SpecThenClassThenDefaultPolicy) {
  Json never = ClassObject("never", 500);
  never["preemptionPolicy"] = "Never";
  const PriorityClasses classes = ClassesOf({never, ClassObject("high", 900)});
  EXPECT_THAT(PodPreempts(PodWith({{"priorityClassName", "never"}}), classes),
              IsOkAndHolds(false));
  EXPECT_THAT(
      PodPreempts(PodWith({{"priorityClassName", "never"},
                           {"preemptionPolicy", "PreemptLowerPriority"}}),
                  classes),
      IsOkAndHolds(true));
  EXPECT_THAT(PodPreempts(PodWith({{"priorityClassName", "high"},
                                   {"preemptionPolicy", "Never"}}),
                          classes),
              IsOkAndHolds(false));
  EXPECT_THAT(PodPreempts(PodWith(Json::object()), classes),
              IsOkAndHolds(true));
  EXPECT_THAT(PodPreempts(PodWith({{"priorityClassName", "gold"}}), classes),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("gold")));
}

}  // namespace
}  // namespace deviceshare
