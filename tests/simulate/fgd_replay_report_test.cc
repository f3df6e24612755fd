#include "deviceshare/simulate/fgd_replay_report.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "deviceshare/simulate/replay_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace deviceshare::simulate {
namespace {

using ::deviceshare::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

// A run whose curve is `allocated` at 100 % arrived and 50 at 60 %.
ReplayRun RunWith(uint64_t seed, double allocated) {
  ReplayRun run;
  run.seed = seed;
  run.pods = 10;
  run.placed = 9;
  run.allocated_percent.assign(101, std::nan(""));
  run.allocated_percent[60] = 50;
  run.allocated_percent[100] = allocated;
  return run;
}

ReplayResult TwoPolicies() {
  ReplayResult result;
  result.series.push_back(
      {"default", "binpack", {RunWith(42, 95), RunWith(43, 93)}});
  result.series.push_back({"default", "spread", {RunWith(42, 90)}});
  return result;
}

TEST(FgdReplayReportTest, MeanAndSampleSdOfUnallocated) {
  const ReplayResult result = TwoPolicies();
  const MeanSd binpack = UnallocatedAt(result.series[0], 100);
  EXPECT_EQ(binpack.runs, 2);
  EXPECT_DOUBLE_EQ(binpack.mean, 6);
  EXPECT_NEAR(binpack.sd, 1.41421356, 1e-6);
  const MeanSd spread = UnallocatedAt(result.series[1], 100);
  EXPECT_DOUBLE_EQ(spread.mean, 10);
  EXPECT_DOUBLE_EQ(spread.sd, 0);
  EXPECT_EQ(UnallocatedAt(result.series[0], 99).runs, 0);
  EXPECT_EQ(UnallocatedAt(result.series[0], 500).runs, 0);
}

TEST(FgdReplayReportTest, TableCsvAndPlot) {
  const ReplayResult result = TwoPolicies();
  const std::string table = ReplayTable(result, std::vector<int>{60, 99, 100});
  EXPECT_THAT(table, HasSubstr("unalloc@100%"));
  EXPECT_THAT(table, HasSubstr("6.00 ± 1.41"));
  EXPECT_THAT(table, HasSubstr("10.00 ± 0.00"));
  EXPECT_THAT(table, HasSubstr("50.00 ± 0.00"));
  EXPECT_THAT(table, HasSubstr("9/10"));
  const std::vector<std::string> lines =
      absl::StrSplit(ReplayCsv(result), '\n', absl::SkipEmpty());
  ASSERT_THAT(lines, SizeIs(1 + 3 * 2));
  EXPECT_EQ(lines[0],
            "trace,policy,seed,arrived_pct,allocated_pct,unallocated_pct");
  EXPECT_EQ(lines[2], "default,binpack,42,100,95.0000,5.0000");
  const std::string svg = ReplaySvg(result);
  EXPECT_THAT(svg, HasSubstr("<svg"));
  EXPECT_THAT(svg, HasSubstr("</svg>"));
  EXPECT_THAT(svg, HasSubstr(">default</text>"));
  EXPECT_THAT(svg, HasSubstr("binpack</text>"));
  // Two policies and the ideal line in the one panel.
  size_t lines_drawn = 0;
  for (size_t at = svg.find("<polyline"); at != std::string::npos;
       at = svg.find("<polyline", at + 1)) {
    ++lines_drawn;
  }
  EXPECT_EQ(lines_drawn, 3u);
}

TEST(FgdReplayReportTest, SeedsAsRangeCountOrList) {
  auto range = ParseSeeds("--seeds", "42-51");
  ASSERT_OK(range);
  EXPECT_THAT(*range, SizeIs(10));
  EXPECT_EQ(range->front(), 42u);
  EXPECT_EQ(range->back(), 51u);
  auto count = ParseSeeds("--seeds", "3");
  ASSERT_OK(count);
  EXPECT_THAT(*count, ElementsAre(42, 43, 44));
  auto list = ParseSeeds("--seeds", "7,1");
  ASSERT_OK(list);
  EXPECT_THAT(*list, ElementsAre(7, 1));
  for (const char* bad : {"5-3", "x", "0", "1-2000", "1,y", "", "-4"}) {
    auto parsed = ParseSeeds("--seeds", bad);
    EXPECT_THAT(parsed.status(),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr(absl::StrCat("--seeds \"", bad, "\""))))
        << bad;
  }
}

TEST(FgdReplayReportTest, TraceNames) {
  EXPECT_EQ(TraceName("data/alibaba-gpu-v2023/openb_pod_list_gpushare40.csv"),
            "gpushare40");
  EXPECT_EQ(TraceName("mine.csv"), "mine");
  EXPECT_EQ(TraceName("/x/y"), "y");
}

TEST(FgdReplayReportTest, CommandErrorsNameTheFlagOrPolicy) {
  ReplayCommandOptions options;
  EXPECT_THAT(RunReplayCommand(options).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--trace-nodes and --trace-pods")));
  const std::string data = DEVICESHARE_TRACES_DIR;
  options.trace_nodes_path =
      data + "/alibaba-gpu-v2023/openb_node_list_gpu_node.csv";
  options.trace_pods_paths = {data + "/alibaba-gpu-v2023/no-such.csv"};
  EXPECT_THAT(RunReplayCommand(options).status(),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("--trace-pods")));
  options.trace_pods_paths = {
      data + "/alibaba-gpu-v2023/openb_pod_list_gpushare40.csv"};
  options.policies = {"binpack", "no-such-policy"};
  options.seeds = {42};
  EXPECT_THAT(RunReplayCommand(options).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--policies: \"no-such-policy\" is not a "
                                 "registered policy")));
  options.inflate = 0;
  EXPECT_THAT(
      RunReplayCommand(options).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--inflate 0")));
}

// One seed of the bundled gpushare40 trace: the stream reaches 130 % of the
// 6,212 GPUs, and binpack leaves some unallocated at 100 % arrived.
TEST(FgdReplayReportTest, OneSeedOfABundledTrace) {
  ReplayCommandOptions options;
  const std::string data = DEVICESHARE_TRACES_DIR;
  options.trace_nodes_path =
      data + "/alibaba-gpu-v2023/openb_node_list_gpu_node.csv";
  options.trace_pods_paths = {
      data + "/alibaba-gpu-v2023/openb_pod_list_gpushare40.csv"};
  options.seeds = {42};
  size_t progress_calls = 0;
  auto result = RunReplayCommand(options, [&](size_t done, size_t total) {
    ++progress_calls;
    EXPECT_EQ(total, 1u);
  });
  ASSERT_OK(result);
  EXPECT_EQ(progress_calls, 1u);
  ASSERT_THAT(result->series, SizeIs(1));
  const ReplaySeries& series = result->series[0];
  EXPECT_EQ(series.trace, "gpushare40");
  ASSERT_THAT(series.runs, SizeIs(1));
  EXPECT_GE(series.runs[0].allocated_percent.size(), 130u);
  const MeanSd at_100 = UnallocatedAt(series, 100);
  EXPECT_EQ(at_100.runs, 1);
  EXPECT_GT(at_100.mean, 0);
  EXPECT_LT(at_100.mean, 30);
}

}  // namespace
}  // namespace deviceshare::simulate
