// HAMi's pkg/util/device_scoring_weights_test.go
// (TestParseDeviceScoringWeights, TestGetDeviceScoringWeightsByPod) restated as
// a table over ParseDeviceScoringWeights, and the weighted utilisation they
// feed.
#include "deviceshare/policy/scoring_weights.h"

#include <optional>
#include <string>

#include "deviceshare/policy/scoring.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kField[] = "hami.io/device-scoring-weights";

struct WeightsRow {
  const char* upstream;  // the upstream case
  const char* text;
  std::optional<DeviceScoringWeights> weights;  // nullopt: refused
  const char* why;                              // in the refusal
};

TEST(ScoringWeightsTableTest, HamiDeviceScoringWeights) {
  const WeightsRow rows[] = {
      {"valid ordered weights", "slot=1,core=2,memory=3",
       DeviceScoringWeights{1, 2, 3}, ""},
      {"valid reordered weights and whitespace",
       " memory = 3, slot = 1, core = 0 ", DeviceScoringWeights{1, 0, 3}, ""},
      {"valid annotation (ByPod)", "slot=4,core=0,memory=0",
       DeviceScoringWeights{4, 0, 0}, ""},
      {"empty annotation", "", std::nullopt,
       "expected slot, core and memory weights"},
      {"missing dimension", "slot=1,memory=3", std::nullopt,
       "expected slot, core and memory weights"},
      {"four entries", "slot=1,core=1,memory=1,slot=1", std::nullopt,
       "expected slot, core and memory weights"},
      {"malformed entry", "slot=1,core,memory=3", std::nullopt,
       "expected key=value entries"},
      {"non-integer", "slot=1,core=high,memory=3", std::nullopt,
       "\"core\" weight must be an integer"},
      {"negative (also ByPod's invalid annotation)", "slot=1,core=-1,memory=3",
       std::nullopt, "\"core\" weight must not be negative"},
      {"unknown key", "slot=1,bandwidth=2,memory=3", std::nullopt,
       "unknown weight \"bandwidth\""},
      {"duplicate key", "slot=1,slot=2,memory=3", std::nullopt,
       "duplicate \"slot\" weight"},
      {"all zero", "slot=0,core=0,memory=0", std::nullopt,
       "at least one weight must be positive"},
  };
  for (const WeightsRow& row : rows) {
    SCOPED_TRACE(row.upstream);
    absl::StatusOr<DeviceScoringWeights> read =
        ParseDeviceScoringWeights(row.text, kField);
    if (row.weights) {
      ASSERT_OK(read);
      EXPECT_EQ(*read, *row.weights);
    } else {
      EXPECT_THAT(read, StatusIs(absl::StatusCode::kInvalidArgument,
                                 AllOf(HasSubstr(kField), HasSubstr(row.why))));
    }
  }
}

// Each fraction counts as often as its weight; equal weights are the plain
// mean (HAMi's ComputeScore, gpu_policy.go, with util.Weight factored out).
TEST(ScoringWeightsTest, WeightedUtilisation) {
  const Usage used{10, 90, 2};  // 10 % memory, 90 % cores, 20 % slots
  const Capacity capacity{100, 100, 10};
  EXPECT_EQ(UtilisationPercent(used, capacity, DeviceScoringWeights{}),
            UtilisationPercent(used, capacity));
  EXPECT_EQ(UtilisationPercent(used, capacity), 40);
  EXPECT_EQ(UtilisationPercent(used, capacity, DeviceScoringWeights{1, 1, 3}),
            (20 + 90 + 3 * 10) / 5);
  EXPECT_EQ(UtilisationPercent(used, capacity, DeviceScoringWeights{0, 1, 0}),
            90);
}

}  // namespace
}  // namespace deviceshare
