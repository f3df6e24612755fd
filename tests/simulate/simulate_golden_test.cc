// Golden end-to-end tests of `simulate --output json` (Simulate +
// ReportJson) on small clusters: every expected placement and value is
// derived by hand from the policies and the accounting rules in the README.
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "deviceshare/simulate/json_report.h"
#include "deviceshare/simulate/simulate.h"
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
using ::deviceshare::testing::UuidsOf;
using ::testing::ElementsAre;
using ::testing::SizeIs;
using ::testing::StartsWith;
using ::testing::UnorderedElementsAre;
using Json = nlohmann::ordered_json;

constexpr char kBinpack[] =
    "scheduler: {nodePolicy: binpack, gpuPolicy: binpack}\n";
constexpr char kGpuSpread[] =
    "scheduler: {nodePolicy: binpack, gpuPolicy: spread}\n";
constexpr char kNodeSpread[] =
    "scheduler: {nodePolicy: spread, gpuPolicy: binpack}\n";

// Three pods of 10 GiB and 10% of one GPU each.
std::string ThreeSmallPods() {
  const std::string limits =
      "nvidia.com/gpu: 1, nvidia.com/gpumem: 10240, nvidia.com/gpucores: 10";
  return Docs(
      {PodYaml("p1", limits), PodYaml("p2", limits), PodYaml("p3", limits)});
}

std::string NodeOf(const Json& report, const std::string& pod) {
  Json placement = PlacementOf(report, pod);
  return placement.is_null() ? "" : placement["node"].get<std::string>();
}

TEST(SimulateGoldenTest, GpuSpreadPutsSingleGpuPodsOnDistinctGpus) {
  auto report = SimulateJson(ShortCluster({ShortNode("n1", Gpus("n1", 4))}),
                             ThreeSmallPods(), kGpuSpread);
  ASSERT_OK(report);
  EXPECT_THAT(UuidsOf(*report, "p1"), ElementsAre("GPU-n1-0"));
  EXPECT_THAT(UuidsOf(*report, "p2"), ElementsAre("GPU-n1-1"));
  EXPECT_THAT(UuidsOf(*report, "p3"), ElementsAre("GPU-n1-2"));
  const Json& p1 = (*report)["placements"][0];
  EXPECT_EQ(p1["pod"], "default/p1");
  EXPECT_EQ(p1["node"], "n1");
  const Json& container = p1["containers"][0];
  EXPECT_EQ(container["name"], "main");
  EXPECT_EQ(container["devices"],
            Json::parse(R"([{"uuid": "GPU-n1-0", "mode": "hami-core",
                             "memory_mib": 10240, "cores": 10}])"));
  EXPECT_EQ(container["env"]["NVIDIA_VISIBLE_DEVICES"], "GPU-n1-0");
  EXPECT_EQ(container["env"]["CUDA_DEVICE_MEMORY_LIMIT_0"], "10240m");
  EXPECT_EQ(container["env"]["CUDA_DEVICE_SM_LIMIT"], "10");
  const Json& summary = (*report)["summary"];
  EXPECT_EQ(summary["pods"], 3);
  EXPECT_EQ(summary["placed"], 3);
  EXPECT_EQ(summary["unschedulable"], 0);
  // 3 x 10240 of 4 x 81920 MiB; 30 of 400 cores; GPU 3 untouched.
  EXPECT_EQ(summary["gpu_memory_allocated_pct"], 9.375);
  EXPECT_EQ(summary["gpu_cores_allocated_pct"], 7.5);
  EXPECT_EQ(summary["gpus_fully_idle"], 1);
}

TEST(SimulateGoldenTest, GpuBinpackStacksSingleGpuPods) {
  auto report = SimulateJson(ShortCluster({ShortNode("n1", Gpus("n1", 4))}),
                             ThreeSmallPods(), kBinpack);
  ASSERT_OK(report);
  for (const char* pod : {"p1", "p2", "p3"}) {
    EXPECT_THAT(UuidsOf(*report, pod), ElementsAre("GPU-n1-0")) << pod;
  }
  EXPECT_EQ((*report)["summary"]["gpus_fully_idle"], 3);
  EXPECT_EQ((*report)["summary"]["gpu_memory_allocated_mib"], 30720);
}

