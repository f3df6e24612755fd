// Golden end-to-end tests of `simulate --output json` with the mig and mps
// backends and the automatic mode choice. Expected slots follow the MIG
// placement tables (docs/reference/mig-mps-nvml.md §1.2) and the search rules
// in mig/slot_search.h.
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simulate_fixtures.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::Docs;
using ::deviceshare::testing::Gpus;
using ::deviceshare::testing::PlacementOf;
using ::deviceshare::testing::PodYaml;
using ::deviceshare::testing::ShortCluster;
using ::deviceshare::testing::ShortNode;
using ::deviceshare::testing::SimulateJson;
using ::deviceshare::testing::UnschedulableOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Json = nlohmann::ordered_json;

constexpr char kH100[] = "NVIDIA H100 80GB HBM3";
constexpr int64_t kH100MiB = 81559;

std::string MigH100Cluster(int gpus) {
  return ShortCluster(
      {ShortNode("n1", Gpus("n1", gpus, kH100MiB, kH100, "mode: mig"))});
}

// The only device of `pod`'s first container.
Json DeviceOf(const Json& report, const std::string& pod) {
  Json placement = PlacementOf(report, pod);
  if (placement.is_null()) return nullptr;
  return placement["containers"][0]["devices"][0];
}

std::string Pods(const std::string& prefix, int count,
                 const std::string& limits) {
  std::vector<std::string> pods;
  for (int i = 1; i <= count; ++i) {
    pods.push_back(PodYaml(absl::StrCat(prefix, i), limits));
  }
  return Docs(pods);
}

TEST(SimulateMigTest, SevenNineGiBPodsGetSevenDistinct1gSlotsAndTheEighthNot) {
  auto report =
      SimulateJson(MigH100Cluster(1),
                   Pods("p", 8, "nvidia.com/gpu: 1, nvidia.com/gpumem: 9216"),
                   "scheduler: {modes: [mig]}\n");
  ASSERT_OK(report);
  std::set<int> starts;
  for (int i = 1; i <= 7; ++i) {
    Json device = DeviceOf(*report, absl::StrCat("p", i));
    ASSERT_FALSE(device.is_null()) << "p" << i;
    EXPECT_EQ(device["mode"], "mig");
    EXPECT_EQ(device["mig_profile"], "1g.10gb");
    EXPECT_EQ(device["memory_mib"], 9984);  // the instance's, not the ask
    starts.insert(device["mig_start"].get<int>());
  }
  EXPECT_EQ(starts, (std::set<int>{0, 1, 2, 3, 4, 5, 6}));
  // The first instance keeps the low slices free for 4g and 7g.
  EXPECT_EQ(DeviceOf(*report, "p1")["mig_start"], 6);
  Json eighth = UnschedulableOf(*report, "p8");
  ASSERT_FALSE(eighth.is_null());
  EXPECT_EQ(eighth["reason_counts"], Json::parse(R"({"MigNoSlot": 1})"));
  EXPECT_THAT(eighth["reasons"]["n1"].get<std::string>(),
              StartsWith("MigNoSlot"));
}

TEST(SimulateMigTest, A3gThenA4gSizedPodBothFitOnOneIdleH100) {
  auto report = SimulateJson(
      MigH100Cluster(1),
      Docs({PodYaml("three", "nvidia.com/gpu: 1, nvidia.com/gpumem: 40448"),
            PodYaml("four",
                    "nvidia.com/gpu: 1, nvidia.com/gpumem: 40448, "
                    "nvidia.com/gpucores: 50")}),
      "scheduler: {modes: [mig]}\n");
  ASSERT_OK(report);
  Json three = DeviceOf(*report, "three");
  Json four = DeviceOf(*report, "four");
  ASSERT_FALSE(three.is_null());
  ASSERT_FALSE(four.is_null());
  EXPECT_EQ(three["mig_profile"], "3g.40gb");
  EXPECT_EQ(three["mig_start"], 4);  // not 0: 4g has no other start
  EXPECT_EQ(four["mig_profile"], "4g.40gb");
  EXPECT_EQ(four["mig_start"], 0);
  EXPECT_EQ(four["cores"], 57);  // 4 of 7 compute slices
}

