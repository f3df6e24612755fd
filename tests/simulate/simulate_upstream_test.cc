// HAMi's and Volcano's own edge cases (docs/reference/upstream-cases.md),
// restated as inputs to `simulate` end to end: one test per disagreement
// kind the issue lists, each naming its upstream test or code. The wire
// side of each (records, registrations) is tested through the extender and
// the node agent.
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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
using ::testing::AllOf;
using ::testing::HasSubstr;
using Json = nlohmann::ordered_json;

std::string VolcanoNode(const std::string& name, const std::string& register_) {
  return absl::StrCat("apiVersion: v1\nkind: Node\nmetadata:\n  name: ", name,
                      "\n  annotations:\n    volcano.sh/node-vgpu-register: '",
                      register_, "'\n");
}

// Kind 6. Volcano counts memory in gpuMemoryFactor units in the
// registration and the request alike (config/vgpu.go:111; its device plugin
// registers MiB / factor, its node plugin sets Usedmem x factor MiB): a
// 16384 MiB GPU registers 8192, a pod asking 3000 gets 6000 MiB, and two
// such pods fit where a third does not.
TEST(SimulateUpstreamTest, VolcanoMemoryFactorCountsUnitsOnBothSides) {
  const std::string pod_limits =
      "volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 3000, "
      "volcano.sh/vgpu-cores: 25";
  auto report = SimulateJson(
      VolcanoNode("v", "GPU-0000A,4,8192,NVIDIA-Tesla T4,true,hami-core:"),
      Docs({PodYaml("a", pod_limits), PodYaml("b", pod_limits),
            PodYaml("c", pod_limits)}),
      "nvidia: {gpuMemoryFactor: 2}\n");
  ASSERT_OK(report);
  EXPECT_EQ((*report)["summary"]["gpu_memory_capacity_mib"], 16384);
  const Json a = PlacementOf(*report, "a");
  ASSERT_FALSE(a.is_null()) << report->dump(1);
  EXPECT_EQ(a["containers"][0]["devices"][0]["memory_mib"], 6000);
  EXPECT_EQ(a["containers"][0]["env"]["CUDA_DEVICE_MEMORY_LIMIT_0"], "6000m");
  EXPECT_FALSE(PlacementOf(*report, "b").is_null());
  const Json c = UnschedulableOf(*report, "c");
  ASSERT_FALSE(c.is_null()) << report->dump(1);
  EXPECT_THAT(c.dump(), HasSubstr("Insufficient"));
}

Json DeviceOf(const Json& report, const std::string& pod) {
  return PlacementOf(report, pod)["containers"][0]["devices"][0];
}

// Kind 2. HAMi's webhook adds all cores only to a container that names the
// count, no gpucores, and memory that is exclusive (device.go:417
// defaultExclusiveCoreIfNeeded): a 0 percentage gives the whole card but
// no cores (device_test.go:1889), and defaultMemory does not stop the
// cores (TestGenerateResourceRequests_DefaultMemory).
TEST(SimulateUpstreamTest, HamiZeroAndDefaultCoresFollowTheWebhook) {
  const std::string cluster = ShortCluster({ShortNode("n", Gpus("n", 2))});
  auto report =
      SimulateJson(cluster,
                   Docs({PodYaml("pct0",
                                 "nvidia.com/gpu: 1, "
                                 "nvidia.com/gpumem-percentage: 0"),
                         PodYaml("count-only", "nvidia.com/gpu: 1")}),
                   "nvidia: {defaultMemory: 512}\n"
                   "scheduler: {nodePolicy: binpack, gpuPolicy: spread}\n");
  ASSERT_OK(report);
  EXPECT_EQ(DeviceOf(*report, "pct0")["memory_mib"], 512);
  EXPECT_EQ(DeviceOf(*report, "pct0")["cores"], 0);
  EXPECT_EQ(DeviceOf(*report, "count-only")["memory_mib"], 512);
  EXPECT_EQ(DeviceOf(*report, "count-only")["cores"], 100);
}

// Kind 3. What HAMi's scheduler clamps or ignores is scheduled, not an
// input error for the whole run: gpucores 120 (device_test.go:1984), a
// percentage of 150 (:1827) or -1 (:1925), numa-bind that is not a bool
// (TestAssertNuma "NumaBind invalid value"), an empty resourceMemoryName
// (:285).
TEST(SimulateUpstreamTest, HamiLeniencyPlacesWhatHamiPlaces) {
  const std::string cluster = ShortCluster({ShortNode("n", Gpus("n", 4))});
  auto report = SimulateJson(
      cluster,
      Docs({PodYaml("cores120",
                    "nvidia.com/gpu: 1, nvidia.com/gpumem: 512, "
                    "nvidia.com/gpucores: 120"),
            PodYaml("pct150",
                    "nvidia.com/gpu: 1, "
                    "nvidia.com/gpumem-percentage: 150"),
            PodYaml("pct-1",
                    "nvidia.com/gpu: 1, "
                    "nvidia.com/gpumem-percentage: -1"),
            PodYaml("numa", "nvidia.com/gpu: 1, nvidia.com/gpumem: 512",
                    "nvidia.com/numa-bind: notabool")}),
      "nvidia: {resourceMemoryName: \"\"}\n"
      "scheduler: {nodePolicy: binpack, gpuPolicy: spread}\n");
  ASSERT_OK(report);
  EXPECT_EQ(DeviceOf(*report, "cores120")["cores"], 100);
  EXPECT_EQ(DeviceOf(*report, "pct150")["memory_mib"], 81920);
  EXPECT_EQ(DeviceOf(*report, "pct-1")["memory_mib"], 81920);
  // With no memory resource name, gpumem is not a GPU resource at all.
  EXPECT_EQ(DeviceOf(*report, "numa")["memory_mib"], 81920);
  EXPECT_EQ(DeviceOf(*report, "numa")["cores"], 100);
}