TEST(SimulateGoldenTest, GpuPolicyFlagOverridesConfig) {
  simulate::SimulateOptions options;
  options.gpu_policy = "spread";
  auto report = SimulateJson(ShortCluster({ShortNode("n1", Gpus("n1", 4))}),
                             ThreeSmallPods(), kBinpack, options);
  ASSERT_OK(report);
  EXPECT_THAT(UuidsOf(*report, "p3"), ElementsAre("GPU-n1-2"));
}

TEST(SimulateGoldenTest, NodeBinpackFillsOneNodeAndSpreadAlternates) {
  const std::string cluster = ShortCluster(
      {ShortNode("n1", Gpus("n1", 2)), ShortNode("n2", Gpus("n2", 2))});
  auto binpack = SimulateJson(cluster, ThreeSmallPods(), kBinpack);
  ASSERT_OK(binpack);
  EXPECT_EQ(NodeOf(*binpack, "p1"), "n1");
  EXPECT_EQ(NodeOf(*binpack, "p2"), "n1");
  EXPECT_EQ(NodeOf(*binpack, "p3"), "n1");
  // Spread: p1 ties to the smaller name, p2 goes to the emptier n2, p3
  // ties again.
  auto spread = SimulateJson(cluster, ThreeSmallPods(), kNodeSpread);
  ASSERT_OK(spread);
  EXPECT_EQ(NodeOf(*spread, "p1"), "n1");
  EXPECT_EQ(NodeOf(*spread, "p2"), "n2");
  EXPECT_EQ(NodeOf(*spread, "p3"), "n1");
}

TEST(SimulateGoldenTest, PerPodPolicyAnnotationsOverrideConfig) {
  const std::string cluster = ShortCluster(
      {ShortNode("n1", Gpus("n1", 2)), ShortNode("n2", Gpus("n2", 2))});
  const std::string limits = "nvidia.com/gpu: 1, nvidia.com/gpumem: 10240";
  auto report =
      SimulateJson(cluster,
                   Docs({PodYaml("first", limits),
                         PodYaml("spread-node", limits,
                                 "hami.io/node-scheduler-policy: spread"),
                         PodYaml("spread-gpu", limits,
                                 "hami.io/gpu-scheduler-policy: spread")}),
                   kBinpack);
  ASSERT_OK(report);
  EXPECT_THAT(UuidsOf(*report, "first"), ElementsAre("GPU-n1-0"));
  EXPECT_THAT(UuidsOf(*report, "spread-node"), ElementsAre("GPU-n2-0"));
  // Node binpack ties n1/n2 to n1; GPU spread takes n1's empty GPU.
  EXPECT_THAT(UuidsOf(*report, "spread-gpu"), ElementsAre("GPU-n1-1"));
}

TEST(SimulateGoldenTest, ExclusiveCoresTakeAWholeGpu) {
  const std::string exclusive = "nvidia.com/gpu: 1, nvidia.com/gpucores: 100";
  auto report =
      SimulateJson(ShortCluster({ShortNode("n1", Gpus("n1", 2))}),
                   Docs({PodYaml("exclusive", exclusive),
                         PodYaml("small",
                                 "nvidia.com/gpu: 1, nvidia.com/gpumem: 1024, "
                                 "nvidia.com/gpucores: 10"),
                         PodYaml("exclusive-2", exclusive)}),
                   kBinpack);
  ASSERT_OK(report);
  EXPECT_EQ(PlacementOf(*report, "exclusive")["containers"][0]["devices"],
            Json::parse(R"([{"uuid": "GPU-n1-0", "mode": "hami-core",
                             "memory_mib": 81920, "cores": 100}])"));
  // Binpack would stack on GPU 0, but it is held exclusively.
  EXPECT_THAT(UuidsOf(*report, "small"), ElementsAre("GPU-n1-1"));
  Json rejected = UnschedulableOf(*report, "exclusive-2");
  ASSERT_FALSE(rejected.is_null());
  EXPECT_THAT(rejected["reasons"]["n1"].get<std::string>(),
              StartsWith("ExclusiveConflict"));
  EXPECT_EQ(rejected["reason_counts"],
            Json::parse(R"({"ExclusiveConflict": 1})"));
}

