#include "deviceshare/model/model_match.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace deviceshare {
namespace {

// HAMi's and Volcano's rule for a model list: a case-insensitive substring
// of the registered type.
TEST(ModelMatchTest, ANameIsACaseInsensitiveSubstringOfTheType) {
  const std::string type = "NVIDIA-NVIDIA A100-SXM4-80GB";
  EXPECT_TRUE(ModelNames(type, "A100"));
  EXPECT_TRUE(ModelNames(type, "a100-sxm4"));
  EXPECT_TRUE(ModelNames(type, ""));
  EXPECT_FALSE(ModelNames(type, "H100"));
  EXPECT_FALSE(ModelNames(type, "A100-PCIE"));
  EXPECT_TRUE(ModelNames("", ""));
  EXPECT_FALSE(ModelNames("", "A100"));
}

TEST(ModelMatchTest, AnyOfAListAndNoneForAnEmptyList) {
  const std::string type = "NVIDIA-Tesla T4";
  EXPECT_TRUE(ModelNamesAny(type, {"A100", "tesla t4"}));
  EXPECT_FALSE(ModelNamesAny(type, {"A100", "V100"}));
  EXPECT_FALSE(ModelNamesAny(type, {}));
}

}  // namespace
}  // namespace deviceshare