TEST(SimulateMigTest, ConfigMapSearchFollowsGroupOrderAndKeepsTheGroup) {
  const std::string config = R"(scheduler: {modes: [mig], migSearch: configmap}
nvidia:
  knownMigGeometries:
  - models: ["A100-SXM4-80GB"]
    allowedGeometries:
    - group: group1
      geometries: [{name: 1g.10gb, memory: 9728, count: 7}]
    - group: group2
      geometries: [{name: 2g.20gb, memory: 19968, count: 3},
                   {name: 1g.10gb, memory: 9728, count: 1}]
    - group: group3
      geometries: [{name: 3g.40gb, memory: 40192, count: 2}]
    - group: group4
      geometries: [{name: 7g.80gb, memory: 80896, count: 1}]
)";
  const std::string cluster = ShortCluster({ShortNode(
      "n1", Gpus("n1", 2, 81920, "NVIDIA A100-SXM4-80GB", "mode: mig"))});
  auto report = SimulateJson(
      cluster,
      Docs({PodYaml("small", "nvidia.com/gpu: 1, nvidia.com/gpumem: 9000"),
            PodYaml("big", "nvidia.com/gpu: 1, nvidia.com/gpumem: 30000"),
            PodYaml("small2", "nvidia.com/gpu: 1, nvidia.com/gpumem: 9000")}),
      config);
  ASSERT_OK(report);
  Json small = DeviceOf(*report, "small");
  Json big = DeviceOf(*report, "big");
  Json small2 = DeviceOf(*report, "small2");
  ASSERT_FALSE(small.is_null());
  ASSERT_FALSE(big.is_null());
  ASSERT_FALSE(small2.is_null());
  // The first group that holds 9000 MiB is group1.
  EXPECT_EQ(small["uuid"], "GPU-n1-0");
  EXPECT_EQ(small["mig_group"], "group1");
  EXPECT_EQ(small["mig_position"], 0);
  EXPECT_EQ(small["memory_mib"], 9728);  // the config's memory
  // GPU 0 is committed to group1, which has nothing of 30000 MiB; on the
  // idle GPU 1, group3 is the first that does.
  EXPECT_EQ(big["uuid"], "GPU-n1-1");
  EXPECT_EQ(big["mig_group"], "group3");
  EXPECT_EQ(big["mig_profile"], "3g.40gb");
  // Another small pod stays in group1 and never reuses position 0.
  EXPECT_EQ(small2["uuid"], "GPU-n1-0");
  EXPECT_EQ(small2["mig_group"], "group1");
  EXPECT_EQ(small2["mig_position"], 1);
  EXPECT_NE(small2["mig_start"], small["mig_start"]);
}

// Kind 5 of the upstream inventory. Volcano accepts a knownMigGeometries
// group with no geometries and matches nothing from it (mig_test.go:99
// TestFindMatch "Empty geometry list"); the other groups still serve.
TEST(SimulateMigTest, AnEmptyGeometryGroupMatchesNothingAndOthersServe) {
  const std::string config = R"(scheduler: {modes: [mig], migSearch: configmap}
nvidia:
  knownMigGeometries:
  - models: ["A100-SXM4-80GB"]
    allowedGeometries:
    - group: group0
      geometries: []
    - group: group1
      geometries: [{name: 1g.10gb, memory: 9728, count: 7}]
)";
  auto report = SimulateJson(
      ShortCluster({ShortNode(
          "n1", Gpus("n1", 1, 81920, "NVIDIA A100-SXM4-80GB", "mode: mig"))}),
      PodYaml("small", "nvidia.com/gpu: 1, nvidia.com/gpumem: 9000"), config);
  ASSERT_OK(report);
  EXPECT_EQ(DeviceOf(*report, "small")["mig_group"], "group1");
}