// Kind 3. HAMi's nvidia.com/vgpu-mode takes a GPU whose mode occurs in the
// value (device.go checkType, strings.Contains; device_test.go:2438
// TestCheckType_AllocateMode): "hami-core,mig" fits a hami-core GPU, a list
// without it leaves the pod pending with ModeMismatch, not the run failed.
TEST(SimulateUpstreamTest, HamiVgpuModeListsMatchByName) {
  const std::string ask = "nvidia.com/gpu: 1, nvidia.com/gpumem: 512";
  auto report = SimulateJson(
      ShortCluster({ShortNode("n", Gpus("n", 1))}),
      Docs({PodYaml("both", ask, "nvidia.com/vgpu-mode: \"hami-core,mig\""),
            PodYaml("neither", ask, "nvidia.com/vgpu-mode: \"mig, mps\"")}));
  ASSERT_OK(report);
  EXPECT_EQ(DeviceOf(*report, "both")["mode"], "hami-core");
  EXPECT_THAT(UnschedulableOf(*report, "neither").dump(),
              HasSubstr("ModeMismatch"));
}

// Kind 6. Volcano's podgroup spread (spread_integration_test.go,
// utils_test.go TestGetPodGroupKey / TestDeviceHasPodFromSameGroup): a pod
// with `volcano.sh/vgpu-podgroup-policy: spread` takes no GPU that a pod of
// its podgroup already uses; other groups, and pods without the rule,
// share as usual.
TEST(SimulateUpstreamTest, VolcanoPodgroupSpreadKeepsAGroupApart) {
  struct Case {
    const char* upstream;
    int gpus;
    const char* a_annotations;
    const char* b_annotations;
    bool b_shares_a_gpu;  // B placed on A's GPU
    bool b_placed;
  };
  constexpr char kSpread1[] =
      "volcano.sh/vgpu-podgroup-policy: spread, "
      "scheduling.k8s.io/group-name: job-1";
  constexpr char kSpread2[] =
      "volcano.sh/vgpu-podgroup-policy: spread, "
      "scheduling.k8s.io/group-name: job-2";
  constexpr char kVolcanoKey1[] =
      "volcano.sh/vgpu-podgroup-policy: spread, "
      "scheduling.volcano.sh/group-name: job-1";
  const Case cases[] = {
      {"TestSpreadPreventsCoLocation", 2, kSpread1, kSpread1, false, true},
      {"TestBinpackAllowsCoLocation", 2, "scheduling.k8s.io/group-name: job-1",
       "scheduling.k8s.io/group-name: job-1", true, true},
      {"TestSpreadDifferentGroupsCanShare", 1, kSpread1, kSpread2, true, true},
      {"TestSpreadWithNoRoomFails", 1, kSpread1, kSpread1, false, false},
      {"TestMixedAnnotations", 2, kSpread1,
       "scheduling.k8s.io/group-name: job-1", true, true},
      {"TestGetPodGroupKey (volcano key)", 1, kVolcanoKey1, kVolcanoKey1, false,
       false},
  };
  const std::string limits =
      "volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 4096, "
      "volcano.sh/vgpu-cores: 25";
  for (const Case& c : cases) {
    SCOPED_TRACE(c.upstream);
    auto report =
        SimulateJson(ShortCluster({ShortNode("n", Gpus("n", c.gpus))}),
                     Docs({PodYaml("a", limits, c.a_annotations),
                           PodYaml("b", limits, c.b_annotations)}),
                     "scheduler: {nodePolicy: binpack, gpuPolicy: binpack}\n");
    ASSERT_OK(report);
    ASSERT_FALSE(PlacementOf(*report, "a").is_null());
    const Json b = PlacementOf(*report, "b");
    EXPECT_EQ(!b.is_null(), c.b_placed) << report->dump(1);
    if (c.b_placed && !b.is_null()) {
      EXPECT_EQ(
          DeviceOf(*report, "a")["uuid"] == DeviceOf(*report, "b")["uuid"],
          c.b_shares_a_gpu);
    }
    if (!c.b_placed) {
      EXPECT_THAT(UnschedulableOf(*report, "b").dump(),
                  HasSubstr("GroupOnGpu"));
    }
  }
}

// A pod already placed: `record` under `key`, bound to node n.
std::string RunningPod(const std::string& name, const std::string& limits,
                       const std::string& key, const std::string& record) {
  return absl::StrCat("apiVersion: v1\nkind: Pod\nmetadata:\n  name: ", name,
                      "\n  namespace: default\n  annotations:\n    ", key,
                      ": '", record,
                      "'\nspec:\n  nodeName: n\n  containers:\n  - name: "
                      "main\n    resources:\n      limits: {",
                      limits, "}\n");
}

std::string CordonedNode(const std::string& cordon) {
  return absl::StrCat(
      "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  annotations:\n"
      "    hami.io/device-cordon: '",
      cordon,
      "'\n    volcano.sh/node-vgpu-register: "
      "'dev-0,10,16384,NVIDIA-Tesla T4,true,hami-core:"
      "dev-1,10,16384,NVIDIA-Tesla T4,true,hami-core:'\n");
}

// Kind 1. HAMi's per-GPU cordon (device_test.go:1226 TestFit_DeviceCordon):
// a listed GPU takes no new pod; with all listed the pod stays pending
// with GpuCordoned.
TEST(SimulateUpstreamTest, HamiDeviceCordonSkipsListedGpus) {
  const std::string pod =
      PodYaml("p", "nvidia.com/gpu: 1, nvidia.com/gpumem: 512");
  const std::string config =
      "scheduler: {nodePolicy: binpack, gpuPolicy: spread}\n";
  auto one = SimulateJson(CordonedNode("dev-0, "), pod, config);
  ASSERT_OK(one);
  EXPECT_EQ(DeviceOf(*one, "p")["uuid"], "dev-1");
  auto all = SimulateJson(CordonedNode("dev-0,dev-1"), pod, config);
  ASSERT_OK(all);
  EXPECT_THAT(UnschedulableOf(*all, "p").dump(), HasSubstr("GpuCordoned"));
}

// Kind 1. What HAMi's webhook writes into containers
// (TestMutateAdmission_Priority, TestMutateAdmission_OverwriteEnv):
// nvidia.com/priority becomes CUDA_TASK_PRIORITY, and with overwriteEnv a
// container that asks for no GPU gets NVIDIA_VISIBLE_DEVICES=none.
TEST(SimulateUpstreamTest, HamiWebhookEnvIsInTheDecision) {
  const std::string pod = R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers:
  - name: gpu
    resources:
      limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: 1024, nvidia.com/priority: 0}
  - name: sidecar
)";
  auto report = SimulateJson(ShortCluster({ShortNode("n", Gpus("n", 1))}), pod,
                             "nvidia: {overwriteEnv: true}\n");
  ASSERT_OK(report);
  const Json containers = PlacementOf(*report, "p")["containers"];
  ASSERT_EQ(containers.size(), 2) << report->dump(1);
  EXPECT_EQ(containers[0]["env"]["CUDA_TASK_PRIORITY"], "0");
  EXPECT_EQ(containers[1]["env"]["NVIDIA_VISIBLE_DEVICES"], "none");
}

