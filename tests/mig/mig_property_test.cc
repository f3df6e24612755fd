// Randomised allocate / release / raw-commit sequences against the mig
// backend. After every step, every GPU's MIG shares must form a layout NVML
// would accept (mig::ValidateLayout: legal starts, no overlap, instance
// caps) and the ledgers' invariants must hold. In configMap mode every GPU
// must also stay inside one knownMigGeometries group, each position given
// once and where the geometry lays it.
//
// What breaking the backend does here (tried by hand): a Commit without
// the legal-start check lets a raw grant at an illegal start into the
// ledger, and a search plus Commit that ignore max_instances let a second
// +me in; ValidateLayout reports both within a few thousand steps. A Filter
// whose grant Commit refuses fails Place(); a configMap search that mixes
// groups or reuses a position fails the group checks. (A search that forgets
// the pod's own containers stays safe, the ledger's CheckPod refuses the
// overlap, and only the unit tests notice the lost capacity.)
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "deviceshare/mig/geometry_layout.h"
#include "deviceshare/mig/mig_backend.h"
#include "deviceshare/mig/mig_catalog.h"
#include "deviceshare/mig/mig_config.h"
#include "deviceshare/mig/mig_layout.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/mig_builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::MakeNodeState;
using ::deviceshare::testing::MigBackend;
using ::deviceshare::testing::MigGpu;
using ::deviceshare::testing::VolcanoA100Groups;

const mig::MigModel& ModelOf(const Gpu& gpu) {
  const mig::MigModel* model = mig::MigCatalog::Builtin().Match(gpu);
  EXPECT_NE(model, nullptr) << gpu.model;
  return *model;
}

// Every GPU's shares form a valid MIG layout; the node's invariants hold.
// Returns false (after reporting) when something is broken.
bool CheckLayouts(const NodeState& node, int step) {
  for (size_t pos = 0; pos < node.gpu_count(); ++pos) {
    const DeviceLedger& ledger = node.ledger(pos);
    const mig::MigModel& model = ModelOf(ledger.gpu());
    std::vector<mig::MigInstance> layout;
    int32_t holders = 0;
    bool ok = true;
    ledger.ForEachShare([&](const ContainerShare& share) {
      // A record naming no instance the GPU can place holds it whole.
      if (share.mig.holds_gpu) {
        ++holders;
        return;
      }
      if (!share.is_mig()) {
        ADD_FAILURE() << "step " << step << ": a non-MIG share on a MIG gpu";
        ok = false;
        return;
      }
      const int profile = model.ProfileIndex(share.mig.profile);
      if (profile < 0) {
        ADD_FAILURE() << "step " << step << ": unknown profile "
                      << share.mig.profile << " on " << model.name;
        ok = false;
        return;
      }
      if (share.mig.size != model.profiles[profile].memory_slices) {
        ADD_FAILURE() << "step " << step << ": " << share.mig.profile
                      << " recorded with size " << share.mig.size;
        ok = false;
      }
      layout.push_back({profile, share.mig.start});
    });
    if (!ok) return false;
    absl::Status valid = mig::ValidateLayout(model, layout);
    if (!valid.ok()) {
      ADD_FAILURE() << "step " << step << " gpu " << pos << ": " << valid;
      return false;
    }
    if (static_cast<int32_t>(layout.size()) + holders !=
        ledger.mig_instances()) {
      ADD_FAILURE() << "step " << step << ": instance count differs";
      return false;
    }
  }
  absl::Status invariants = node.CheckInvariants();
  if (!invariants.ok()) {
    ADD_FAILURE() << "step " << step << ": " << invariants;
    return false;
  }
  return true;
}

template <typename T, size_t N>
const T& Pick(std::mt19937& rng, const T (&items)[N]) {
  return items[std::uniform_int_distribution<size_t>(0, N - 1)(rng)];
}