// Kind 4 of the upstream inventory. A container asking nvidia.com/gpu: 2
// of a node with one MIG GPU gets two distinct instances of it, as HAMi
// gives (mig_allocation_test.go:207
// TestFitInDevicesAllowsMultipleMigPlacementsOnSingleGPU); a hami-core GPU
// still counts once (:256 ...RetainsPhysicalCountCheckForNonMigGPU).
TEST(SimulateMigTest, TwoInstancesOfOneMigGpuServeAGpuCountOfTwo) {
  const std::string config = "scheduler: {modes: [hami-core, mig]}\n";
  auto report = SimulateJson(
      ShortCluster({ShortNode(
          "n1", Gpus("n1", 1, 40960, "NVIDIA A100-SXM4-40GB", "mode: mig"))}),
      PodYaml("pair", "nvidia.com/gpu: 2, nvidia.com/gpumem: 4000",
              "nvidia.com/vgpu-mode: mig"),
      config);
  ASSERT_OK(report);
  const Json devices = PlacementOf(*report, "pair")["containers"][0]["devices"];
  ASSERT_EQ(devices.size(), 2) << report->dump(1);
  EXPECT_EQ(devices[0]["uuid"], "GPU-n1-0");
  EXPECT_EQ(devices[1]["uuid"], "GPU-n1-0");
  EXPECT_NE(devices[0]["mig_start"], devices[1]["mig_start"]);

  auto whole = SimulateJson(
      ShortCluster({ShortNode("n1", Gpus("n1", 1, 40960))}),
      PodYaml("pair", "nvidia.com/gpu: 2, nvidia.com/gpumem: 4000"), config);
  ASSERT_OK(whole);
  EXPECT_THAT(UnschedulableOf(*whole, "pair").dump(),
              HasSubstr("InsufficientGpus"));
}

// --- Kind 5 of the upstream inventory: Volcano's dynamic MIG -------------
// (docs/reference/upstream-cases.md §G). The config, node and pods are
// Volcano's: knownMigGeometries groups for the A100-80GB, a node registered
// in volcano.sh/node-vgpu-register, pods asking volcano.sh/vgpu-*.

constexpr char kVolcanoMigConfig[] =
    R"(scheduler: {modes: [hami-core, mig], migSearch: configmap}
nvidia:
  knownMigGeometries:
  - models: ["A100-SXM4-80GB", "A100-80GB-PCIe", "A100-PCIE-80GB"]
    allowedGeometries:
    - group: group1
      geometries: [{name: 1g.10gb, memory: 9728, count: 7}]
    - group: group2
      geometries: [{name: 2g.20gb, memory: 19968, count: 3},
                   {name: 1g.10gb, memory: 9728, count: 1}]
    - group: group3
      geometries: [{name: 3g.40gb, memory: 40192, count: 2}]
    - group: group4
      geometries: [{name: 7g.80gb, memory: 80896, count: 1}]
)";

// Node n with one GPU GPU-a of `type`, registered `mig` in Volcano's
// dialect.
std::string VolcanoMigNode(
    const std::string& type = "NVIDIA-NVIDIA A100-SXM4-80GB") {
  return absl::StrCat(
      "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  annotations:\n"
      "    volcano.sh/node-vgpu-register: 'GPU-a,10,81920,",
      type, ",true,mig:'\n");
}

// Volcano limits for one GPU of `memory` MiB and `cores` %.
std::string VolcanoAsk(int memory, int cores = 0) {
  return absl::StrCat("volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: ",
                      memory, ", volcano.sh/vgpu-cores: ", cores);
}

constexpr char kVolcanoMig[] = "volcano.sh/vgpu-mode: mig";

// Volcano's mig.go TryAddPod/findMatch choose by memory alone (row G6; the
// cores are charged, never matched): 10 MiB with vgpu-cores 50 takes the
// first 1g.10gb of group1, not the 7g.80gb that holds 50% of the SMs.
TEST(SimulateVolcanoMigTest, CoresDoNotChooseTheInstance) {
  auto report =
      SimulateJson(VolcanoMigNode(),
                   Docs({PodYaml("cores", VolcanoAsk(10, 50), kVolcanoMig),
                         PodYaml("next", VolcanoAsk(10), kVolcanoMig)}),
                   kVolcanoMigConfig);
  ASSERT_OK(report);
  const Json cores = DeviceOf(*report, "cores");
  ASSERT_FALSE(cores.is_null()) << report->dump(1);
  EXPECT_EQ(cores["mig_group"], "group1");
  EXPECT_EQ(cores["mig_position"], 0);
  EXPECT_EQ(cores["mig_profile"], "1g.10gb");
  EXPECT_EQ(cores["memory_mib"], 9728);  // the ledger charges the instance
  // The GPU is not full: the next pod gets the next 1g.10gb.
  EXPECT_EQ(DeviceOf(*report, "next")["mig_position"], 1);
}