// Kind 1. HAMi's gpu-scheduler-policy mutex (device_test.go:2616
// TestFit_MutexPolicy): a GPU in use takes no other pod, so the pod goes to
// the idle GPU, and a two-GPU pod finds only one.
TEST(SimulateUpstreamTest, HamiMutexPolicyTakesOnlyIdleGpus) {
  const std::string small =
      "nvidia.com/gpu: 1, nvidia.com/gpumem: 1024, nvidia.com/gpucores: 10";
  auto report = SimulateJson(
      ShortCluster({ShortNode("n", Gpus("n", 2))}),
      Docs({PodYaml("first", small),
            PodYaml("mutex", small, "hami.io/gpu-scheduler-policy: mutex"),
            PodYaml("pair", "nvidia.com/gpu: 2, nvidia.com/gpumem: 1024",
                    "hami.io/gpu-scheduler-policy: mutex")}),
      "scheduler: {nodePolicy: binpack, gpuPolicy: binpack}\n");
  ASSERT_OK(report);
  EXPECT_NE(DeviceOf(*report, "mutex")["uuid"],
            DeviceOf(*report, "first")["uuid"]);
  EXPECT_THAT(UnschedulableOf(*report, "pair").dump(),
              HasSubstr("ExclusiveConflict"));
}

// A node "n" registered in Volcano's dialect with `count` T4s of
// `memory_mib` (hami-core) and `annotations` beside the registration.
std::string T4Node(int count, int memory_mib, const std::string& annotations) {
  std::string entries;
  for (int i = 0; i < count; ++i) {
    absl::StrAppend(&entries, "dev-", i, ",10,", memory_mib,
                    ",NVIDIA-Tesla T4,true,hami-core:");
  }
  return absl::StrCat(
      "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  annotations:\n",
      annotations, "    volcano.sh/node-vgpu-register: '", entries, "'\n");
}

std::string HamiRunningPod(const std::string& name, int memory_mib, int cores,
                           const std::string& uuid) {
  return RunningPod(
      name,
      absl::StrCat("nvidia.com/gpu: 1, nvidia.com/gpumem: ", memory_mib,
                   ", nvidia.com/gpucores: ", cores),
      "hami.io/vgpu-devices-allocated",
      absl::StrCat(uuid, ",NVIDIA,", memory_mib, ",", cores, ":;"));
}

// Kind 1. HAMi's per-pod device-scoring-weights (score_test.go:4083
// TestCalcScoreUsesPodDeviceScoringWeights): dev-0 holds one tenant with 90
// cores and 10 MiB, dev-1 seven tenants with 10 cores and 20 MiB; a binpack
// pod of 40 % takes dev-0, and with memory weighed three times dev-1. Weights
// that do not read (:4048) leave the pod pending with the reason, and the
// other pods are still placed.
TEST(SimulateUpstreamTest, HamiDeviceScoringWeightsReweighTheGpus) {
  std::vector<std::string> docs = {HamiRunningPod("a1", 10, 90, "dev-0"),
                                   HamiRunningPod("b1", 14, 4, "dev-1")};
  for (int i = 2; i <= 7; ++i) {
    docs.push_back(HamiRunningPod(absl::StrCat("b", i), 1, 1, "dev-1"));
  }
  const std::string ask = "nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 40";
  const std::string binpack = "hami.io/gpu-scheduler-policy: binpack";
  std::vector<std::string> plain = docs;
  plain.push_back(PodYaml("p", ask, binpack));
  auto unweighted = SimulateJson(T4Node(2, 100, ""), Docs(plain));
  ASSERT_OK(unweighted);
  EXPECT_EQ(DeviceOf(*unweighted, "p")["uuid"], "dev-0");

  docs.push_back(PodYaml(
      "p", ask,
      binpack +
          ", hami.io/device-scoring-weights: \"slot=1,core=1,memory=3\""));
  docs.push_back(
      PodYaml("bad", ask,
              "hami.io/device-scoring-weights: \"slot=1,core=-1,memory=3\""));
  docs.push_back(PodYaml("after", "nvidia.com/gpu: 1, nvidia.com/gpumem: 5"));
  auto weighted = SimulateJson(T4Node(2, 100, ""), Docs(docs));
  ASSERT_OK(weighted);
  EXPECT_EQ(DeviceOf(*weighted, "p")["uuid"], "dev-1");
  EXPECT_THAT(UnschedulableOf(*weighted, "bad").dump(),
              AllOf(HasSubstr("PodRefused"),
                    HasSubstr("hami.io/device-scoring-weights"),
                    HasSubstr("must not be negative")));
  EXPECT_FALSE(PlacementOf(*weighted, "after").is_null());
}