TEST(SimulateGoldenTest, MemoryPercentageIsOfEachCard) {
  auto report = SimulateJson(
      ShortCluster({ShortNode("a30", Gpus("a30", 1, 24576, "NVIDIA A30"))}),
      Docs({PodYaml("hami-quarter",
                    "nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 25, "
                    "nvidia.com/gpucores: 10"),
            PodYaml("volcano-half",
                    "volcano.sh/vgpu-number: 1, "
                    "volcano.sh/vgpu-memory-percentage: 50, "
                    "volcano.sh/vgpu-cores: 10"),
            PodYaml("hami-too-much",
                    "nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 30")}),
      kBinpack);
  ASSERT_OK(report);
  const Json hami = PlacementOf(*report, "hami-quarter")["containers"][0];
  EXPECT_EQ(hami["devices"][0]["memory_mib"], 6144);  // 24576 x 25%
  EXPECT_EQ(hami["env"]["CUDA_DEVICE_MEMORY_LIMIT_0"], "6144m");
  EXPECT_EQ(
      PlacementOf(*report,
                  "volcano-half")["containers"][0]["devices"][0]["memory_mib"],
      12288);
  // 6144 MiB left; 30% is 7372 MiB.
  Json rejected = UnschedulableOf(*report, "hami-too-much");
  ASSERT_FALSE(rejected.is_null());
  EXPECT_THAT(rejected["reasons"]["a30"].get<std::string>(),
              StartsWith("InsufficientMemory"));
  EXPECT_TRUE(absl::StrContains(rejected["reasons"]["a30"].get<std::string>(),
                                "want=7372MiB"));
}

TEST(SimulateGoldenTest, SplitCountLimitsTenantsPerGpu) {
  const std::string tiny =
      "nvidia.com/gpu: 1, nvidia.com/gpumem: 1024, nvidia.com/gpucores: 1";
  const std::string pods = Docs({PodYaml("t1", tiny), PodYaml("t2", tiny),
                                 PodYaml("t3", tiny), PodYaml("t4", tiny)});
  // The node's own split (2) wins over the config.
  auto own = SimulateJson(
      ShortCluster({ShortNode(
          "n1", Gpus("n1", 1, 81920, "NVIDIA A100-SXM4-80GB", "split: 2"))}),
      pods, kBinpack);
  ASSERT_OK(own);
  EXPECT_EQ((*own)["summary"]["placed"], 2);
  EXPECT_THAT(UnschedulableOf(*own, "t3")["reasons"]["n1"].get<std::string>(),
              StartsWith("SplitExhausted"));
  // Without one, nvidia.deviceSplitCount applies.
  auto config =
      SimulateJson(ShortCluster({ShortNode("n1", Gpus("n1", 1))}), pods,
                   std::string(kBinpack) + "nvidia: {deviceSplitCount: 3}\n");
  ASSERT_OK(config);
  EXPECT_EQ((*config)["summary"]["placed"], 3);
  EXPECT_THAT(
      UnschedulableOf(*config, "t4")["reasons"]["n1"].get<std::string>(),
      StartsWith("SplitExhausted"));
}

TEST(SimulateGoldenTest, TypeAllowAndDenyLists) {
  // a-node sorts first, so a pod that may go anywhere lands there.
  const std::string cluster = ShortCluster(
      {ShortNode("a-node", Gpus("a-node", 1)),
       ShortNode("b-node", Gpus("b-node", 1, 81559, "NVIDIA H100 80GB HBM3"))});
  const std::string limits = "nvidia.com/gpu: 1, nvidia.com/gpumem: 1024";
  auto report = SimulateJson(
      cluster,
      Docs({PodYaml("any", limits),
            PodYaml("h100-only", limits, "nvidia.com/use-gputype: h100"),
            PodYaml("no-a100",
                    "volcano.sh/vgpu-number: 1, "
                    "volcano.sh/vgpu-memory: 1024",
                    "nvidia.com/nouse-gputype: A100"),
            PodYaml("v100-only", limits, "nvidia.com/use-gputype: V100")}),
      kBinpack);
  ASSERT_OK(report);
  EXPECT_EQ(NodeOf(*report, "any"), "a-node");
  EXPECT_EQ(NodeOf(*report, "h100-only"), "b-node");
  EXPECT_EQ(NodeOf(*report, "no-a100"), "b-node");
  Json rejected = UnschedulableOf(*report, "v100-only");
  ASSERT_FALSE(rejected.is_null());
  EXPECT_EQ(rejected["reason_counts"], Json::parse(R"({"TypeMismatch": 2})"));
}