// Pod "bound" on node n with the record Volcano writes for a 10 MiB ask
// given group1's first instance.
std::string BoundToGroup1Position0() {
  return absl::StrCat(
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bound\n"
      "  namespace: default\n  annotations:\n"
      "    volcano.sh/vgpu-mode: mig\n"
      "    volcano.sh/vgpu-ids-new: 'GPU-a[group1-0],NVIDIA,10,0:'\n"
      "spec:\n  nodeName: n\n  containers:\n  - name: main\n    image: x\n"
      "    resources:\n      limits: {",
      VolcanoAsk(10), "}\n");
}

// A record Volcano writes carries the request's figures
// (mig_test.go:37 TestFindMatch "Match 1g.10gb and available" and
// utils.go encodePodDevices, row G1); read back it still holds the whole
// instance it names (addMigUsed, row G8): group1 is committed, position 0
// is taken, and the GPU is charged 9728 MiB for it, not 10.
TEST(SimulateVolcanoMigTest, RecordWithTheRequestFiguresHoldsTheWholeSlot) {
  const std::string bound = BoundToGroup1Position0();
  auto report =
      SimulateJson(VolcanoMigNode(),
                   Docs({bound, PodYaml("next", VolcanoAsk(10), kVolcanoMig)}),
                   kVolcanoMigConfig);
  ASSERT_OK(report);
  const Json next = DeviceOf(*report, "next");
  ASSERT_FALSE(next.is_null()) << report->dump(1);
  EXPECT_EQ(next["mig_group"], "group1");
  EXPECT_EQ(next["mig_position"], 1);
  EXPECT_EQ((*report)["summary"]["gpu_memory_allocated_mib"], 2 * 9728);
}

// Volcano's decodeNodeDevices (utils.go) serves a `mig` device whose type
// no knownMigGeometries entry lists as hami-core (row G9): a pod that names
// no mode fits it as hami-core, a MIG pod stays pending (row G10).
TEST(SimulateVolcanoMigTest, UnlistedModelFallsBackToHamiCore) {
  auto report =
      SimulateJson(VolcanoMigNode("NVIDIA-NVIDIA A100 80GB PCIe"),
                   Docs({PodYaml("plain", VolcanoAsk(1000)),
                         PodYaml("mig", VolcanoAsk(1000), kVolcanoMig)}),
                   kVolcanoMigConfig);
  ASSERT_OK(report);
  const Json plain = DeviceOf(*report, "plain");
  ASSERT_FALSE(plain.is_null()) << report->dump(1);
  EXPECT_EQ(plain["mode"], "hami-core");
  EXPECT_EQ(plain["memory_mib"], 1000);
  EXPECT_FALSE(UnschedulableOf(*report, "mig").is_null());

  // A listed model keeps its mode: the pod naming none gets an instance.
  auto listed = SimulateJson(
      VolcanoMigNode(), PodYaml("plain", VolcanoAsk(1000)), kVolcanoMigConfig);
  ASSERT_OK(listed);
  EXPECT_EQ(DeviceOf(*listed, "plain")["mode"], "mig");
}