// HAMi's pkg/scheduler/score_test.go, restated: the two GPUs of
// TestCalcScoreUsesPodDeviceScoringWeights (dev-0: one tenant, 90 cores,
// 10 MiB; dev-1: seven tenants, 10 cores, 20 MiB; 100 MiB each) and a pod
// of 40 %, by policy, weights, whether the GPU container is an init
// container, and pair scores (dev-0 and dev-1 linked with 1).
TEST(SimulateUpstreamTableTest, HamiScore) {
  struct Row {
    const char* upstream;
    const char* policy;
    const char* weights;  // "" = none
    bool init;
    bool paired;
    const char* gpu;
  };
  const Row rows[] = {
      {"TestCalcScoreUsesPodDeviceScoringWeights, no weights", "binpack", "",
       false, false, "dev-0"},
      {"TestCalcScoreUsesPodDeviceScoringWeights, slot=1,core=1,memory=3",
       "binpack", "slot=1,core=1,memory=3", false, false, "dev-1"},
      {"...ForInitContainers, no weights", "binpack", "", true, false, "dev-0"},
      {"...ForInitContainers, slot=1,core=1,memory=3", "binpack",
       "slot=1,core=1,memory=3", true, false, "dev-1"},
      {"...AsTopologyTieBreaker, no weights", "topology-aware", "", false, true,
       "dev-1"},
      {"...AsTopologyTieBreaker, slot=1,core=1,memory=3", "topology-aware",
       "slot=1,core=1,memory=3", false, true, "dev-0"},
  };
  std::vector<std::string> running = {HamiRunningPod("a1", 10, 90, "dev-0"),
                                      HamiRunningPod("b1", 14, 4, "dev-1")};
  for (int i = 2; i <= 7; ++i) {
    running.push_back(HamiRunningPod(absl::StrCat("b", i), 1, 1, "dev-1"));
  }
  const std::string paired =
      "    hami.io/node-nvidia-score: '[{\"uuid\":\"dev-0\",\"score\":"
      "{\"dev-1\":1}},{\"uuid\":\"dev-1\",\"score\":{\"dev-0\":1}}]'\n";
  for (const Row& row : rows) {
    SCOPED_TRACE(row.upstream);
    std::string annotations =
        absl::StrCat("{hami.io/gpu-scheduler-policy: ", row.policy);
    if (*row.weights != '\0') {
      absl::StrAppend(&annotations, ", hami.io/device-scoring-weights: \"",
                      row.weights, "\"");
    }
    const std::string gpu_container =
        "name: gpu\n    image: x\n    resources:\n      limits: "
        "{nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 40}\n";
    const std::string pod = absl::StrCat(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: "
        "default\n  annotations: ",
        annotations, "}\nspec:\n",
        row.init ? absl::StrCat("  initContainers:\n  - ", gpu_container,
                                "  containers:\n  - name: app\n    image: x\n")
                 : absl::StrCat("  containers:\n  - ", gpu_container));
    std::vector<std::string> docs = running;
    docs.push_back(pod);
    auto report =
        SimulateJson(T4Node(2, 100, row.paired ? paired : ""), Docs(docs));
    ASSERT_OK(report);
    EXPECT_EQ(DeviceOf(*report, "p")["uuid"], row.gpu) << report->dump(1);
  }
}

// Kind 1. HAMi's numa policy and comma chains (gpu_policy_test.go chain
// cases): bare numa takes the highest NUMA node's highest index; in
// "binpack,numa" the fuller GPU wins over NUMA; with numa-bind the NUMA key
// goes first whatever the chain says.
TEST(SimulateUpstreamTest, HamiPolicyChainsRankInTheOrderWritten) {
  const std::string cluster = ShortCluster({ShortNode(
      "n", absl::StrCat(
               Gpus("n", 2, 16384, "NVIDIA A100-SXM4-80GB", "numa: 0"),
               Gpus("n", 2, 16384, "NVIDIA A100-SXM4-80GB", "numa: 1", 2)))});
  const std::string busy =
      RunningPod("busy", "nvidia.com/gpu: 1, nvidia.com/gpumem: 8000",
                 "hami.io/vgpu-devices-allocated", "GPU-n-0,NVIDIA,8000,0:;");
  const std::string ask = "nvidia.com/gpu: 1, nvidia.com/gpumem: 1000";
  auto run = [&](const std::string& annotations) {
    return SimulateJson(cluster, Docs({busy, PodYaml("p", ask, annotations)}));
  };
  auto numa = run("hami.io/gpu-scheduler-policy: numa");
  ASSERT_OK(numa);
  EXPECT_EQ(DeviceOf(*numa, "p")["uuid"], "GPU-n-3");
  auto chain = run("hami.io/gpu-scheduler-policy: \"binpack, numa\"");
  ASSERT_OK(chain);
  EXPECT_EQ(DeviceOf(*chain, "p")["uuid"], "GPU-n-0");
  auto bound =
      run("hami.io/gpu-scheduler-policy: \"binpack,numa\", "
          "nvidia.com/numa-bind: \"true\"");
  ASSERT_OK(bound);
  EXPECT_EQ(DeviceOf(*bound, "p")["uuid"], "GPU-n-3");
  auto mutex = run("hami.io/gpu-scheduler-policy: \"binpack,mutex\"");
  ASSERT_OK(mutex);
  EXPECT_NE(DeviceOf(*mutex, "p")["uuid"], "GPU-n-0");
}

// hami.io/node-nvidia-score for four GPUs: NVLink pairs dev-0/dev-1 and
// dev-2/dev-3 scoring `first_pair` and `second_pair`, PCIe between them.
std::string PairScores(int first_pair, int second_pair) {
  const int score[4][4] = {{0, first_pair, 10, 10},
                           {first_pair, 0, 10, 20},
                           {10, 10, 0, second_pair},
                           {10, 20, second_pair, 0}};
  std::vector<std::string> entries;
  for (int a = 0; a < 4; ++a) {
    std::vector<std::string> peers;
    for (int b = 0; b < 4; ++b) {
      if (a != b)
        peers.push_back(absl::StrCat("\"dev-", b, "\":", score[a][b]));
    }
    entries.push_back(absl::StrCat("{\"uuid\":\"dev-", a, "\",\"score\":{",
                                   absl::StrJoin(peers, ","), "}}"));
  }
  return absl::StrCat("    hami.io/node-nvidia-score: '[",
                      absl::StrJoin(entries, ","), "]'\n");
}

// Kind 1. HAMi's topology-aware (device_test.go TestFit_Topology*, pair
// scores in hami.io/node-nvidia-score): two GPUs take the best-linked pair,
// one GPU the card worst linked to the rest; without the policy both take
// the lowest indices.
TEST(SimulateUpstreamTest, HamiTopologyAwareReadsPairScores) {
  const std::string topology = "hami.io/gpu-scheduler-policy: topology-aware";
  const std::string two = "nvidia.com/gpu: 2, nvidia.com/gpumem: 1000";
  auto uuids = [&](const std::string& annotations) {
    std::set<std::string> out;
    auto report = SimulateJson(T4Node(4, 16384, PairScores(50, 100)),
                               PodYaml("p", two, annotations));
    EXPECT_OK(report);
    if (!report.ok()) return out;
    const Json devices = PlacementOf(*report, "p")["containers"][0]["devices"];
    for (const Json& device : devices) {
      out.insert(device["uuid"].get<std::string>());
    }
    return out;
  };
  EXPECT_EQ(uuids(topology), (std::set<std::string>{"dev-2", "dev-3"}));
  EXPECT_EQ(uuids(""), (std::set<std::string>{"dev-0", "dev-1"}));
  // Sums to the others: dev-0 120, dev-1 130, dev-2 70, dev-3 80.
  auto one = SimulateJson(
      T4Node(4, 16384, PairScores(100, 50)),
      PodYaml("one", "nvidia.com/gpu: 1, nvidia.com/gpumem: 1000", topology));
  ASSERT_OK(one);
  EXPECT_EQ(DeviceOf(*one, "one")["uuid"], "dev-2");
}

