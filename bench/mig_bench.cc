// Micro benchmarks of the MIG placement search on one H100-80GB: one
// SlotSearch::Choose() per iteration for a few occupancy states and demand
// kinds (the budget is < 2 us per request per GPU), plus the one-off costs:
// SlotSearch::Create() and LayGeometry() of a knownMigGeometries group.
#include <cstdint>
#include <vector>

#include "benchmark/benchmark.h"
#include "deviceshare/config/scheduler_config.h"
#include "deviceshare/mig/geometry_layout.h"
#include "deviceshare/mig/mig_backend.h"
#include "deviceshare/mig/mig_catalog.h"
#include "deviceshare/mig/slot_search.h"

namespace deviceshare::mig {
namespace {

const MigModel& H100() { return *MigCatalog::Builtin().FindModel("H100-80GB"); }

// Occupancy states: what is on the GPU already.
struct State {
  uint32_t mask;
  std::vector<int32_t> counts;
};

State MakeState(int kind) {
  const MigModel& m = H100();
  State s{0, std::vector<int32_t>(m.profiles.size(), 0)};
  auto add = [&](const char* name, int32_t start) {
    const int p = m.ProfileIndex(name);
    s.mask |= m.profiles[p].MaskAt(start);
    ++s.counts[p];
  };
  if (kind == 1) {  // half full: 3g on the upper half
    add("3g.40gb", 4);
  } else if (kind == 2) {  // nearly full: one 1g slot left (slice 3)
    add("3g.40gb", 4);
    add("2g.20gb", 0);
    add("1g.10gb", 2);
  }
  return s;
}

MigDemand MakeDemand(int kind) {
  switch (kind) {
    case 0:
      return MigDemand{5000, 0, ""};  // 1g by memory
    case 1:
      return MigDemand{30000, 0, ""};  // 3g by memory
    case 2:
      return MigDemand{0, 50, ""};  // 4g by cores
    case 3:
      return MigDemand{0, 0, "MIG 2g.20gb"};  // named
    default:
      return MigDemand{90000, 0, ""};  // fits nowhere
  }
}

// Args: state (0 idle, 1 half full, 2 nearly full), demand (0..4 above).
void BM_Choose(benchmark::State& st) {
  const SlotSearch search = *SlotSearch::Create(H100());
  const State s = MakeState(static_cast<int>(st.range(0)));
  const MigDemand demand = MakeDemand(static_cast<int>(st.range(1)));
  for (auto _ : st) {
    benchmark::DoNotOptimize(search.Choose(s.mask, s.counts, demand));
  }
}
BENCHMARK(BM_Choose)
    ->ArgNames({"state", "demand"})
    ->ArgsProduct({{0, 1, 2}, {0, 1, 2, 3, 4}});

void BM_MayPlace(benchmark::State& st) {
  const SlotSearch search = *SlotSearch::Create(H100());
  const State s = MakeState(2);
  const MigDemand demand = MakeDemand(0);
  for (auto _ : st) {
    benchmark::DoNotOptimize(search.MayPlace(s.mask, demand));
  }
}
BENCHMARK(BM_MayPlace);

void BM_CreateSlotSearch(benchmark::State& st) {
  for (auto _ : st) {
    benchmark::DoNotOptimize(SlotSearch::Create(H100()));
  }
}
BENCHMARK(BM_CreateSlotSearch);

void BM_LayGeometry(benchmark::State& st) {
  const MigGeometry group{"group2",
                          {{"2g.20gb", 19968, 0, 3}, {"1g.10gb", 9728, 0, 1}}};
  for (auto _ : st) {
    benchmark::DoNotOptimize(LayGeometry(H100(), group));
  }
}
BENCHMARK(BM_LayGeometry);

// The whole backend on a one-GPU node: what one request costs the
// scheduler per MIG GPU (model lookup, the GPU's instances, the slot
// search, the ledger check, the score), with `held` 1g instances in use.
void BM_BackendFilterOneGpu(benchmark::State& st) {
  Config config;
  config.scheduler.enabled_modes = {mig::kMode};
  auto backend = NewMigBackend(config, MigCatalog::Builtin());
  Gpu gpu;
  gpu.uuid = "GPU-bench";
  gpu.model = "NVIDIA H100 80GB HBM3";
  gpu.memory_mib = 81559;
  gpu.mode = mig::kMode;
  NodeInventory inventory;
  inventory.name = "n1";
  inventory.gpus = {gpu};
  NodeState node(inventory);
  PodRequest request;
  request.uid = "p";
  request.name = "p";
  request.containers = {
      ContainerRequest{.name = "c", .gpu_count = 1, .memory_mib = 9216}};
  for (int i = 0; i < st.range(0); ++i) {
    PodRequest held = request;
    held.uid = held.name = "held-" + std::to_string(i);
    auto placed = (*backend)->Allocate(held, node, PlacementOptions{});
    if (!placed.ok()) st.SkipWithError("could not place the held instances");
  }
  PlacementOptions options;
  for (auto _ : st) {
    NodeFit fit = (*backend)->Filter(request, node, options);
    benchmark::DoNotOptimize(fit);
  }
}
BENCHMARK(BM_BackendFilterOneGpu)->Arg(0)->Arg(3)->Arg(6);

}  // namespace
}  // namespace deviceshare::mig