// A deliberate difference (docs/compatibility.md row 14): Volcano's
// TryAddPod adds the cores a pod asks to a MIG GPU's used cores and stops
// it at 100, so two 50-core pods fill it; deviceshare charges each instance
// its own SM share (1g: 14 %) and places a third on a free instance.
TEST(SimulateVolcanoMigTest, CoresAskedDoNotCapTheInstances) {
  auto report =
      SimulateJson(VolcanoMigNode(),
                   Docs({PodYaml("a", VolcanoAsk(10, 50), kVolcanoMig),
                         PodYaml("b", VolcanoAsk(10, 50), kVolcanoMig),
                         PodYaml("c", VolcanoAsk(10, 50), kVolcanoMig)}),
                   kVolcanoMigConfig);
  ASSERT_OK(report);
  EXPECT_EQ((*report)["summary"]["placed"], 3) << report->dump(1);
  EXPECT_EQ(DeviceOf(*report, "c")["mig_position"], 2);
  EXPECT_EQ(DeviceOf(*report, "c")["cores"], 14);
}

// Volcano serves a MIG GPU from the configMap alone (its MIG utils match
// the entry by substring of the type): an A800, which deviceshare's
// built-in catalog lacks, takes MIG pods from the entry naming it, and its
// running pods' records are charged. Before, the GPU could not be
// scheduled and its running pods were ignored, so it looked idle.
TEST(SimulateVolcanoMigTest, AModelOnlyTheConfigMapNamesIsServed) {
  const std::string config = absl::StrReplaceAll(
      kVolcanoMigConfig,
      {{R"(["A100-SXM4-80GB", "A100-80GB-PCIe", "A100-PCIE-80GB"])",
        R"(["A800-SXM4-80GB"])"}});
  const std::string bound = BoundToGroup1Position0();
  auto report = SimulateJson(
      VolcanoMigNode("NVIDIA-NVIDIA A800-SXM4-80GB"),
      Docs({bound, PodYaml("next", VolcanoAsk(10), kVolcanoMig)}), config);
  ASSERT_OK(report);
  EXPECT_TRUE((*report)["unaccounted"].empty()) << report->dump(1);
  const Json next = DeviceOf(*report, "next");
  ASSERT_FALSE(next.is_null()) << report->dump(1);
  EXPECT_EQ(next["mode"], "mig");
  EXPECT_EQ(next["mig_group"], "group1");
  EXPECT_EQ(next["mig_position"], 1);
  EXPECT_EQ(next["mig_profile"], "1g.10gb");
  EXPECT_EQ((*report)["summary"]["gpu_memory_allocated_mib"], 2 * 9728);
}