int Uniform(std::mt19937& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

ContainerRequest RandomContainer(std::mt19937& rng, int index,
                                 const std::vector<std::string>& profiles,
                                 const std::vector<int64_t>& sizes,
                                 int max_gpus) {
  ContainerRequest c;
  c.name = absl::StrCat("c", index);
  c.gpu_count = Uniform(rng, 0, 9) < 8 ? 1 : max_gpus;
  const int kind = Uniform(rng, 0, 9);
  if (kind < 2) {
    c.mig_profile = profiles[Uniform(rng, 0, profiles.size() - 1)];
  } else if (kind < 3) {
    c.memory_percent = Uniform(rng, 1, 100);
  } else if (kind < 4) {
    // Whole card: memory and percent 0.
  } else {
    c.memory_mib = sizes[Uniform(rng, 0, sizes.size() - 1)];
  }
  if (Uniform(rng, 0, 3) == 0) c.cores = Uniform(rng, 0, 100);
  return c;
}

PodRequest RandomPod(std::mt19937& rng, int serial,
                     const std::vector<std::string>& profiles,
                     const std::vector<int64_t>& sizes, int max_gpus) {
  PodRequest pod = testing::MakePod(absl::StrCat("p", serial), {});
  pod.mode = mig::kMode;
  if (Uniform(rng, 0, 7) == 0) {
    ContainerRequest init = RandomContainer(rng, 0, profiles, sizes, 1);
    init.is_init = true;
    pod.containers.push_back(init);
  }
  const int apps = Uniform(rng, 1, 2);
  for (int i = 0; i < apps; ++i) {
    pod.containers.push_back(
        RandomContainer(rng, static_cast<int>(pod.containers.size()), profiles,
                        sizes, max_gpus));
  }
  return pod;
}

struct RunStats {
  int placed = 0;
  int refused = 0;
  int released = 0;
  int raw_committed = 0;
  int raw_rejected = 0;
  std::set<MigAction> actions;
};

// Allocates `pod` as the scheduler would (Filter, then Commit), checking
// the contract on the way. Returns whether it was placed.
bool Place(const SharingBackend& backend, const PodRequest& pod,
           NodeState& node, const PlacementOptions& options, int step,
           RunStats& stats, PodAllocation* placed) {
  const int64_t slots_before = node.total_used_slots();
  NodeFit fit = backend.Filter(pod, node, options);
  if (!fit.fits()) {
    ++stats.refused;
    EXPECT_EQ(node.total_used_slots(), slots_before) << "step " << step;
    return false;
  }
  EXPECT_TRUE(backend.MayFit(pod, node)) << "step " << step;
  const int score = backend.Score(node, fit.allocation, options);
  EXPECT_GE(score, 0) << "step " << step;
  EXPECT_LE(score, backend.ScoreUpperBound(pod, node, options))
      << "step " << step;
  absl::Status committed = backend.Commit(pod, fit.allocation, node);
  EXPECT_OK(committed) << "step " << step << ": Filter fit, Commit refused";
  if (!committed.ok()) return false;
  for (const ContainerAllocation& c : fit.allocation.containers) {
    for (const DeviceGrant& g : c.devices) stats.actions.insert(g.mig_action);
  }
  ++stats.placed;
  *placed = std::move(fit.allocation);
  return true;
}

TEST(MigPropertyTest, PlacementModeLayoutsStayValid) {
  Gpu h0 = MigGpu(0, "NVIDIA H100 80GB HBM3", 81559, "GPU-p-");
  Gpu h1 = MigGpu(1, "NVIDIA H100 80GB HBM3", 81559, "GPU-p-");
  Gpu h2 = MigGpu(2, "NVIDIA H100 80GB HBM3", 81559, "GPU-p-");
  // GPU 2 already has instances: reuse, create around them, repartition.
  h2.mig_instances = {MigSlot{"3g.40gb", 0, 4, "", -1},
                      MigSlot{"2g.20gb", 4, 2, "", -1},
                      MigSlot{"1g.10gb", 6, 1, "", -1}};
  Gpu a30 = MigGpu(3, "NVIDIA A30", 24576, "GPU-p-");
  a30.mig_instances = {MigSlot{"2g.12gb", 0, 2, "", -1}};
  NodeState node = MakeNodeState({h0, h1, h2, a30});
  std::unique_ptr<SharingBackend> backend = MigBackend(Config{});
  ASSERT_NE(backend, nullptr);

  const std::vector<std::string> profiles = {
      "1g.10gb",    "1g.10gb+me", "1g.20gb", "2g.20gb",   "3g.40gb",
      "4g.40gb",    "7g.80gb",    "1g.6gb",  "1g.6gb+me", "2g.12gb",
      "2g.12gb+me", "4g.24gb",    "9g.99gb"};
  const std::vector<int64_t> sizes = {500,   5000,  5952,  9216,  9984,
                                      12000, 19000, 20096, 24000, 30000,
                                      40448, 60000, 81152, 90000};
  std::mt19937 rng(20240611);
  std::map<std::string, PodRequest> live;
  RunStats stats;
  PlacementOptions options;
  constexpr int kSteps = 20000;
  for (int step = 0; step < kSteps; ++step) {
    options.node_policy = step % 2 == 0 ? &BinpackPolicy() : &SpreadPolicy();
    options.gpu_policy = step % 3 == 0 ? &SpreadPolicy() : &BinpackPolicy();
    const int action = Uniform(rng, 0, 99);
    if (action < 50) {
      PodRequest pod = RandomPod(rng, step, profiles, sizes, 2);
      PodAllocation placed;
      if (Place(*backend, pod, node, options, step, stats, &placed)) {
        live.emplace(pod.uid, pod);
      }
    } else if (action < 90) {
      if (live.empty()) continue;
      auto it = live.begin();
      std::advance(it, Uniform(rng, 0, live.size() - 1));
      backend->Release(it->first, node);
      for (size_t pos = 0; pos < node.gpu_count(); ++pos) {
        EXPECT_FALSE(node.ledger(pos).HasPod(it->first)) << "step " << step;
      }
      live.erase(it);
      ++stats.released;
    } else {
      // A grant as a decoded annotation might carry it: any profile name,
      // any start, any size. Commit charges an instance it cannot place as
      // holding the whole GPU (never a layout that is not valid), and
      // refuses one that overlaps what is there.
      const size_t pos = Uniform(rng, 0, node.gpu_count() - 1);
      const mig::MigModel& model = ModelOf(node.inventory().gpus[pos]);
      DeviceGrant grant;
      grant.uuid = node.inventory().gpus[pos].uuid;
      grant.mode = mig::kMode;
      grant.memory_mib = 1000;
      grant.cores = 10;
      const int p = Uniform(rng, 0, model.profiles.size());
      grant.mig.profile = p < static_cast<int>(model.profiles.size())
                              ? model.profiles[p].name
                              : "5g.50gb";
      // Decoded names need not be canonical.
      if (Uniform(rng, 0, 3) == 0) {
        grant.mig.profile = absl::StrCat("MIG ", grant.mig.profile);
      } else if (Uniform(rng, 0, 2) == 0) {
        grant.mig.profile = absl::AsciiStrToUpper(grant.mig.profile);
      }
      grant.mig.start = Uniform(rng, 0, model.memory_slices);
      grant.mig.size = Uniform(rng, 0, 2) == 0 ? Uniform(rng, 1, 8) : 0;
      PodRequest pod = testing::MakePod(absl::StrCat("raw", step),
                                        {testing::GpuContainer("c0", 1, 1000)});
      pod.mode = mig::kMode;
      PodAllocation allocation;
      allocation.pod_uid = pod.uid;
      allocation.pod_key = pod.Key();
      allocation.node_name = "n1";
      allocation.containers.push_back(testing::Container(0, false, {grant}));
      if (backend->Commit(pod, allocation, node).ok()) {
        live.emplace(pod.uid, pod);
        ++stats.raw_committed;
      } else {
        ++stats.raw_rejected;
      }
    }
    if (!CheckLayouts(node, step)) return;
  }
  // The run must have exercised both outcomes and every hardware action.
  EXPECT_GT(stats.placed, kSteps / 5);
  EXPECT_GT(stats.refused, kSteps / 50);
  EXPECT_GT(stats.raw_committed, 50);
  EXPECT_GT(stats.raw_rejected, 50);
  EXPECT_TRUE(stats.actions.contains(MigAction::kCreate));
  EXPECT_TRUE(stats.actions.contains(MigAction::kReuse));
  EXPECT_TRUE(stats.actions.contains(MigAction::kRepartition));

  // Releasing everything leaves the node empty.
  for (const auto& [uid, pod] : live) backend->Release(uid, node);
  EXPECT_EQ(node.total_used_slots(), 0);
  for (size_t pos = 0; pos < node.gpu_count(); ++pos) {
    EXPECT_EQ(node.ledger(pos).mig_mask(), 0u);
  }
}

TEST(MigPropertyTest, ConfigMapModeKeepsOneGroupAndDistinctPositions) {
  mig::MigConfig mig;
  mig.search = mig::MigSearch::kConfigMap;
  mig.known_geometries = {
      mig::KnownMigGeometries{{"A100-SXM4-80GB"}, VolcanoA100Groups()}};
  std::unique_ptr<SharingBackend> backend =
      MigBackend(mig::WithMigConfig(Config{}, mig));
  ASSERT_NE(backend, nullptr);

  std::vector<Gpu> gpus;
  for (int i = 0; i < 4; ++i) {
    gpus.push_back(MigGpu(i, "NVIDIA A100-SXM4-80GB", 81920, "GPU-p-"));
  }
  for (int s = 0; s < 7; ++s) {
    gpus[3].mig_instances.push_back(MigSlot{"1g.10gb", s, 1, "", -1});
  }
  NodeState node = MakeNodeState(gpus);
  const mig::MigModel& model = ModelOf(gpus[0]);
  std::map<std::string, std::vector<mig::GeometrySlot>> laid;
  for (const mig::MigGeometry& geometry : VolcanoA100Groups()) {
    absl::StatusOr<std::vector<mig::GeometrySlot>> slots =
        mig::LayGeometry(model, geometry);
    ASSERT_OK(slots);
    laid[geometry.group] = *slots;
  }

  const std::vector<std::string> profiles = {"1g.10gb", "2g.20gb", "3g.40gb",
                                             "7g.80gb", "4g.40gb"};
  const std::vector<int64_t> sizes = {1000,  9000,  9728,  12000, 19968,
                                      30000, 40192, 60000, 80896};
  std::mt19937 rng(7);
  std::map<std::string, PodRequest> live;
  RunStats stats;
  PlacementOptions options;
  constexpr int kSteps = 6000;
  for (int step = 0; step < kSteps; ++step) {
    if (Uniform(rng, 0, 99) < 55) {
      PodRequest pod = RandomPod(rng, step, profiles, sizes, 2);
      PodAllocation placed;
      if (Place(*backend, pod, node, options, step, stats, &placed)) {
        for (const ContainerAllocation& c : placed.containers) {
          for (const DeviceGrant& g : c.devices) {
            ASSERT_TRUE(laid.contains(g.mig.group)) << "step " << step;
            ASSERT_LT(g.mig.position,
                      static_cast<int32_t>(laid[g.mig.group].size()));
            EXPECT_EQ(g.memory_mib,
                      laid[g.mig.group][g.mig.position].memory_mib);
          }
        }
        live.emplace(pod.uid, pod);
      }
    } else if (!live.empty()) {
      auto it = live.begin();
      std::advance(it, Uniform(rng, 0, live.size() - 1));
      backend->Release(it->first, node);
      live.erase(it);
      ++stats.released;
    }
    if (!CheckLayouts(node, step)) return;
    for (size_t pos = 0; pos < node.gpu_count(); ++pos) {
      std::set<std::string> groups;
      std::set<int32_t> positions;
      bool ok = true;
      node.ledger(pos).ForEachShare([&](const ContainerShare& share) {
        groups.insert(share.mig.group);
        auto slots = laid.find(share.mig.group);
        if (slots == laid.end() || share.mig.position < 0 ||
            static_cast<size_t>(share.mig.position) >= slots->second.size()) {
          ADD_FAILURE() << "step " << step << ": share outside the groups "
                        << share.mig.group << "-" << share.mig.position;
          ok = false;
          return;
        }
        const mig::GeometrySlot& slot = slots->second[share.mig.position];
        EXPECT_EQ(share.mig.profile, model.profiles[slot.profile].name);
        EXPECT_EQ(share.mig.start, slot.start);
        if (!positions.insert(share.mig.position).second) {
          ADD_FAILURE() << "step " << step << " gpu " << pos << ": position "
                        << share.mig.position << " given twice";
          ok = false;
        }
      });
      if (groups.size() > 1) {
        ADD_FAILURE() << "step " << step << " gpu " << pos
                      << ": more than one group in use";
        ok = false;
      }
      if (!ok) return;
    }
  }
  EXPECT_GT(stats.placed, kSteps / 5);
  EXPECT_GT(stats.refused, kSteps / 50);
  EXPECT_TRUE(stats.actions.contains(MigAction::kReuse));
  EXPECT_TRUE(stats.actions.contains(MigAction::kRepartition));
}

}  // namespace
}  // namespace deviceshare
