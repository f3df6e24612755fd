// topology-aware over a node's link graph (policy/topology/
// gpu_set_search.h): golden answers worked out by hand on a DGX-like
// NVSwitch node, two 4-GPU NVLink islands and a PCIe-only node, and a
// property test against brute force on random 8- and 12-GPU link graphs.
#include <algorithm>
#include <memory>
#include <random>
#include <vector>

#include "deviceshare/policy/builtin_policies.h"
#include "deviceshare/policy/placement_policy.h"
#include "deviceshare/policy/topology/gpu_set_search.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::MakeConfig;
using ::deviceshare::testing::MakeGpu;
using ::testing::ElementsAre;

// What one pair of GPUs shares.
struct Pair {
  int nvlinks = 0;
  PcieLevel pcie = PcieLevel::kSystem;
  bool numa = false;
};

// `n` GPUs, GPU i on NUMA node numa[i], every pair linked as `pair(a, b)`
// says, written on both GPUs.
template <typename PairOf>
std::vector<Gpu> LinkedNode(int n, const std::vector<int>& numa, PairOf pair) {
  std::vector<Gpu> gpus;
  for (int i = 0; i < n; ++i)
    gpus.push_back(MakeGpu("n", i, 81920, 10, numa[i]));
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      const Pair p = pair(std::min(a, b), std::max(a, b));
      gpus[a].links.push_back({b, p.nvlinks, p.numa, p.pcie});
    }
  }
  return gpus;
}

// DGX-like: eight GPUs all-to-all through NVSwitch (18 lanes each pair),
// two GPUs behind each PCIe switch (0-1, 2-3, 4-5, 6-7), 0-3 on NUMA 0 and
// 4-7 on NUMA 1.
std::vector<Gpu> Dgx() {
  return LinkedNode(8, {0, 0, 0, 0, 1, 1, 1, 1}, [](int a, int b) {
    const bool numa = a / 4 == b / 4;
    return Pair{18,
                a / 2 == b / 2 ? PcieLevel::kSwitch
                : numa         ? PcieLevel::kNuma
                               : PcieLevel::kSystem,
                numa};
  });
}

// Two NVLink islands 0-3 and 4-7 (4 lanes each pair inside, none across),
// each on its own NUMA node behind one host bridge.
std::vector<Gpu> TwoIslands() {
  return LinkedNode(8, {0, 0, 0, 0, 1, 1, 1, 1}, [](int a, int b) {
    const bool island = a / 4 == b / 4;
    return Pair{island ? 4 : 0,
                island ? PcieLevel::kHostBridge : PcieLevel::kSystem, island};
  });
}

// PCIe only: switches 0-1, 2-3 (NUMA 0) and 4-5, 6-7 (NUMA 1).
std::vector<Gpu> PcieOnly() {
  return LinkedNode(8, {0, 0, 0, 0, 1, 1, 1, 1}, [](int a, int b) {
    const bool numa = a / 4 == b / 4;
    return Pair{0,
                a / 2 == b / 2 ? PcieLevel::kSwitch
                : numa         ? PcieLevel::kNuma
                               : PcieLevel::kSystem,
                numa};
  });
}

class TopologyPicks : public ::testing::Test {
 protected:
  void SetUp() override {
    auto made = NewTopologyPolicy(MakeConfig());
    ASSERT_OK(made);
    policy_ = *std::move(made);
  }

  // The GPU indexes `want` of the candidates `order` (GPU indexes, best
  // ranked first) get, ascending.
  std::vector<int> Pick(const std::vector<Gpu>& gpus, std::vector<int> order,
                        int want) const {
    std::vector<GpuCandidate> ranked;
    for (int i : order) ranked.push_back({&gpus[i], {}});
    std::vector<int> picked;
    for (size_t at : policy_->PickGpus(ranked, want)) {
      picked.push_back(order[at]);
    }
    std::sort(picked.begin(), picked.end());
    return picked;
  }

  std::unique_ptr<PlacementPolicy> policy_;
};

const std::vector<int> kAll = {0, 1, 2, 3, 4, 5, 6, 7};
const std::vector<int> kAllBut0 = {1, 2, 3, 4, 5, 6, 7};

