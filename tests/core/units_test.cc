#include "deviceshare/model/units.h"

#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(ParseQuantityMilliTest, KubernetesForms) {
  EXPECT_EQ(*ParseQuantityMilli("2", "f"), 2000);
  EXPECT_EQ(*ParseQuantityMilli("500m", "f"), 500);
  EXPECT_EQ(*ParseQuantityMilli("1.5", "f"), 1500);
  EXPECT_EQ(*ParseQuantityMilli("1Ki", "f"), 1024000);
  EXPECT_EQ(*ParseQuantityMilli("3e3", "f"), 3000000);
  EXPECT_EQ(*ParseQuantityMilli(" 7 ", "f"), 7000);
}

TEST(ParseQuantityMilliTest, RejectsBadInputNamingFieldAndValue) {
  EXPECT_THAT(ParseQuantityMilli("-1", "cpu"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("cpu"), HasSubstr("\"-1\""),
                             HasSubstr("negative"))));
  EXPECT_THAT(
      ParseQuantityMilli("12x", "cpu"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown unit")));
  EXPECT_THAT(ParseQuantityMilli("", "cpu"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseQuantityMilli("1n", "cpu"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("finer")));
  EXPECT_THAT(
      ParseQuantityMilli("99999999999999999999", "cpu"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("overflow")));
  EXPECT_THAT(
      ParseQuantityMilli("9E", "cpu"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("overflow")));
}

TEST(ParseWholeQuantityTest, CountsAndAmounts) {
  EXPECT_EQ(*ParseWholeQuantity("3", "n"), 3);
  EXPECT_EQ(*ParseWholeQuantity("2k", "n"), 2000);
  EXPECT_THAT(ParseWholeQuantity("1.5", "volcano.sh/vgpu-number"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("volcano.sh/vgpu-number"),
                             HasSubstr("whole number"))));
  EXPECT_THAT(
      ParseWholeQuantity("9223372036854775808", "n"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("overflow")));
  EXPECT_EQ(*ParseWholeQuantity("9223372036854775807", "n"),
            9223372036854775807LL);
}

TEST(ParseMemoryQuantityMiBTest, RoundsUpToMiB) {
  EXPECT_EQ(*ParseMemoryQuantityMiB("512Mi", "m"), 512);
  EXPECT_EQ(*ParseMemoryQuantityMiB("1Gi", "m"), 1024);
  EXPECT_EQ(*ParseMemoryQuantityMiB("1G", "m"), 954);  // 10^9 bytes
  EXPECT_EQ(*ParseMemoryQuantityMiB("1", "m"), 1);
  EXPECT_EQ(*ParseMemoryQuantityMiB("0", "m"), 0);
}

TEST(ParseSizeMiBTest, HamiCoreStyle) {
  EXPECT_EQ(*ParseSizeMiB("1024m", "s"), 1024);
  EXPECT_EQ(*ParseSizeMiB("1024M", "s"), 1024);
  EXPECT_EQ(*ParseSizeMiB("3g", "s"), 3072);
  EXPECT_EQ(*ParseSizeMiB("1536k", "s"), 2);
  EXPECT_EQ(*ParseSizeMiB("1048576", "s"), 1);
  EXPECT_THAT(ParseSizeMiB("3gb", "CUDA_DEVICE_MEMORY_LIMIT_0"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("CUDA_DEVICE_MEMORY_LIMIT_0")));
  EXPECT_THAT(
      ParseSizeMiB("-3g", "s"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("negative")));
  EXPECT_THAT(
      ParseSizeMiB("99999999999999999999g", "s"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("overflow")));
}

TEST(ParsePercentTest, Range) {
  EXPECT_EQ(*ParsePercent("0", "p"), 0);
  EXPECT_EQ(*ParsePercent("100", "p"), 100);
  EXPECT_THAT(ParsePercent("101", "nvidia.com/gpucores"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("nvidia.com/gpucores"),
                             HasSubstr("above 100"))));
}

TEST(FormatMiBLimitTest, HamiCoreSuffix) {
  EXPECT_EQ(FormatMiBLimit(4096), "4096m");
}

}  // namespace
}  // namespace deviceshare