// A pod bound to node n1 with HAMi's record `record` and, unless empty,
// the MIG allocations `mig` (hami.io/vgpu-mig-allocations).
std::string HamiMigRunningPod(const std::string& name,
                              const std::string& record,
                              const std::string& mig) {
  std::string annotations =
      absl::StrCat("    hami.io/vgpu-devices-allocated: '", record, "'\n");
  if (!mig.empty()) {
    absl::StrAppend(&annotations, "    hami.io/vgpu-mig-allocations: '", mig,
                    "'\n");
  }
  return absl::StrCat(
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: ", name,
      "\n  namespace: default\n  annotations:\n", annotations,
      "spec:\n  nodeName: n1\n  containers:\n  - name: main\n    resources:\n"
      "      limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: 4000}\n");
}

// How many of `probes` pods, each asking `limits` with `annotations`, a
// MIG A100-40GB (seven 1g.5gb slices) on node n1 takes beside `running`.
int MigProbesPlaced(
    const std::string& running, int probes,
    const std::string& limits = "nvidia.com/gpu: 1, nvidia.com/gpumem: 4000",
    const std::string& annotations = "nvidia.com/vgpu-mode: mig") {
  std::vector<std::string> docs;
  if (!running.empty()) docs.push_back(running);
  for (int i = 0; i < probes; ++i) {
    docs.push_back(PodYaml(absl::StrCat("probe", i), limits, annotations));
  }
  auto report = SimulateJson(
      ShortCluster({ShortNode(
          "n1", Gpus("n1", 1, 40960, "NVIDIA A100-SXM4-40GB", "mode: mig"))}),
      Docs(docs), "scheduler: {modes: [hami-core, mig]}\n");
  EXPECT_OK(report);
  if (!report.ok()) return -1;
  int instances = 0;
  for (const Json& placement : (*report)["placements"]) {
    for (const Json& container : placement["containers"]) {
      instances += static_cast<int>(container["devices"].size());
    }
  }
  return instances;
}

// HAMi's pkg/scheduler/mig_allocation_test.go (and device_test.go's MIG
// request cases), restated: what a MIG GPU still takes beside the pods its
// records restore, counted in 1g.5gb instances granted to probes. Kind 4:
// records are restored with their reservations, also those the record does
// not list yet; a record without any fails the GPU closed.
TEST(SimulateUpstreamTableTest, HamiMigAllocation) {
  const std::string record = "GPU-n1-0,NVIDIA,5120,14:;";
  const std::string at6 =
      R"({"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-n1-0",)"
      R"("profile":"1g.5gb","placement":{"start":6,"size":1}})";
  const std::string at5 =
      R"({"containerIndex":0,"deviceIndex":1,"gpuUUID":"GPU-n1-0",)"
      R"("profile":"1g.5gb","placement":{"start":5,"size":1}})";
  struct Row {
    const char* upstream;
    std::string running;
    int probes;
    std::string limits;
    std::string annotations;
    int instances;
  };
  const std::string one = "nvidia.com/gpu: 1, nvidia.com/gpumem: 4000";
  const std::string mig = "nvidia.com/vgpu-mode: mig";
  const Row rows[] = {
      {":207 TestFitInDevicesAllowsMultipleMigPlacementsOnSingleGPU: "
       "gpu=2 takes two instances of the one GPU",
       "", 1, "nvidia.com/gpu: 2, nvidia.com/gpumem: 4000", mig, 2},
      {":33 TestGetNodesUsageRestoresMigAllocationByProfileAndPlacement: "
       "placement 6 restored, six slices left",
       HamiMigRunningPod("held", record, absl::StrCat("[", at6, "]")), 7, one,
       mig, 6},
      {":59 TestGetNodesUsageFailsClosedWithoutMigAllocation: nothing fits",
       HamiMigRunningPod("blind", record, ""), 2, one, mig, 0},
      {"scheduler.go getNodesUsage: a MIG record that does not decode "
       "leaves the pod's devices charged and their MIG GPU unhealthy: "
       "nothing fits (deviceshare used to leave the pod out, and hand its "
       "slice out again)",
       HamiMigRunningPod("garbled", record,
                         absl::StrCat("[", at6.substr(0, at6.size() - 2), "]")),
       7, one, mig, 0},
      {"the same for an entry whose placement is not an object",
       HamiMigRunningPod(
           "garbled", record,
           R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-n1-0",)"
           R"("profile":"1g.5gb","placement":[6,1]}])"),
       7, one, mig, 0},
      {":82 TestGetNodesUsageRestoresUnconsumedMigReservations: 5 and 6 held",
       HamiMigRunningPod("held", record, absl::StrCat("[", at6, ",", at5, "]")),
       7, one, mig, 5},
      {":162 TestIsMIGRequest \"MIG mode without Pod annotation\": a pod "
       "naming no mode is a MIG request on a MIG GPU",
       "", 8, one, "", 7},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.upstream);
    EXPECT_EQ(
        MigProbesPlaced(row.running, row.probes, row.limits, row.annotations),
        row.instances);
  }
}