TEST_F(TopologyPicks, DgxNvswitchTiesAreDecidedByPcieThenNuma) {
  const std::vector<Gpu> gpus = Dgx();
  // Every set has the same NVLink lanes; 0-1 share a switch.
  EXPECT_THAT(Pick(gpus, kAll, 2), ElementsAre(0, 1));
  // GPU 0 busy: 1-2 would be the lowest, but 2-3 share a switch.
  EXPECT_THAT(Pick(gpus, kAllBut0, 2), ElementsAre(2, 3));
  // Four: two switch pairs and one NUMA node.
  EXPECT_THAT(Pick(gpus, kAll, 4), ElementsAre(0, 1, 2, 3));
  // Without GPU 0 only 4-7 still has two switch pairs on one NUMA node.
  EXPECT_THAT(Pick(gpus, kAllBut0, 4), ElementsAre(4, 5, 6, 7));
  // Three: one switch pair at most; 1-2-3 and 4-5-6 both add three NUMA
  // pairs, and 1-2-3 ranks first.
  EXPECT_THAT(Pick(gpus, kAllBut0, 3), ElementsAre(1, 2, 3));
  // Eight of eight is all of them.
  EXPECT_THAT(Pick(gpus, kAll, 8), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  // One GPU: all link alike, so the first ranked; without GPU 0, GPU 1 has
  // lost its switch partner and is the worst linked.
  EXPECT_THAT(Pick(gpus, kAll, 1), ElementsAre(0));
  EXPECT_THAT(Pick(gpus, kAllBut0, 1), ElementsAre(1));
}

TEST_F(TopologyPicks, TwoNvlinkIslands) {
  const std::vector<Gpu> gpus = TwoIslands();
  EXPECT_THAT(Pick(gpus, kAll, 4), ElementsAre(0, 1, 2, 3));
  // GPU 1 busy: only island 4-7 is whole.
  EXPECT_THAT(Pick(gpus, {0, 2, 3, 4, 5, 6, 7}, 4), ElementsAre(4, 5, 6, 7));
  // Two: every pair inside an island is alike, so the node's state decides
  // (the candidates as spread ranks them): 5 and 6 rank first. GPU 0, third
  // ranked, is in the other island and is not taken with 5.
  EXPECT_THAT(Pick(gpus, {5, 6, 0, 4, 7, 1, 2, 3}, 2), ElementsAre(5, 6));
  EXPECT_THAT(Pick(gpus, {5, 0, 6, 4, 7, 1, 2, 3}, 2), ElementsAre(5, 6));
  // Three with island 0-3 half used (2 and 3 busy): 12 lanes in 4-5-6
  // against 4 for 0-1 and any other.
  EXPECT_THAT(Pick(gpus, {0, 1, 4, 5, 6, 7}, 3), ElementsAre(4, 5, 6));
  // Three with one GPU of each island busy: both give 12 lanes; 0-1-2 first.
  EXPECT_THAT(Pick(gpus, {0, 1, 2, 4, 5, 6}, 3), ElementsAre(0, 1, 2));
  // Five: a whole island and one more.
  EXPECT_THAT(Pick(gpus, kAll, 5), ElementsAre(0, 1, 2, 3, 4));
  // One: every GPU of island 0-3 has lost a peer to GPU 3 being busy, so
  // the first of them is the worst linked; island 4-7 stays whole.
  EXPECT_THAT(Pick(gpus, {4, 5, 6, 7, 0, 1, 2}, 1), ElementsAre(0));
}

TEST_F(TopologyPicks, PcieOnlyPrefersOneSwitchThenOneNumaNode) {
  const std::vector<Gpu> gpus = PcieOnly();
  EXPECT_THAT(Pick(gpus, kAll, 2), ElementsAre(0, 1));
  EXPECT_THAT(Pick(gpus, kAllBut0, 2), ElementsAre(2, 3));
  // No two candidates share a switch: 1-2 share a NUMA node.
  EXPECT_THAT(Pick(gpus, {1, 2, 4, 6}, 2), ElementsAre(1, 2));
  // 1-4 would rank first, but only 4-6 share a NUMA node.
  EXPECT_THAT(Pick(gpus, {1, 4, 6}, 2), ElementsAre(4, 6));
  EXPECT_THAT(Pick(gpus, kAll, 4), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(Pick(gpus, {0, 2, 3, 4, 5, 6, 7}, 4), ElementsAre(4, 5, 6, 7));
  // One: GPU 3 busy leaves GPU 2 without its switch partner.
  EXPECT_THAT(Pick(gpus, {0, 1, 2, 4, 5, 6, 7}, 1), ElementsAre(2));
}

TEST_F(TopologyPicks, NvlinkOutweighsPcieAndNuma) {
  // 0-1 share a switch and a NUMA node; 2-3 are across sockets but have
  // one NVLink lane.
  const std::vector<Gpu> gpus = LinkedNode(4, {0, 0, 1, 0}, [](int a, int b) {
    if (a == 0 && b == 1) return Pair{0, PcieLevel::kSwitch, true};
    if (a == 2 && b == 3) return Pair{1, PcieLevel::kSystem, false};
    return Pair{};
  });
  EXPECT_THAT(Pick(gpus, {0, 1, 2, 3}, 2), ElementsAre(2, 3));
}

TEST_F(TopologyPicks, NodesWithoutLinksKeepHamisPairScores) {
  // No links, pair scores 0-1 and 2-3 NVLink (100), the rest 10.
  std::vector<Gpu> gpus;
  for (int i = 0; i < 4; ++i) gpus.push_back(MakeGpu("n", i));
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      if (a != b) {
        gpus[a].pair_scores.push_back(
            {gpus[b].uuid, a / 2 == b / 2 ? 100 : 10});
      }
    }
  }
  EXPECT_THAT(Pick(gpus, {2, 1, 3, 0}, 2), ElementsAre(2, 3));
  EXPECT_THAT(Pick(gpus, {1, 2, 3, 0}, 2), ElementsAre(0, 1));
}