TEST(SimulateMpsTest, FortyEightClientsFitOnAGpuAndTheFortyNinthDoesNot) {
  const std::string cluster = ShortCluster({ShortNode(
      "n1", Gpus("n1", 1, kH100MiB, kH100, "mode: mps, split: 64"))});
  auto report = SimulateJson(
      cluster,
      Pods("c", 49,
           "nvidia.com/gpu: 1, nvidia.com/gpumem: 1000, nvidia.com/gpucores: "
           "2"),
      "scheduler: {modes: [mps]}\n");
  ASSERT_OK(report);
  EXPECT_EQ((*report)["summary"]["placed"], 48);
  Json last = UnschedulableOf(*report, "c49");
  ASSERT_FALSE(last.is_null());
  EXPECT_EQ(last["reason_counts"],
            Json::parse(R"({"MpsClientsExhausted": 1})"));
  Json first = PlacementOf(*report, "c1")["containers"][0];
  EXPECT_EQ(first["devices"][0]["mode"], "mps");
  const Json& env = first["env"];
  EXPECT_EQ(env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"], "2");
  EXPECT_EQ(env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"], "0=1000M");
  EXPECT_EQ(env["CUDA_MPS_PIPE_DIRECTORY"], "/tmp/nvidia-mps");
  EXPECT_EQ(env["CUDA_MPS_LOG_DIRECTORY"], "/tmp/nvidia-log");
  EXPECT_EQ(env["NVIDIA_VISIBLE_DEVICES"], "GPU-n1-0");
  EXPECT_FALSE(env.contains("CUDA_DEVICE_SM_LIMIT"));  // not hami-core
}

// A node of MIG H100s, a node of MPS A100s, and a pod naming each mode.
std::string MigNodeAndMpsNode() {
  return ShortCluster(
      {ShortNode("mig-node", Gpus("mig-node", 1, kH100MiB, kH100, "mode: mig")),
       ShortNode("mps-node", Gpus("mps-node", 1, 81920, "NVIDIA A100-SXM4-80GB",
                                  "mode: mps"))});
}
std::string MigPodAndMpsPod() {
  return Docs({PodYaml("infer", "nvidia.com/gpu: 1, nvidia.com/gpumem: 9000",
                       "nvidia.com/vgpu-mode: mig"),
               PodYaml("batch", "nvidia.com/gpu: 1, nvidia.com/gpumem: 9000",
                       "nvidia.com/vgpu-mode: mps")});
}

// Without scheduler.modes every registered backend is enabled: a GPU is
// served in the mode it registers, with no configuration.
TEST(SimulateModesTest, RegisteredModesAreServedWithoutSchedulerModes) {
  for (const std::string config : {"", "scheduler: {nodePolicy: binpack}\n"}) {
    SCOPED_TRACE(config);
    auto report = SimulateJson(
        MigNodeAndMpsNode(),
        Docs({MigPodAndMpsPod(),
              PodYaml("any", "nvidia.com/gpu: 1, nvidia.com/gpumem: 9000")}),
        config);
    ASSERT_OK(report);
    EXPECT_EQ((*report)["summary"]["placed"], 3);
    EXPECT_EQ(PlacementOf(*report, "infer")["node"], "mig-node");
    EXPECT_EQ(DeviceOf(*report, "infer")["mode"], "mig");
    EXPECT_EQ(DeviceOf(*report, "infer")["mig_profile"], "1g.10gb");
    EXPECT_EQ(PlacementOf(*report, "batch")["node"], "mps-node");
    EXPECT_EQ(DeviceOf(*report, "batch")["mode"], "mps");
    // A pod that names no mode: an MPS share strands nothing, a 1g.10gb
    // instance its spare memory and SMs.
    EXPECT_EQ(DeviceOf(*report, "any")["mode"], "mps");
  }
}

// Every mode is enabled, but a pod is offered only to the backends of
// modes some GPU runs: on a hami-core cluster nothing is chosen between.
TEST(SimulateModesTest, AHamiCoreClusterHasNoModeChoiceToExplain) {
  auto report =
      SimulateJson(ShortCluster({ShortNode("n1", Gpus("n1", 2))}),
                   PodYaml("p", "nvidia.com/gpu: 1, nvidia.com/gpumem: 9000"));
  ASSERT_OK(report);
  Json placed = PlacementOf(*report, "p");
  ASSERT_FALSE(placed.is_null());
  EXPECT_EQ(DeviceOf(*report, "p")["mode"], "hami-core");
  EXPECT_FALSE(placed.contains("mode_choice")) << placed["mode_choice"];
}

// scheduler.modes narrows: a GPU of a mode it leaves off takes no pod.
TEST(SimulateModesTest, SchedulerModesNarrowsTheEnabledBackends) {
  auto report = SimulateJson(MigNodeAndMpsNode(), MigPodAndMpsPod(),
                             "scheduler: {modes: [hami-core]}\n");
  ASSERT_OK(report);
  EXPECT_EQ((*report)["summary"]["placed"], 0);
  for (const auto& [pod, mode] :
       {std::pair<std::string, std::string>{"infer", "mig"},
        {"batch", "mps"}}) {
    Json failed = UnschedulableOf(*report, pod);
    ASSERT_FALSE(failed.is_null()) << pod;
    for (const std::string node : {"mig-node", "mps-node"}) {
      EXPECT_EQ(failed["reasons"][node],
                absl::StrCat("ModeMismatch mode ", mode,
                             " is not enabled in this scheduler"))
          << pod << " on " << node;
    }
  }
}

TEST(SimulateModeChoiceTest, AMixedNodeChoosesTheModeThatStrandsLeast) {
  // GPU 0 is shared by hami-core, GPU 1 is a MIG H100; the pods name no
  // mode.
  const std::string cluster = ShortCluster({ShortNode(
      "mixed", absl::StrCat(Gpus("mixed", 1, 81920, "NVIDIA A100-SXM4-80GB"),
                            Gpus("mixed", 1, kH100MiB, kH100, "mode: mig",
                                 /*first=*/1)))});
  auto report = SimulateJson(
      cluster,
      Docs({PodYaml("large", "nvidia.com/gpu: 1, nvidia.com/gpumem: 75000"),
            PodYaml("next", "nvidia.com/gpu: 1, nvidia.com/gpumem: 20000")}),
      "scheduler: {modes: [hami-core, mig]}\n");
  ASSERT_OK(report);
  // Both backends fit "large"; a 7g.80gb instance would strand its spare
  // memory and all the SMs the pod did not ask for.
  Json large = PlacementOf(*report, "large");
  ASSERT_FALSE(large.is_null());
  EXPECT_EQ(large["containers"][0]["devices"][0]["mode"], "hami-core");
  EXPECT_THAT(large["mode_choice"].get<std::string>(),
              HasSubstr("mode hami-core chosen"));
  EXPECT_THAT(large["mode_choice"].get<std::string>(),
              HasSubstr("mig: fits, strands"));
  // Now only the MIG GPU holds 20000 MiB: the choice says why.
  Json next = PlacementOf(*report, "next");
  ASSERT_FALSE(next.is_null());
  Json device = next["containers"][0]["devices"][0];
  EXPECT_EQ(device["mode"], "mig");
  EXPECT_EQ(device["mig_profile"], "1g.20gb");
  EXPECT_THAT(next["mode_choice"].get<std::string>(),
              HasSubstr("mode mig chosen"));
  EXPECT_THAT(next["mode_choice"].get<std::string>(),
              HasSubstr("InsufficientMemory"));
}

TEST(SimulateModeChoiceTest, APodThatNamesItsModeHasNoChoiceToExplain) {
  const std::string cluster = ShortCluster({ShortNode(
      "mixed", absl::StrCat(Gpus("mixed", 1, 81920, "NVIDIA A100-SXM4-80GB"),
                            Gpus("mixed", 1, kH100MiB, kH100, "mode: mig",
                                 /*first=*/1)))});
  auto report = SimulateJson(
      cluster,
      PodYaml("named", "nvidia.com/gpu: 1, nvidia.com/gpumem: 9000",
              "nvidia.com/vgpu-mode: mig"),
      "scheduler: {modes: [hami-core, mig]}\n");
  ASSERT_OK(report);
  Json named = PlacementOf(*report, "named");
  ASSERT_FALSE(named.is_null());
  EXPECT_EQ(named["containers"][0]["devices"][0]["mig_profile"], "1g.10gb");
  EXPECT_FALSE(named.contains("mode_choice"));
}

TEST(SimulateModeChoiceTest, TheModesExampleUsesAllThreeBackends) {
  simulate::SimulateOptions options;
  options.cluster_path = DEVICESHARE_EXAMPLES_DIR "/modes/cluster.yaml";
  options.pods_path = DEVICESHARE_EXAMPLES_DIR "/modes/workload.yaml";
  options.config_path = DEVICESHARE_EXAMPLES_DIR "/modes/deviceshare.yaml";
  auto report = simulate::Simulate(options);
  ASSERT_OK(report);
  Json json = simulate::ReportJson(*report);
  EXPECT_EQ(json["summary"]["placed"], 6);
  auto mode_of = [&](const std::string& pod) {
    Json device = DeviceOf(json, pod);
    return device.is_null() ? std::string() : device["mode"].get<std::string>();
  };
  EXPECT_EQ(mode_of("infer-3g"), "mig");
  EXPECT_EQ(DeviceOf(json, "infer-3g")["mig_profile"], "3g.40gb");
  EXPECT_EQ(mode_of("notebook"), "mig");
  EXPECT_EQ(mode_of("batch-mps"), "mps");
  EXPECT_EQ(mode_of("train-a"), "hami-core");
  // The A100s are full: MPS fits 19000 MiB exactly, a MIG instance would
  // strand the rest of its 1g.20gb and the SM slice.
  EXPECT_EQ(mode_of("serve-b"), "mps");
  EXPECT_THAT(PlacementOf(json, "serve-b")["mode_choice"].get<std::string>(),
              HasSubstr("mode mps chosen"));
}

}  // namespace
}  // namespace deviceshare