// HAMi's nvidia/mig_topology.go orderedMigPlacements tries the highest
// start first for 1g and 3g profiles and the lowest for the others, and
// takes the first free one: on an idle A100-40GB a 1g.5gb goes to slice 6,
// a 3g.20gb to 4, a 4g.20gb to 0, as here. A 2g.10gb goes to 0 in HAMi,
// which leaves no room for a 4g.20gb (its one start is 0); deviceshare
// takes the start that leaves the most placements free, 4, so a 4g still
// fits beside it (docs/compatibility.md row 15). Among starts that leave
// as much free, deviceshare follows HAMi's order.
TEST(SimulateUpstreamTest, HamiMigStartFollowsOrderedMigPlacements) {
  struct Row {
    const char* profile;
    int start;
  };
  const Row rows[] = {
      {"1g.5gb", 6}, {"2g.10gb", 4}, {"3g.20gb", 4}, {"4g.20gb", 0}};
  for (const Row& row : rows) {
    SCOPED_TRACE(row.profile);
    auto report = SimulateJson(
        ShortCluster({ShortNode(
            "n1", Gpus("n1", 1, 40960, "NVIDIA A100-SXM4-40GB", "mode: mig"))}),
        Docs({PodYaml("p",
                      absl::StrCat("nvidia.com/mig-", row.profile, ": 1"))}),
        "scheduler: {modes: [hami-core, mig]}\n");
    ASSERT_OK(report);
    const Json device = DeviceOf(*report, "p");
    ASSERT_FALSE(device.is_null()) << report->dump(1);
    EXPECT_EQ(device["mig_profile"], row.profile);
    EXPECT_EQ(device["mig_start"], row.start);
  }
}

// Node n1 registered in HAMi's JSON with one MIG GPU "GPU-n1-0" of `type`
// and `devmem` MiB whose migProfiles are `profiles`.
std::string HamiMigNode(const std::string& profiles,
                        const std::string& type = "NVIDIA-A100-SXM4-40GB",
                        int devmem = 40960) {
  return absl::StrCat(
      "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  annotations:\n"
      "    hami.io/node-nvidia-register: '[{\"id\":\"GPU-n1-0\",\"count\":7,"
      "\"devmem\":",
      devmem, ",\"devcore\":100,\"type\":\"", type,
      "\",\"mode\":\"mig\",\"migProfiles\":", profiles,
      ",\"health\":true}]'\n");
}

// 1g.5gb as HAMi's tests register it (5120 MiB, 14 %) at `starts`.
std::string OneG5gb(const std::vector<int>& starts, int memory_mb = 5120) {
  std::vector<std::string> placements;
  for (int start : starts) {
    placements.push_back(absl::StrCat(R"({"start":)", start, R"(,"size":1})"));
  }
  return absl::StrCat(R"([{"name":"1g.5gb","memoryMB":)", memory_mb,
                      R"(,"core":14,"sliceCount":1,"placements":[)",
                      absl::StrJoin(placements, ","), "]}]");
}

// Kind 4. A GPU's registered migProfiles are its catalogue, as in HAMi's
// scheduler (nvidia/device.go selectMigCandidate over
// DeviceUsage.MigProfiles): only registered placements are given out, with
// the registered memory and core share; a percentage is of the registered
// memory. Rows count the probes placed and, for the first, its start and
// charge (what vgpu-devices-allocated carries).
TEST(SimulateUpstreamTableTest, HamiRegisteredMigCatalogue) {
  const std::string record = "GPU-n1-0,NVIDIA,5120,14:;";
  const std::string at6 =
      R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-n1-0",)"
      R"("profile":"1g.5gb","placement":{"start":6,"size":1}}])";
  const std::string one = "nvidia.com/gpu: 1, nvidia.com/gpumem: 4000";
  struct Row {
    const char* upstream;
    std::string node;
    std::string running;
    int probes;
    std::string limits;
    int placed;
    int first_start;  // -1: nothing placed
    int first_memory_mib;
    int first_cores;
  };
  const Row rows[] = {
      {"D4 (follows from mig_allocation_test.go:236 and :33): only placement "
       "6 registered, the 1st pod at 6, the 2nd does not fit",
       HamiMigNode(OneG5gb({6})), "", 2, one, 1, 6, 5120, 14},
      {"D5 mig_allocation_test.go:33 TestGetNodesUsageRestoresMigAllocation"
       "ByProfileAndPlacement: placement 6 restored, a new 1g cannot fit",
       HamiMigNode(OneG5gb({6})), HamiMigRunningPod("held", record, at6), 1,
       one, 0, -1, 0, 0},
      {"D9 mig_profiles_test.go:36: the record carries the registered "
       "memoryMB and core (not the built-in 4864 MiB)",
       HamiMigNode(OneG5gb({0, 1, 2, 3, 4, 5, 6})), "", 7, one, 7, 6, 5120, 14},
      {"B13 device_test.go:2644 TestFit_MigPercentageRequestRejects"
       "UndersizedTemplate: 50 % of 8192 MiB on a 1024 MiB profile",
       HamiMigNode(OneG5gb({0, 1, 2, 3, 4, 5, 6}, 1024), "NVIDIA", 8192), "", 1,
       "nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 50", 0, -1, 0, 0},
      {"B13 contrast: 10 % (819 MiB) fits the 1024 MiB profile",
       HamiMigNode(OneG5gb({0, 1, 2, 3, 4, 5, 6}, 1024), "NVIDIA", 8192), "", 1,
       "nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 10", 1, 6, 1024, 14},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.upstream);
    std::vector<std::string> docs;
    if (!row.running.empty()) docs.push_back(row.running);
    for (int i = 0; i < row.probes; ++i) {
      docs.push_back(PodYaml(absl::StrCat("probe", i), row.limits,
                             "nvidia.com/vgpu-mode: mig"));
    }
    auto report = SimulateJson(row.node, Docs(docs),
                               "scheduler: {modes: [hami-core, mig]}\n");
    ASSERT_OK(report);
    int placed = 0;
    for (int i = 0; i < row.probes; ++i) {
      placed += !DeviceOf(*report, absl::StrCat("probe", i)).is_null();
    }
    EXPECT_EQ(placed, row.placed) << report->dump(1);
    if (row.first_start < 0) continue;
    const Json first = DeviceOf(*report, "probe0");
    ASSERT_FALSE(first.is_null());
    EXPECT_EQ(first["mig_profile"], "1g.5gb");
    EXPECT_EQ(first["mig_start"], row.first_start);
    EXPECT_EQ(first["memory_mib"], row.first_memory_mib);
    EXPECT_EQ(first["cores"], row.first_cores);
  }
}

