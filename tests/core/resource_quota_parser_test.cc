#include "deviceshare/k8s/resource_quota_parser.h"

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

Json QuotaWith(const Json& hard, const std::string& ns = "team-a") {
  return Json{{"apiVersion", "v1"},
              {"kind", "ResourceQuota"},
              {"metadata", {{"name", "gpu"}, {"namespace", ns}}},
              {"spec", {{"hard", hard}}}};
}

// HAMi's quota.go addQuotaLocked: limits.<memory resource> and
// limits.<cores resource>, whole numbers; memoryFactor scales the memory.
TEST(ResourceQuotaParserTest, ReadsTheGpuLimitsAsHamiDoes) {
  DeviceConfig config;
  auto quota =
      ParseResourceQuota(QuotaWith({{"limits.nvidia.com/gpumem", "20000"},
                                    {"limits.nvidia.com/gpucores", 300},
                                    {"requests.nvidia.com/gpumem", "1"},
                                    {"cpu", "8"}}),
                         config);
  ASSERT_OK(quota);
  ASSERT_TRUE(quota->has_value());
  EXPECT_EQ((*quota)->namespace_name, "team-a");
  EXPECT_EQ((*quota)->name, "gpu");
  EXPECT_EQ((*quota)->limits.memory_mib, 20000);
  EXPECT_EQ((*quota)->limits.cores, 300);

  config.memory_factor = 2;
  config.resource_core_name = "hami.io/gpucores";
  quota = ParseResourceQuota(QuotaWith({{"limits.nvidia.com/gpumem", "1k"},
                                        {"limits.nvidia.com/gpucores", "50"}}),
                             config);
  ASSERT_OK(quota);
  EXPECT_EQ((*quota)->limits.memory_mib, 2000);
  EXPECT_FALSE((*quota)->limits.cores.has_value());  // renamed resource
}

TEST(ResourceQuotaParserTest, NoGpuLimitIsNoGpuQuota) {
  const DeviceConfig config;
  for (const Json& hard : {Json{{"cpu", "8"}}, Json::object(),
                           Json{{"limits.nvidia.com/gpumem", "1.5"}},
                           Json{{"limits.nvidia.com/gpumem", "500m"}},
                           // An unquoted YAML 1.5 is a JSON number, read
                           // as the same quantity.
                           Json{{"limits.nvidia.com/gpumem", 1.5}}}) {
    SCOPED_TRACE(hard.dump());
    auto quota = ParseResourceQuota(QuotaWith(hard), config);
    ASSERT_OK(quota);
    EXPECT_FALSE(quota->has_value());
  }
  Json no_spec = QuotaWith(Json::object());
  no_spec.erase("spec");
  auto quota = ParseResourceQuota(no_spec, config);
  ASSERT_OK(quota);
  EXPECT_FALSE(quota->has_value());
  // A zero limit is a limit.
  quota = ParseResourceQuota(QuotaWith({{"limits.nvidia.com/gpumem", "0"}}),
                             config);
  ASSERT_OK(quota);
  ASSERT_TRUE(quota->has_value());
  EXPECT_EQ((*quota)->limits.memory_mib, 0);
}

TEST(ResourceQuotaParserTest, MalformedNamesTheFieldAndValue) {
  const DeviceConfig config;
  EXPECT_THAT(ParseResourceQuota(
                  QuotaWith({{"limits.nvidia.com/gpumem", "-5"}}), config),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("team-a/gpu"),
                             HasSubstr("spec.hard.limits.nvidia.com/gpumem"),
                             HasSubstr("-5"))));
  EXPECT_THAT(
      ParseResourceQuota(QuotaWith({{"limits.nvidia.com/gpucores", "lots"}}),
                         config),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"lots\"")));
  EXPECT_THAT(ParseResourceQuota(
                  QuotaWith({{"limits.nvidia.com/gpucores", true}}), config),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("is not a quantity")));
  EXPECT_THAT(
      ParseResourceQuota(QuotaWith("x"), config),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("spec.hard"), HasSubstr("is not a mapping"))));
  Json nameless = QuotaWith(Json::object());
  nameless["metadata"].erase("name");
  EXPECT_THAT(ParseResourceQuota(nameless, config),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("metadata.name is missing")));
}

}  // namespace
}  // namespace deviceshare