TEST(SimulateGoldenTest, UuidAllowAndDenyLists) {
  const std::string limits = "nvidia.com/gpu: 1, nvidia.com/gpumem: 1024";
  auto report = SimulateJson(
      ShortCluster({ShortNode("n1", Gpus("n1", 3))}),
      Docs({PodYaml("avoid-0", limits, "nvidia.com/nouse-gpuuuid: GPU-n1-0"),
            PodYaml("pin-2", limits, "nvidia.com/use-gpuuuid: GPU-n1-2"),
            PodYaml("volcano-avoid",
                    "volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 1024",
                    "volcano.sh/vgpu-nouse-gpuuuid: \"GPU-n1-0,GPU-n1-1\""),
            PodYaml("pin-missing", limits,
                    "nvidia.com/use-gpuuuid: GPU-elsewhere")}),
      kBinpack);
  ASSERT_OK(report);
  EXPECT_THAT(UuidsOf(*report, "avoid-0"), ElementsAre("GPU-n1-1"));
  EXPECT_THAT(UuidsOf(*report, "pin-2"), ElementsAre("GPU-n1-2"));
  EXPECT_THAT(UuidsOf(*report, "volcano-avoid"), ElementsAre("GPU-n1-2"));
  Json rejected = UnschedulableOf(*report, "pin-missing");
  ASSERT_FALSE(rejected.is_null());
  EXPECT_THAT(rejected["reasons"]["n1"].get<std::string>(),
              StartsWith("UuidMismatch"));
}

TEST(SimulateGoldenTest, MultiGpuRequestsGetDistinctGpus) {
  auto report = SimulateJson(
      ShortCluster({ShortNode("n1", Gpus("n1", 4))}),
      Docs({PodYaml("first", "nvidia.com/gpu: 1, nvidia.com/gpumem: 1024"),
            PodYaml("three",
                    "nvidia.com/gpu: 3, nvidia.com/gpumem: 2048, "
                    "nvidia.com/gpucores: 20"),
            PodYaml("five", "nvidia.com/gpu: 5, nvidia.com/gpumem: 1024")}),
      kBinpack);
  ASSERT_OK(report);
  // Binpack: the fullest GPU (0) first, then lower indexes.
  EXPECT_THAT(UuidsOf(*report, "three"),
              ElementsAre("GPU-n1-0", "GPU-n1-1", "GPU-n1-2"));
  const Json env = PlacementOf(*report, "three")["containers"][0]["env"];
  EXPECT_EQ(env["NVIDIA_VISIBLE_DEVICES"], "GPU-n1-0,GPU-n1-1,GPU-n1-2");
  EXPECT_EQ(env["CUDA_DEVICE_MEMORY_LIMIT_2"], "2048m");
  EXPECT_THAT(
      UnschedulableOf(*report, "five")["reasons"]["n1"].get<std::string>(),
      StartsWith("InsufficientGpus"));
}

TEST(SimulateGoldenTest, InitContainersChargeTheMaxNotTheSum) {
  // One 24576 MiB GPU. The pod's init container wants 20000 MiB, its two app
  // containers 10000 + 4000: charged max(20000, 14000) = 20000, so a 4576
  // MiB pod still fits, and then nothing does.
  const std::string pod = R"(apiVersion: v1
kind: Pod
metadata: {name: with-init, namespace: default}
spec:
  initContainers:
  - name: init
    resources:
      limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: 20000}
  containers:
  - name: app
    resources:
      limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: 10000}
  - name: helper
    resources:
      limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: 4000}
  - name: no-gpu
)";
  auto report = SimulateJson(
      ShortCluster({ShortNode("n1", Gpus("n1", 1, 24576, "NVIDIA A30"))}),
      Docs({pod, PodYaml("rest", "nvidia.com/gpu: 1, nvidia.com/gpumem: 4576"),
            PodYaml("one-more", "nvidia.com/gpu: 1, nvidia.com/gpumem: 1")}),
      kBinpack);
  ASSERT_OK(report);
  Json placement = PlacementOf(*report, "with-init");
  ASSERT_FALSE(placement.is_null());
  const Json& containers = placement["containers"];
  ASSERT_THAT(containers, SizeIs(4));
  EXPECT_EQ(containers[0]["name"], "init");
  EXPECT_EQ(containers[0]["devices"][0]["memory_mib"], 20000);
  EXPECT_EQ(containers[1]["devices"][0]["memory_mib"], 10000);
  EXPECT_EQ(containers[2]["devices"][0]["memory_mib"], 4000);
  // A container without GPUs is listed, with no devices and no env.
  EXPECT_EQ(containers[3]["name"], "no-gpu");
  EXPECT_EQ(containers[3]["devices"], Json::array());
  EXPECT_EQ(containers[3]["env"], Json::object());
  EXPECT_THAT(UuidsOf(*report, "rest"), ElementsAre("GPU-n1-0"));
  EXPECT_EQ((*report)["summary"]["gpu_memory_allocated_mib"], 24576);
  EXPECT_EQ((*report)["summary"]["gpu_memory_allocated_pct"], 100.0);
  EXPECT_THAT(
      UnschedulableOf(*report, "one-more")["reasons"]["n1"].get<std::string>(),
      StartsWith("InsufficientMemory"));
}