// Kind 4. HAMi's selectMigCandidate (nvidia/device.go) chooses a registered
// profile by memory alone: 4000 MiB with gpucores 50 gets the 1g.5gb (14 %
// of the SMs), not the 4g.20gb whose 57 % would hold the cores; the
// request's cores choose nothing (as Volcano's configmap search, G6).
TEST(SimulateUpstreamTest, HamiRegisteredMigProfileIsChosenByMemory) {
  const std::string profiles =
      R"([{"name":"1g.5gb","memoryMB":5120,"core":14,"sliceCount":1,)"
      R"("placements":[{"start":0,"size":1},{"start":1,"size":1}]},)"
      R"({"name":"4g.20gb","memoryMB":20480,"core":57,"sliceCount":4,)"
      R"("placements":[{"start":0,"size":4}]}])";
  auto report = SimulateJson(
      HamiMigNode(profiles),
      Docs({PodYaml("cores",
                    "nvidia.com/gpu: 1, nvidia.com/gpumem: 4000, "
                    "nvidia.com/gpucores: 50",
                    "nvidia.com/vgpu-mode: mig"),
            PodYaml("big", "nvidia.com/gpu: 1, nvidia.com/gpumem: 8000",
                    "nvidia.com/vgpu-mode: mig")}),
      "scheduler: {modes: [hami-core, mig]}\n");
  ASSERT_OK(report);
  const Json cores = DeviceOf(*report, "cores");
  ASSERT_FALSE(cores.is_null()) << report->dump(1);
  EXPECT_EQ(cores["mig_profile"], "1g.5gb");
  EXPECT_EQ(cores["cores"], 14);
  // Memory still chooses: 8000 MiB needs the 4g.20gb, whose slices 0-3
  // overlap the 1g at 0 or 1 taken above, so it does not fit.
  EXPECT_TRUE(DeviceOf(*report, "big").is_null()) << report->dump(1);
}

// A registered profile with core 0 (NVML gave no SM counts): HAMi charges
// its instances 0 cores; deviceshare the instance's share of the slices
// (docs/compatibility.md). The instance is the same either way.
TEST(SimulateUpstreamTest,
     HamiRegisteredMigProfileWithoutCoresIsChargedItsSlices) {
  const std::string profiles =
      R"([{"name":"1g.5gb","memoryMB":5120,"core":0,"sliceCount":1,)"
      R"("placements":[{"start":0,"size":1}]}])";
  auto report =
      SimulateJson(HamiMigNode(profiles),
                   PodYaml("p", "nvidia.com/gpu: 1, nvidia.com/gpumem: 4000",
                           "nvidia.com/vgpu-mode: mig"),
                   "scheduler: {modes: [hami-core, mig]}\n");
  ASSERT_OK(report);
  const Json device = DeviceOf(*report, "p");
  ASSERT_FALSE(device.is_null()) << report->dump(1);
  EXPECT_EQ(device["mig_profile"], "1g.5gb");
  EXPECT_EQ(device["memory_mib"], 5120);
  EXPECT_EQ(device["cores"], 14);  // one of the A100's seven slices
}

// Kind 7. Records upstream's decoders read, charged as they charge them:
// HAMi's (devices.go DecodeContainerDevices: no final ':' or ';', any
// vendor column, a fifth field) and Volcano's (utils.go
// decodeContainerDevices: a bad device skipped, the rest kept). A pod that
// would fit on the GPU if the record were charged as zero stays pending.
TEST(SimulateUpstreamTest, LooseRecordsOfRunningPodsAreCharged) {
  struct Case {
    const char* upstream;
    const char* limits;
    const char* key;
    const char* record;
  };
  const Case cases[] = {
      {"HAMi, no terminators, another vendor column",
       "nvidia.com/gpu: 1, nvidia.com/gpumem: 10000",
       "hami.io/vgpu-devices-allocated", "GPU-n-0,NVIDIA-A100,10000,10,x"},
      {"Volcano, a bad device before a good one, no final ':'",
       "volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 10000",
       "volcano.sh/vgpu-ids-new",
       "GPU-n-0,NVIDIA,-5,30:GPU-n-0,NVIDIA,10000,10"},
      {"HAMi, a stale device beside a valid one (scheduler_test.go "
       "Test_getNodesUsage_StalePodDeviceAllocation MixedStaleAndValid)",
       "nvidia.com/gpu: 2, nvidia.com/gpumem: 10000",
       "hami.io/vgpu-devices-allocated",
       "GPU-gone,NVIDIA,10000,10:GPU-n-0,NVIDIA,10000,10:;"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.upstream);
    auto report = SimulateJson(
        ShortCluster({ShortNode("n", Gpus("n", 1, 16384))}),
        Docs({RunningPod("old", c.limits, c.key, c.record),
              PodYaml("new", "nvidia.com/gpu: 1, nvidia.com/gpumem: 8000")}),
        "scheduler: {nodePolicy: binpack, gpuPolicy: binpack}\n");
    ASSERT_OK(report);
    const Json pending = UnschedulableOf(*report, "new");
    ASSERT_FALSE(pending.is_null()) << report->dump(1);
    EXPECT_THAT(pending.dump(), HasSubstr("InsufficientMemory"));
    EXPECT_TRUE(PlacementOf(*report, "old").is_null());
  }
}

// The deliberate differences of docs/compatibility.md that a pod shows:
// HAMi drops a byte-scale gpumem ("16Gi", device_test.go:1962) and runs
// the container without a limit, deviceshare reads it as that many MiB and
// keeps the pod pending; Volcano books vgpu-memory-percentage 0 as 0 MiB
// (no limit), deviceshare as the whole card.
TEST(SimulateUpstreamTest, DeliberateDifferencesKeepTheSafeBooking) {
  auto report = SimulateJson(
      ShortCluster({ShortNode("n", Gpus("n", 2, 16384))}),
      Docs({PodYaml("bytes", "nvidia.com/gpu: 1, nvidia.com/gpumem: 16Gi"),
            PodYaml("pct0",
                    "volcano.sh/vgpu-number: 1, "
                    "volcano.sh/vgpu-memory-percentage: 0")}),
      "scheduler: {nodePolicy: binpack, gpuPolicy: spread}\n");
  ASSERT_OK(report);
  EXPECT_THAT(UnschedulableOf(*report, "bytes").dump(),
              HasSubstr("InsufficientMemory"));
  EXPECT_EQ(DeviceOf(*report, "pct0")["memory_mib"], 16384);
}

