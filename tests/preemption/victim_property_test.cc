// Property test of the victim search: on random small nodes (<= 4 GPUs,
// <= 10 pods, hami-core, mps and MIG) its set equals the optimum of a
// brute force over every subset of the candidates, by the same order
// (count, highest priority, share freed, uids), with the same fit test;
// and no victim ever has the pending pod's priority or more.
#include <algorithm>
#include <optional>
#include <random>
#include <tuple>

#include "deviceshare/preemption/victim_search.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "preemption/victim_fixture.h"

namespace deviceshare::preemption {
namespace {

using ::deviceshare::testing::GpuContainer;
using ::deviceshare::testing::MakePod;
using testing::ModeGpu;

constexpr int kNodes = 500;
constexpr int32_t kPendingPriority = 5;

int Uniform(std::mt19937& rng, int lo, int hi) {  // [lo, hi]
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

// A random GPU container: a MIG profile on MIG nodes, else MiB and cores.
ContainerRequest RandomContainer(std::mt19937& rng, bool mig, int gpus,
                                 const std::string& name) {
  if (mig) {
    static const char* const kProfiles[] = {"1g.10gb", "1g.10gb", "2g.20gb",
                                            "3g.40gb"};
    ContainerRequest container = GpuContainer(name, 1, 0);
    container.mig_profile = kProfiles[Uniform(rng, 0, 3)];
    return container;
  }
  const int count = Uniform(rng, 1, std::min(gpus, 2));
  const int cores = Uniform(rng, 0, 1) == 0 ? 0 : 10 * Uniform(rng, 1, 6);
  return GpuContainer(name, count, 500 * Uniform(rng, 1, 12), cores);
}

// What `uid` holds on the node, as victim_order.h defines it; written out
// again here so that the brute force does not trust the library's sum.
int64_t FreedMilli(const NodeState& node, const std::string& uid) {
  int64_t milli = 0;
  for (size_t g = 0; g < node.gpu_count(); ++g) {
    const DeviceLedger& ledger = node.ledger(g);
    if (!ledger.HasPod(uid)) continue;
    const PodCharge charge = ChargeOf(ledger.SharesOf(uid));
    milli += charge.memory_mib * 500 / ledger.memory_capacity_mib() +
             int64_t{charge.cores} * 500 / ledger.core_capacity();
  }
  return milli;
}

class VictimPropertyTest : public ::testing::Test,
                           public testing::VictimFixture {
 protected:
  // A node "r<n>" of 1-4 GPUs (all MIG, or hami-core and mps mixed) with
  // up to 10 pods placed by the decision path; returns the pods' uids.
  std::vector<std::string> RandomNode(std::mt19937& rng, int n, bool mig) {
    const std::string name = absl::StrCat("r", n);
    const int gpus = Uniform(rng, 1, 4);
    std::vector<Gpu> inventory;
    for (int i = 0; i < gpus; ++i) {
      const SharingMode mode =
          mig ? mig::kMode
              : (Uniform(rng, 0, 3) == 0 ? mps::kMode : hamicore::kMode);
      inventory.push_back(
          ModeGpu(name, i, mode, mig ? 81920 : 10000, Uniform(rng, 2, 6)));
    }
    AddNode(name, inventory, Uniform(rng, 0, 1) == 0 ? 0 : 8000);
    std::vector<std::string> uids;
    const int pods = Uniform(rng, 4, 10);
    for (int p = 0; uids.size() < static_cast<size_t>(pods) && p < 40; ++p) {
      PodRequest pod = MakePod(absl::StrCat(name, "-p", p),
                               {RandomContainer(rng, mig, gpus, "c")});
      pod.cpu_milli = 500 * Uniform(rng, 0, 4);
      if (Place(pod, name)) uids.push_back(pod.uid);
    }
    return uids;
  }

  // Whether the pending pod fits `node` without `victims`: the same fit
  // test the search uses, applied by hand.
  bool FitsWithout(const PodCycle& cycle, const NodeState& node,
                   const std::vector<std::string>& victims) {
    NodeState copy = node;
    for (const std::string& uid : victims) {
      for (const auto& backend : backends().all()) backend->Release(uid, copy);
      const PodRequest& request = state().FindPod(uid)->request;
      copy.SubtractHostUsage(request.cpu_milli, request.memory_mib);
    }
    return path().Filter(cycle, copy, /*explain=*/false).fit.fits();
  }

  using Key = std::tuple<size_t, int32_t, int64_t, std::vector<std::string>>;

  // The best allowed subset by the order, or nullopt when none fits.
  std::optional<Key> BruteForce(
      const PodCycle& cycle, const NodeState& node,
      const std::vector<VictimCandidate>& candidates,
      const std::map<std::string, int32_t, std::less<>>& left) {
    std::optional<Key> best;
    for (uint32_t mask = 0; mask < (1u << candidates.size()); ++mask) {
      std::vector<std::string> uids;
      std::map<std::string, int32_t> taken;
      int32_t max_priority = std::numeric_limits<int32_t>::lowest();
      int64_t freed = 0;
      bool allowed = true;
      for (size_t i = 0; i < candidates.size(); ++i) {
        if ((mask >> i & 1) == 0) continue;
        const VictimCandidate& c = candidates[i];
        const std::string& group = c.disruption_group;
        if (c.priority >= kPendingPriority || !c.evictable ||
            (!group.empty() && ++taken[group] > left.at(group))) {
          allowed = false;
          break;
        }
        uids.push_back(c.uid);
        max_priority = std::max(max_priority, c.priority);
        freed += FreedMilli(node, c.uid);
      }
      if (!allowed || !FitsWithout(cycle, node, uids)) continue;
      std::sort(uids.begin(), uids.end());
      Key key{uids.size(), max_priority, freed, uids};
      if (!best || key < *best) best = std::move(key);
    }
    return best;
  }
};

TEST_F(VictimPropertyTest, EqualsBruteForceOnRandomSmallNodes) {
  std::mt19937 rng(20240523);
  int found = 0, with_victims = 0, multi_victims = 0;
  for (int n = 0; n < kNodes; ++n) {
    const bool mig = Uniform(rng, 0, 3) == 0;
    const std::vector<std::string> uids = RandomNode(rng, n, mig);
    const std::string name = absl::StrCat("r", n);
    std::vector<VictimCandidate> candidates;
    std::map<std::string, int32_t, std::less<>> left = {
        {"g1", Uniform(rng, 0, 2)}, {"g2", Uniform(rng, 1, 3)}};
    for (const std::string& uid : uids) {
      static const char* const kGroups[] = {"", "", "g1", "g2"};
      candidates.push_back(VictimCandidate{uid, Uniform(rng, 0, 7),
                                           Uniform(rng, 0, 9) != 0,
                                           kGroups[Uniform(rng, 0, 3)]});
    }
    const int gpus = static_cast<int>(state().FindNode(name)->gpu_count());
    PodRequest pending = MakePod(absl::StrCat(name, "-pending"),
                                 {RandomContainer(rng, mig, gpus, "c0")});
    if (!mig && Uniform(rng, 0, 4) == 0) {
      pending.containers.push_back(RandomContainer(rng, mig, gpus, "c1"));
    }
    if (mig) pending.mode = mig::kMode;
    pending.cpu_milli = 500 * Uniform(rng, 0, 6);

    absl::StatusOr<VictimSet> set =
        Find(pending, kPendingPriority, name, candidates, left);
    ASSERT_OK(set);
    const NodeState& node = *state().FindNode(name);
    const std::optional<Key> want = BruteForce(cycle(), node, candidates, left);
    SCOPED_TRACE(absl::StrCat("node ", name, " pods ", uids.size()));
    EXPECT_TRUE(set->complete);
    ASSERT_EQ(set->found, want.has_value()) << set->reason;
    if (!want) continue;
    EXPECT_EQ(set->victims, std::get<3>(*want));
    EXPECT_EQ(set->max_priority, std::get<1>(*want));
    EXPECT_EQ(set->freed_milli, std::get<2>(*want));
    for (const VictimCandidate& c : candidates) {
      if (std::find(set->victims.begin(), set->victims.end(), c.uid) !=
          set->victims.end()) {
        EXPECT_LT(c.priority, kPendingPriority) << c.uid;
        EXPECT_TRUE(c.evictable) << c.uid;
      }
    }
    ++found;
    if (!set->victims.empty()) ++with_victims;
    if (set->victims.size() > 1) ++multi_victims;
  }
  // The generator must reach the interesting cases, or the test proves
  // little.
  EXPECT_GT(with_victims, kNodes / 10);
  EXPECT_GT(multi_victims, kNodes / 40);
  EXPECT_LT(found, kNodes);
  RecordProperty("found", found);
  RecordProperty("with_victims", with_victims);
  RecordProperty("multi_victims", multi_victims);
}

}  // namespace
}  // namespace deviceshare::preemption