TEST(SimulateGoldenTest, BothDialectsGiveTheSamePlacement) {
  const std::string cluster = ShortCluster(
      {ShortNode("n1", Gpus("n1", 2)), ShortNode("n2", Gpus("n2", 2))});
  auto hami =
      SimulateJson(cluster,
                   PodYaml("pod",
                           "nvidia.com/gpu: 2, nvidia.com/gpumem: 8192, "
                           "nvidia.com/gpucores: 30",
                           "nvidia.com/use-gputype: A100"),
                   kNodeSpread);
  auto volcano = SimulateJson(
      cluster,
      PodYaml("pod",
              "volcano.sh/vgpu-number: 2, volcano.sh/vgpu-memory: 8192, "
              "volcano.sh/vgpu-cores: 30",
              "nvidia.com/use-gputype: A100"),
      kNodeSpread);
  ASSERT_OK(hami);
  ASSERT_OK(volcano);
  EXPECT_EQ((*hami)["placements"], (*volcano)["placements"]);
  EXPECT_THAT(UuidsOf(*hami, "pod"), ElementsAre("GPU-n1-0", "GPU-n1-1"));
  EXPECT_EQ(PlacementOf(*hami, "pod")["containers"][0]["devices"][1],
            Json::parse(R"({"uuid": "GPU-n1-1", "mode": "hami-core",
                            "memory_mib": 8192, "cores": 30})"));
}

TEST(SimulateGoldenTest, NodeObjectsInBothDialectsAreACluster) {
  const std::string nodes = R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: hami-node
    annotations:
      hami.io/node-nvidia-register: '[{"id":"GPU-h0","index":0,"count":10,"devmem":16384,"devcore":100,"type":"NVIDIA-Tesla T4","numa":0,"mode":"hami-core","health":true}]'
---
apiVersion: v1
kind: Node
metadata:
  name: volcano-node
  annotations:
    volcano.sh/node-vgpu-register: 'GPU-v0,10,40960,NVIDIA-NVIDIA A100-PCIE-40GB,true,hami-core:'
---
apiVersion: v1
kind: Node
metadata:
  name: cpu-only
)";
  auto report = SimulateJson(
      nodes,
      Docs({PodYaml("big", "nvidia.com/gpu: 1, nvidia.com/gpumem: 20000"),
            PodYaml("small",
                    "volcano.sh/vgpu-number: 1, "
                    "volcano.sh/vgpu-memory: 8000")}),
      kBinpack);
  ASSERT_OK(report);
  EXPECT_THAT(UuidsOf(*report, "big"), ElementsAre("GPU-v0"));
  // Binpack: both nodes fit; the A100 node is fuller after the placement.
  EXPECT_EQ((*report)["summary"]["nodes"], 2);
  EXPECT_EQ((*report)["summary"]["gpu_memory_capacity_mib"], 16384 + 40960);
  bool skipped = false;
  for (const auto& note : (*report)["notes"]) {
    skipped |= absl::StrContains(note.get<std::string>(), "cpu-only");
  }
  EXPECT_TRUE(skipped) << (*report)["notes"].dump();
}