TEST(LinkGraphTest, IslandsAreTheNvlinkComponents) {
  const std::vector<Gpu> gpus = TwoIslands();
  std::vector<const Gpu*> all;
  for (const Gpu& gpu : gpus) all.push_back(&gpu);
  const LinkGraph graph(all);
  EXPECT_THAT(graph.islands(),
              ElementsAre(ElementsAre(0, 1, 2, 3), ElementsAre(4, 5, 6, 7)));
  EXPECT_EQ(graph.SetQuality({0, 1, 2, 3}), (LinkQuality{24, 0, 6}));
  EXPECT_EQ(graph.SetQuality({0, 4}), (LinkQuality{0, 0, 0}));
}

// Pair links written on one GPU only (or both) read the same.
TEST(LinkGraphTest, APairIsReadFromEitherSide) {
  std::vector<Gpu> gpus = {MakeGpu("n", 0, 81920, 10, 0),
                           MakeGpu("n", 1, 81920, 10, 1),
                           MakeGpu("n", 2, 81920, 10, 0)};
  gpus[1].links.push_back({0, 6, false, PcieLevel::kSwitch});
  std::vector<const Gpu*> all = {&gpus[0], &gpus[1], &gpus[2]};
  const LinkGraph graph(all);
  EXPECT_EQ(graph.Pair(0, 1), (LinkQuality{6, 1, 1}));
  EXPECT_EQ(graph.Pair(1, 0), (LinkQuality{6, 1, 1}));
  // Listed by neither: NUMA from the GPUs' numa.
  EXPECT_EQ(graph.Pair(0, 2), (LinkQuality{0, 0, 1}));
  EXPECT_EQ(graph.Pair(1, 2), (LinkQuality{0, 0, 0}));
}

TEST(LinkGraphTest, NodeScoreScale) {
  EXPECT_EQ(LinkQualityScore({18, 0, 0}, 2), 100);
  EXPECT_EQ(LinkQualityScore({1, 0, 0}, 2), 53);
  EXPECT_EQ(LinkQualityScore({0, 1, 1}, 2), 50);
  EXPECT_EQ(LinkQualityScore({0, 0, 1}, 2), 25);
  EXPECT_EQ(LinkQualityScore({0, 0, 0}, 2), 10);
  EXPECT_EQ(LinkQualityScore({24, 0, 6}, 4), 51 + 49 * 24 / (18 * 6));
}

// Property: on random link graphs the chosen set's quality is the maximum
// over every subset of the size, and it is the first such subset in
// candidate order (the tie rule).
struct RandomNode {
  int n;
  std::vector<std::vector<Pair>> pair;  // [a][b], a < b
  std::vector<Gpu> gpus;
};

RandomNode MakeRandomNode(int n, std::mt19937_64& rng) {
  RandomNode node{
      n, std::vector<std::vector<Pair>>(n, std::vector<Pair>(n)), {}};
  const int lanes[] = {0, 0, 0, 1, 2, 4, 6, 12, 18};
  std::uniform_int_distribution<int> lane(0, 8);
  std::uniform_int_distribution<int> level(0, 5);
  std::uniform_int_distribution<int> coin(0, 1);
  std::uniform_int_distribution<int> side(0, 2);
  for (int i = 0; i < n; ++i) {
    node.gpus.push_back(MakeGpu("n", i, 81920, 10, coin(rng)));
  }
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      Pair p{lanes[lane(rng)], static_cast<PcieLevel>(level(rng)),
             coin(rng) == 1};
      // numa as the graph reads it: said, or implied by the PCIe level.
      p.numa = p.numa || p.pcie <= PcieLevel::kNuma;
      node.pair[a][b] = p;
      // Written on a, on b, or on both.
      const int s = side(rng);
      if (s != 1) node.gpus[a].links.push_back({b, p.nvlinks, p.numa, p.pcie});
      if (s != 0) node.gpus[b].links.push_back({a, p.nvlinks, p.numa, p.pcie});
    }
  }
  return node;
}

