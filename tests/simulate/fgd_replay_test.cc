#include "deviceshare/simulate/fgd_replay.h"

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace deviceshare::simulate {
namespace {

using ::testing::SizeIs;

TracePod Pod(std::string name, int64_t num_gpu, int64_t gpu_milli) {
  TracePod pod;
  pod.name = std::move(name);
  pod.cpu_milli = 1000;
  pod.memory_mib = 1024;
  pod.num_gpu = num_gpu;
  pod.gpu_milli = gpu_milli;
  return pod;
}

int64_t Milli(const std::vector<TracePod>& pods) {
  int64_t total = 0;
  for (const TracePod& pod : pods) total += TracePodGpuMilli(pod);
  return total;
}

// 3 GPUs = 3000 milli. Hand-computed: after each attempt, arrived % and
// allocated % of 3000.
TEST(FgdReplayTest, CurveByHand) {
  const std::vector<PodAttempt> attempts = {
      {500, true},    // arrived 16.7 -> 17, allocated 16.7
      {1000, true},   // 50 -> 50, 50
      {1000, false},  // 83.3 -> 83, 50
      {1000, true},   // 116.7 -> 117, 83.3
      {500, true},    // 133.3 -> 133, 100
  };
  const std::vector<double> curve = AllocationCurve(attempts, 3000);
  ASSERT_THAT(curve, SizeIs(134));
  EXPECT_NEAR(curve[17], 100.0 / 6, 1e-9);
  EXPECT_NEAR(curve[16], 100.0 / 6, 1e-9);  // empty: its neighbour's
  EXPECT_NEAR(curve[18], 100.0 / 6, 1e-9);
  EXPECT_NEAR(curve[50], 50, 1e-9);
  EXPECT_NEAR(curve[83], 50, 1e-9);
  EXPECT_NEAR(curve[117], 250.0 / 3, 1e-9);
  EXPECT_NEAR(curve[133], 100, 1e-9);
  EXPECT_TRUE(std::isnan(curve[100]));
  EXPECT_TRUE(std::isnan(curve[0]));
}

TEST(FgdReplayTest, BucketMeanAndNeighbours) {
  // Two attempts in bucket 10 (of 10,000 milli), none in 11, one in 12.
  const std::vector<PodAttempt> attempts = {
      {960, true}, {40, false}, {200, true}};
  const std::vector<double> curve = AllocationCurve(attempts, 10000);
  ASSERT_THAT(curve, SizeIs(13));
  EXPECT_NEAR(curve[10], 9.6, 1e-9);  // 9.6 % and 10.0 % arrived
  EXPECT_NEAR(curve[12], 11.6, 1e-9);
  EXPECT_NEAR(curve[11], (9.6 + 9.6 + 11.6) / 3, 1e-9);
}

TEST(FgdReplayTest, StreamIsTheShuffledTraceThenSamplesUpToTheTarget) {
  const std::vector<TracePod> trace = {Pod("c", 0, 0), Pod("a", 1, 500),
                                       Pod("b", 1, 1000), Pod("d", 2, 1000)};
  std::mt19937_64 rng(42);
  const std::vector<TracePod> stream = ReplayPodStream(trace, 3000, 1.3, rng);
  ASSERT_GT(stream.size(), trace.size());
  std::set<std::string> first;
  for (size_t i = 0; i < trace.size(); ++i) first.insert(stream[i].name);
  EXPECT_EQ(first, (std::set<std::string>{"a", "b", "c", "d"}));
  for (size_t i = trace.size(); i < stream.size(); ++i) {
    EXPECT_TRUE(absl::StrContains(stream[i].name, "-tuned-")) << stream[i].name;
  }
  // Stops at the first draw whose per-GPU milli would pass 3900.
  EXPECT_LE(Milli(stream), 3900 + 1000);
  EXPECT_GT(Milli(stream) + 1000, 3900);
  std::mt19937_64 again(42);
  const std::vector<TracePod> same = ReplayPodStream(trace, 3000, 1.3, again);
  ASSERT_EQ(same.size(), stream.size());
  for (size_t i = 0; i < same.size(); ++i) {
    EXPECT_EQ(same[i].name, stream[i].name);
  }
}

TEST(FgdReplayTest, AboveTheTargetPodsAreRemoved) {
  std::vector<TracePod> trace;
  for (int i = 0; i < 10; ++i)
    trace.push_back(Pod("p" + std::to_string(i), 1, 1000));
  std::mt19937_64 rng(7);
  const std::vector<TracePod> stream = ReplayPodStream(trace, 3000, 1.3, rng);
  EXPECT_THAT(stream, SizeIs(3));  // 3000 <= 3900 < 4000
}

TEST(FgdReplayTest, NodesGetASeededRankPrefix) {
  std::vector<NodeInventory> nodes(5);
  const char* names[] = {"e", "c", "a", "d", "b"};
  for (int i = 0; i < 5; ++i) nodes[i].name = names[i];
  std::mt19937_64 rng(1);
  const std::vector<NodeInventory> renamed = ReplayNodeOrder(nodes, rng);
  std::set<int> ranks;
  const std::string sorted = "abcde";
  for (size_t i = 0; i < renamed.size(); ++i) {
    const std::string& name = renamed[i].name;
    ASSERT_EQ(name.size(), 6u) << name;
    EXPECT_EQ(name[4], '-');
    EXPECT_EQ(name[5], sorted[i]);
    int rank = -1;
    ASSERT_TRUE(absl::SimpleAtoi(name.substr(0, 4), &rank)) << name;
    ranks.insert(rank);
  }
  EXPECT_EQ(ranks, (std::set<int>{0, 1, 2, 3, 4}));
}

// A 3-node toy trace whose series is known by hand whatever the shuffle:
// four identical whole-GPU pods on three one-GPU nodes, the trace already at
// the target (4000 = 4/3 x 3000), so nothing is added or removed.
TEST(FgdReplayTest, ThreeNodeToyTraceThroughTheScheduler) {
  auto nodes = LoadTraceNodes(
      "sn,cpu_milli,memory_mib,gpu,model\nn1,32000,65536,1,T4\n"
      "n2,32000,65536,1,T4\nn3,32000,65536,1,T4\n",
      "nodes.csv", DeviceConfig());
  ASSERT_OK(nodes);
  const std::vector<TracePod> pods = {Pod("p1", 1, 1000), Pod("p2", 1, 1000),
                                      Pod("p3", 1, 1000), Pod("p4", 1, 1000)};
  auto run = ReplayOnce(Config(), nodes->nodes, pods, 42, 4.0 / 3.0);
  ASSERT_OK(run);
  EXPECT_EQ(run->pods, 4u);
  EXPECT_EQ(run->placed, 3u);
  const std::vector<double>& curve = run->allocated_percent;
  ASSERT_THAT(curve, SizeIs(134));
  EXPECT_NEAR(curve[33], 100.0 / 3, 1e-9);
  EXPECT_NEAR(curve[67], 200.0 / 3, 1e-9);
  EXPECT_NEAR(curve[100], 100, 1e-9);
  EXPECT_NEAR(curve[133], 100, 1e-9);
  EXPECT_TRUE(std::isnan(curve[50]));
}

}  // namespace
}  // namespace deviceshare::simulate
