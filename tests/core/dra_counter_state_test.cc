// CounterState (dra/counter_state.h) over the partitionable devices the
// node agent publishes for a MIG-mode H100.
#include "absl/strings/str_cat.h"
#include "deviceshare/dra/counter_state.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace deviceshare::dra {
namespace {

using ::deviceshare::testing::IsOk;
using ::testing::HasSubstr;

CounterSet H100Counters() {
  CounterSet set{"gpu-0-counters", {{"compute-slices", {7}}}};
  for (int s = 0; s < 8; ++s) {
    set.counters[absl::StrCat("memory-slice-", s)] = {1};
  }
  return set;
}

// A placement: `compute` compute slices, memory slices start..start+size-1.
Device Placement(const std::string& name, int compute, int start, int size) {
  Device device;
  device.name = name;
  CounterConsumption use{"gpu-0-counters", {{"compute-slices", {compute}}}};
  for (int s = start; s < start + size; ++s) {
    use.counters[absl::StrCat("memory-slice-", s)] = {1};
  }
  device.consumes_counters.push_back(use);
  return device;
}

TEST(CounterStateTest, OverlappingPlacementsExcludeEachOther) {
  CounterState state;
  ASSERT_THAT(state.AddSet(H100Counters()), IsOk());
  const Device three_g_at_4 = Placement("3g40gb-4", 3, 4, 4);
  const Device four_g_at_0 = Placement("4g40gb-0", 4, 0, 4);
  const Device one_g_at_5 = Placement("1g10gb-5", 1, 5, 1);
  std::string why;
  ASSERT_TRUE(state.Fits(three_g_at_4, &why)) << why;
  state.Take(three_g_at_4);
  EXPECT_FALSE(state.Fits(one_g_at_5, &why));
  EXPECT_THAT(why, HasSubstr("memory-slice-5: 1 needed, 0 left"));
  ASSERT_TRUE(state.Fits(four_g_at_0, &why)) << why;
  state.Take(four_g_at_0);
  EXPECT_EQ(state.Left("gpu-0-counters", "compute-slices"), 0);
  state.Give(three_g_at_4);
  EXPECT_TRUE(state.Fits(one_g_at_5, &why)) << why;
  EXPECT_EQ(state.Left("gpu-0-counters", "compute-slices"), 3);
}

TEST(CounterStateTest, UnknownSetsAndCountersDoNotFit) {
  CounterState state;
  ASSERT_THAT(state.AddSet(H100Counters()), IsOk());
  EXPECT_FALSE(state.AddSet(H100Counters()).ok());
  Device stray = Placement("x", 1, 0, 1);
  stray.consumes_counters[0].counter_set = "gpu-9-counters";
  std::string why;
  EXPECT_FALSE(state.Fits(stray, &why));
  EXPECT_THAT(why, HasSubstr("not published"));
  EXPECT_EQ(state.Left("gpu-9-counters", "compute-slices"), -1);
}

}  // namespace
}  // namespace deviceshare::dra