TEST(SimulateGoldenTest, UnschedulableReasonsAreDigestedPerCode) {
  // Eleven 16 GiB nodes and one with a broken 80 GiB GPU, named last.
  std::vector<std::string> nodes;
  for (int i = 1; i <= 11; ++i) {
    std::string name = absl::StrFormat("n%02d", i);
    nodes.push_back(ShortNode(name, Gpus(name, 1, 16384, "Tesla T4")));
  }
  nodes.push_back(ShortNode(
      "z-bad",
      Gpus("z-bad", 1, 81920, "NVIDIA A100-SXM4-80GB", "healthy: false")));
  auto report = SimulateJson(
      ShortCluster(nodes),
      PodYaml("big", "nvidia.com/gpu: 1, nvidia.com/gpumem: 40000"), kBinpack);
  ASSERT_OK(report);
  ASSERT_THAT((*report)["unschedulable"], SizeIs(1));
  const Json& pod = (*report)["unschedulable"][0];
  EXPECT_EQ(pod["pod"], "default/big");
  EXPECT_EQ(pod["nodes_rejecting"], 12);
  EXPECT_EQ(pod["reason_counts"],
            Json::parse(R"({"GpuUnhealthy": 1, "InsufficientMemory": 11})"));
  std::set<std::string> examples;
  for (const auto& [node, reason] : pod["reasons"].items()) {
    examples.insert(node);
  }
  // Every code once (n01, z-bad), then by name up to ten.
  EXPECT_EQ(examples,
            (std::set<std::string>{"n01", "n02", "n03", "n04", "n05", "n06",
                                   "n07", "n08", "n09", "z-bad"}));
  EXPECT_THAT(pod["reasons"]["z-bad"].get<std::string>(),
              StartsWith("GpuUnhealthy"));
  EXPECT_THAT(pod["reasons"]["n05"].get<std::string>(),
              StartsWith("InsufficientMemory gpu=GPU-n05-0 free=16384MiB "
                         "want=40000MiB"));
}

TEST(SimulateGoldenTest, JsonKeysAreInTheDocumentedOrder) {
  auto report = SimulateJson(ShortCluster({ShortNode("n1", Gpus("n1", 1))}),
                             ThreeSmallPods(), kBinpack);
  ASSERT_OK(report);
  std::vector<std::string> top, summary;
  for (const auto& [key, value] : report->items()) top.push_back(key);
  for (const auto& [key, value] : (*report)["summary"].items()) {
    summary.push_back(key);
  }
  EXPECT_THAT(top, ElementsAre("placements", "unschedulable", "unaccounted",
                               "summary", "notes"));
  ASSERT_GE(summary.size(), 8u);
  EXPECT_THAT(
      std::vector<std::string>(summary.begin(), summary.begin() + 8),
      ElementsAre("pods", "placed", "unschedulable", "gpu_memory_allocated_pct",
                  "gpu_cores_allocated_pct", "gpus_fully_idle",
                  "decisions_per_second", "p99_decision_us"));
  EXPECT_GT((*report)["summary"]["decisions_per_second"].get<double>(), 0.0);
}

TEST(SimulateGoldenTest, ExampleWorkloadPlacesNineAndExplainsThree) {
  simulate::SimulateOptions options;
  options.cluster_path = DEVICESHARE_EXAMPLES_DIR "/cluster.yaml";
  options.pods_path = DEVICESHARE_EXAMPLES_DIR "/workload.yaml";
  options.config_path = DEVICESHARE_EXAMPLES_DIR "/deviceshare.yaml";
  auto report = simulate::Simulate(options);
  ASSERT_OK(report);
  Json json = simulate::ReportJson(*report);
  EXPECT_EQ(json["summary"]["placed"], 9);
  std::vector<std::string> unschedulable;
  for (const auto& pod : json["unschedulable"]) {
    unschedulable.push_back(pod["pod"].get<std::string>());
  }
  EXPECT_THAT(unschedulable,
              UnorderedElementsAre("team-a/too-big", "team-b/pinned-broken",
                                   "team-c/second-eight"));
  EXPECT_EQ(NodeOf(json, "team-b/h100-trainer"), "h100-1");
  EXPECT_EQ(NodeOf(json, "team-a/pinned-a30"), "a30-1");
}

}  // namespace
}  // namespace deviceshare