// HAMi's device_test.go TestDevices_Fit, restated: one 16384 MiB GPU
// (split 10, or as the row says) holding the running pod `old` when the
// row has one; the new pod's fate and reason code.
TEST(SimulateUpstreamTableTest, HamiDevicesFit) {
  struct Row {
    const char* upstream;
    const char* gpu_extra;   // short-form GPU keys
    const char* old_limits;  // "" = no running pod
    const char* old_record;
    const char* new_limits;
    const char* want_code;  // "" = placed
  };
  constexpr char kHamiRecord[] = "hami.io/vgpu-devices-allocated";
  const Row rows[] = {
      {":773 fit success", "", "", "",
       "nvidia.com/gpu: 1, nvidia.com/gpumem: 64, nvidia.com/gpucores: 50", ""},
      {":1012 card exclusively (a tenant is there)", "",
       "nvidia.com/gpu: 1, nvidia.com/gpumem: 64, nvidia.com/gpucores: 10",
       "GPU-n-0,NVIDIA,64,10:;",
       "nvidia.com/gpu: 1, nvidia.com/gpumem: 512, nvidia.com/gpucores: 100",
       "ExclusiveConflict"},
      {":1040 CardComputeUnitsExhausted", "",
       "nvidia.com/gpu: 1, nvidia.com/gpumem: 64, nvidia.com/gpucores: 100",
       "GPU-n-0,NVIDIA,64,100:;",
       "nvidia.com/gpu: 1, nvidia.com/gpumem: 512, nvidia.com/gpucores: 0",
       "ExclusiveConflict"},
      {":844 core not enough", "",
       "nvidia.com/gpu: 1, nvidia.com/gpumem: 64, nvidia.com/gpucores: 100",
       "GPU-n-0,NVIDIA,64,100:;",
       "nvidia.com/gpu: 1, nvidia.com/gpumem: 512, nvidia.com/gpucores: 50",
       "ExclusiveConflict"},
      {":956 card overused (split count reached)", "split: 1",
       "nvidia.com/gpu: 1, nvidia.com/gpumem: 64, nvidia.com/gpucores: 10",
       "GPU-n-0,NVIDIA,64,10:;",
       "nvidia.com/gpu: 1, nvidia.com/gpumem: 64, nvidia.com/gpucores: 10",
       "SplitExhausted"},
      {":1068 AllocatedCardsInsufficientRequest", "", "", "",
       "nvidia.com/gpu: 2, nvidia.com/gpumem: 64", "InsufficientGpus"},
      {":1167 CardNotHealth", "healthy: false", "", "",
       "nvidia.com/gpu: 1, nvidia.com/gpumem: 64", "GpuUnhealthy"},
      {"card insufficient memory", "",
       "nvidia.com/gpu: 1, nvidia.com/gpumem: 16000",
       "GPU-n-0,NVIDIA,16000,0:;", "nvidia.com/gpu: 1, nvidia.com/gpumem: 512",
       "InsufficientMemory"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.upstream);
    std::vector<std::string> pods;
    if (*row.old_limits != '\0') {
      pods.push_back(
          RunningPod("old", row.old_limits, kHamiRecord, row.old_record));
    }
    pods.push_back(PodYaml("new", row.new_limits));
    auto report = SimulateJson(
        ShortCluster({ShortNode(
            "n", Gpus("n", 1, 16384, "NVIDIA A100-SXM4-80GB", row.gpu_extra))}),
        Docs(pods));
    ASSERT_OK(report);
    if (*row.want_code == '\0') {
      EXPECT_FALSE(PlacementOf(*report, "new").is_null()) << report->dump(1);
    } else {
      EXPECT_THAT(UnschedulableOf(*report, "new")["reason_counts"].dump(),
                  HasSubstr(row.want_code));
    }
  }
}

// HAMi's numa_sort_test.go, restated: three GPUs on two NUMA nodes with
// running pods; which GPUs the new pod gets.
TEST(SimulateUpstreamTableTest, HamiNumaSort) {
  const std::string cluster = ShortCluster({ShortNode(
      "n", absl::StrCat(
               Gpus("n", 1, 16384, "NVIDIA A100-SXM4-80GB", "numa: 0"),
               Gpus("n", 1, 16384, "NVIDIA A100-SXM4-80GB", "numa: 0", 1),
               Gpus("n", 1, 16384, "NVIDIA A100-SXM4-80GB", "numa: 1", 2)))});
  constexpr char kHamiRecord[] = "hami.io/vgpu-devices-allocated";
  const std::string busy_a =
      RunningPod("busy-a", "nvidia.com/gpu: 1, nvidia.com/gpumem: 8000",
                 kHamiRecord, "GPU-n-0,NVIDIA,8000,0:;");
  const std::string mid_c =
      RunningPod("mid-c", "nvidia.com/gpu: 1, nvidia.com/gpumem: 4000",
                 kHamiRecord, "GPU-n-2,NVIDIA,4000,0:;");
  // :61 TestNumaBindSortPreservesAffinity: numa-bind, spread, two GPUs:
  // the NUMA-0 pair, though GPU 2 is emptier than GPU 0.
  auto bound = SimulateJson(
      cluster,
      Docs({busy_a, mid_c,
            PodYaml("pair", "nvidia.com/gpu: 2, nvidia.com/gpumem: 1000",
                    "nvidia.com/numa-bind: \"true\", "
                    "hami.io/gpu-scheduler-policy: spread")}));
  ASSERT_OK(bound);
  const Json devices = PlacementOf(*bound, "pair")["containers"][0]["devices"];
  ASSERT_EQ(devices.size(), 2) << bound->dump(1);
  std::set<std::string> uuids = {devices[0]["uuid"], devices[1]["uuid"]};
  EXPECT_EQ(uuids, (std::set<std::string>{"GPU-n-0", "GPU-n-1"}));
  // :95 TestScorePrimarySelectsAcrossNuma: without numa-bind the score
  // decides across NUMA nodes: spread takes the idlest GPU.
  auto spread = SimulateJson(
      cluster,
      Docs({busy_a, mid_c,
            PodYaml("one", "nvidia.com/gpu: 1, nvidia.com/gpumem: 1000",
                    "hami.io/gpu-scheduler-policy: spread")}));
  ASSERT_OK(spread);
  EXPECT_EQ(DeviceOf(*spread, "one")["uuid"], "GPU-n-1");
}

}  // namespace
}  // namespace deviceshare