LinkQuality Brute(const RandomNode& node, const std::vector<int>& gpus) {
  LinkQuality q;
  for (size_t i = 0; i < gpus.size(); ++i) {
    for (size_t j = i + 1; j < gpus.size(); ++j) {
      const Pair& p =
          node.pair[std::min(gpus[i], gpus[j])][std::max(gpus[i], gpus[j])];
      q += LinkQuality{p.nvlinks, p.pcie <= PcieLevel::kSwitch ? 1 : 0,
                       p.numa ? 1 : 0};
    }
  }
  return q;
}

void CheckAgainstBruteForce(int n, int graphs, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (int g = 0; g < graphs; ++g) {
    const RandomNode node = MakeRandomNode(n, rng);
    // Candidates in a random rank order.
    std::vector<int> order(n);
    for (int i = 0; i < n; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<const Gpu*> ranked;
    for (int i : order) ranked.push_back(&node.gpus[i]);
    const LinkGraph graph(ranked);
    for (int k = 1; k <= n; ++k) {
      // Brute force over positions in lexicographic order: the first
      // strictly better set wins.
      LinkQuality best;
      uint32_t best_mask = 0;
      bool found = false;
      std::vector<uint32_t> masks;
      for (uint32_t mask = 0; mask < (1u << n); ++mask) {
        if (__builtin_popcount(mask) == k) masks.push_back(mask);
      }
      auto positions = [n](uint32_t mask) {
        std::vector<size_t> out;
        for (int i = 0; i < n; ++i) {
          if (mask >> i & 1) out.push_back(i);
        }
        return out;
      };
      std::sort(masks.begin(), masks.end(), [&](uint32_t a, uint32_t b) {
        return positions(a) < positions(b);
      });
      for (uint32_t mask : masks) {
        std::vector<int> set;
        for (size_t at : positions(mask)) set.push_back(order[at]);
        const LinkQuality q = Brute(node, set);
        if (!found || q > best) {
          found = true;
          best = q;
          best_mask = mask;
        }
      }
      if (k == 1) continue;  // one GPU: worst linked, checked below
      const std::vector<size_t> chosen = BestGpuSet(graph, k);
      ASSERT_EQ(chosen.size(), static_cast<size_t>(k));
      std::vector<int> chosen_gpus;
      for (size_t at : chosen) chosen_gpus.push_back(order[at]);
      EXPECT_EQ(Brute(node, chosen_gpus), best)
          << "graph " << g << " n " << n << " k " << k;
      EXPECT_EQ(chosen, positions(best_mask))
          << "graph " << g << " n " << n << " k " << k;
    }
    // One GPU: the lowest summed quality to the others, first on ties.
    size_t worst = 0;
    LinkQuality worst_total;
    for (int a = 0; a < n; ++a) {
      LinkQuality total;
      for (int b = 0; b < n; ++b) {
        if (a != b) total += Brute(node, {order[a], order[b]});
      }
      if (a == 0 || total < worst_total) {
        worst = a;
        worst_total = total;
      }
    }
    EXPECT_EQ(WorstLinkedGpu(graph), worst) << "graph " << g;
  }
}

TEST(TopologyPropertyTest, BestSetIsTheMaximumOverAllSubsets8Gpus) {
  CheckAgainstBruteForce(8, 300, 20240601);
}

TEST(TopologyPropertyTest, BestSetIsTheMaximumOverAllSubsets12Gpus) {
  CheckAgainstBruteForce(12, 10, 7);
}

TEST(TopologyPropertyTest, OutOfReach) {
  const std::vector<Gpu> gpus = Dgx();
  std::vector<const Gpu*> all;
  for (const Gpu& gpu : gpus) all.push_back(&gpu);
  const LinkGraph graph(all);
  EXPECT_TRUE(BestGpuSet(graph, 0).empty());
  EXPECT_TRUE(BestGpuSet(graph, 9).empty());
}

}  // namespace
}  // namespace deviceshare
