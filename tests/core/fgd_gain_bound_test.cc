// FragGainBound, which lets the search skip nodes under fgd and fragaware,
// must bound the measure's fall for every state a placement can leave:
// checked against the measure itself on random nodes, workloads and
// placements (fixed seeds), and on the cases it is tight.
#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "deviceshare/policy/fgd/frag_model.h"
#include "gtest/gtest.h"

namespace deviceshare::fgd {
namespace {

TypicalPod Shape(int64_t cpu, int32_t milli, int32_t count, double share,
                 std::vector<std::string> models = {}) {
  TypicalPod pod{.cpu_milli = cpu, .gpu_milli = milli, .gpu_count = count};
  pod.models = std::move(models);
  pod.share = share;
  return pod;
}

FragNode Node(int64_t cpu, std::vector<int32_t> left, std::string model) {
  return FragNode{cpu, std::move(left), std::move(model)};
}

TEST(FgdGainBoundTest, EmptyNodeGainsNothingFromPodsItFits) {
  // Both shapes fit an empty node and use all of it: whatever is placed,
  // the measure cannot fall.
  const std::vector<TypicalPod> workload = {Shape(1000, 500, 1, 0.5),
                                            Shape(1000, 1000, 2, 0.5)};
  const FragNode empty = Node(64000, {1000, 1000, 1000, 1000}, "A100");
  EXPECT_DOUBLE_EQ(FragGainBound(empty, workload, 1000), 0);
  // A CPU-only shape and a shape pinned elsewhere lose all idle GPU
  // anyway: they fall by the drop.
  const std::vector<TypicalPod> blind = {Shape(1000, 0, 0, 0.25),
                                         Shape(1000, 500, 1, 0.25, {"T4"}),
                                         Shape(1000, 500, 1, 0.5)};
  EXPECT_DOUBLE_EQ(FragGainBound(empty, blind, 300), 0.5 * 300);
}

TEST(FgdGainBoundTest, DropIsCappedByTheIdleCapacity) {
  const std::vector<TypicalPod> workload = {Shape(0, 0, 0, 1.0)};
  const FragNode node = Node(64000, {200, 100}, "A100");
  EXPECT_DOUBLE_EQ(FragGainBound(node, workload, 8000), 300);
}

TEST(FgdGainBoundTest, BoundsEveryRandomPlacement) {
  std::mt19937_64 rng(7);
  auto draw = [&rng](int64_t n) {
    return static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
  };
  const std::vector<std::string> models = {"A100", "T4", "V100"};
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<TypicalPod> workload;
    const int64_t shapes = 1 + draw(6);
    for (int64_t i = 0; i < shapes; ++i) {
      const bool cpu_only = draw(5) == 0;
      std::vector<std::string> pinned;
      if (draw(4) == 0) pinned.push_back(models[draw(3)]);
      workload.push_back(Shape(
          draw(16) * 1000, cpu_only ? 0 : static_cast<int32_t>(1 + draw(1000)),
          cpu_only ? 0 : static_cast<int32_t>(1 + draw(4)),
          static_cast<double>(1 + draw(100)) / 100.0, pinned));
      // fragaware's shares count their pods' CPU (frag_model.h).
      workload.back().counted_by_cpu = draw(2) == 0;
    }
    FragNode before = Node(draw(32) * 1000, {}, models[draw(3)]);
    const int64_t gpus = 1 + draw(8);
    for (int64_t g = 0; g < gpus; ++g) {
      before.gpu_milli_left.push_back(
          draw(3) == 0 ? 1000 : static_cast<int32_t>(draw(1001)));
    }
    // A placement: some GPUs lose some of what they have left (at most
    // `most_drop` in all), the CPU falls.
    const int64_t most_drop = draw(3) == 0 ? 0 : (1 + draw(4)) * 1000;
    FragNode after = before;
    after.cpu_milli_left -= draw(8) * 1000;
    int64_t dropped = 0;
    for (int32_t& left : after.gpu_milli_left) {
      if (draw(2) == 0) continue;
      const int64_t take =
          std::min<int64_t>({left, most_drop - dropped, draw(1001)});
      left -= static_cast<int32_t>(take);
      dropped += take;
    }
    const double fall =
        FragMilli(before, workload) - FragMilli(after, workload);
    EXPECT_LE(fall, FragGainBound(before, workload, most_drop) + 1e-6)
        << "trial " << trial;
  }
}

TEST(FgdGainBoundTest, NegativeShareHasNoBound) {
  const FragNode node = Node(64000, {500}, "A100");
  EXPECT_EQ(FragGainBound(node, {Shape(0, 100, 1, -0.5)}, 1000),
            std::numeric_limits<double>::infinity());
}

}  // namespace
}  // namespace deviceshare::fgd
