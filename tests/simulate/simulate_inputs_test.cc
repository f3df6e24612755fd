// Tests of simulate's input readers and option checks: the short-form and
// Node-object clusters, pod files, and the errors for invalid input, which
// must name the file, the document (or line) and the field.
#include <string>

#include "deviceshare/config/device_config.h"
#include "deviceshare/simulate/cluster_loader.h"
#include "deviceshare/simulate/gpu_uuid.h"
#include "deviceshare/simulate/pod_loader.h"
#include "deviceshare/simulate/simulate.h"
#include "deviceshare/simulate/yaml_document_lines.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simulate_fixtures.h"
#include "testing/status_matchers.h"

namespace deviceshare::simulate {
namespace {

using ::deviceshare::testing::Docs;
using ::deviceshare::testing::PodYaml;
using ::deviceshare::testing::SimulateJson;
using ::deviceshare::testing::StatusIs;
using ::deviceshare::testing::WriteTempFile;
using ::testing::HasSubstr;
using ::testing::SizeIs;
using ::testing::StartsWith;

TEST(ClusterLoaderTest, ShortFormAppliesDefaultsScalingAndOverrides) {
  DeviceConfig config;
  config.device_split_count = 7;
  config.device_memory_scaling_milli = 1500;
  config.device_core_scaling_milli = 2000;
  auto cluster = LoadClusterYaml(R"(nodes:
- name: gpu-a
  cpu_milli: 64000
  memory_mib: 262144
  gpus:
  - {model: "NVIDIA A100-SXM4-80GB", memory_mib: 81920, count: 2, numa: 1}
  - {model: "NVIDIA A30", memory_mib: 24576, split: 4, cores: 100,
     uuid: GPU-mine, healthy: false, mode: hami-core}
)",
                                 "c.yaml", config);
  ASSERT_OK(cluster);
  ASSERT_THAT(cluster->nodes, SizeIs(1));
  const NodeInventory& node = cluster->nodes[0];
  EXPECT_EQ(node.name, "gpu-a");
  EXPECT_EQ(node.cpu_milli, 64000);
  EXPECT_EQ(node.memory_mib, 262144);
  ASSERT_THAT(node.gpus, SizeIs(3));
  EXPECT_EQ(node.gpus[0].index, 0);
  EXPECT_EQ(node.gpus[1].index, 1);
  EXPECT_EQ(node.gpus[2].index, 2);
  EXPECT_EQ(node.gpus[0].uuid, GeneratedGpuUuid("gpu-a", 0));
  EXPECT_EQ(node.gpus[1].uuid, GeneratedGpuUuid("gpu-a", 1));
  EXPECT_EQ(node.gpus[0].memory_mib, 122880);  // 81920 x 1.5
  EXPECT_EQ(node.gpus[0].split_count, 7);
  EXPECT_EQ(node.gpus[0].core_capacity, 200);
  EXPECT_EQ(node.gpus[0].numa_node, 1);
  EXPECT_TRUE(node.gpus[0].healthy);
  EXPECT_EQ(node.gpus[2].uuid, "GPU-mine");
  EXPECT_EQ(node.gpus[2].split_count, 4);
  EXPECT_EQ(node.gpus[2].core_capacity, 100);
  EXPECT_EQ(node.gpus[2].memory_mib, 36864);
  EXPECT_FALSE(node.gpus[2].healthy);
}

TEST(ClusterLoaderTest, GeneratedUuidsAreStableAndLookLikeNvmls) {
  EXPECT_EQ(GeneratedGpuUuid("gpu-a", 3), GeneratedGpuUuid("gpu-a", 3));
  EXPECT_NE(GeneratedGpuUuid("gpu-a", 3), GeneratedGpuUuid("gpu-b", 3));
  EXPECT_THAT(GeneratedGpuUuid("gpu-a", 3),
              ::testing::MatchesRegex(
                  "GPU-[0-9a-f]{8}-[0-9a-f]{4}-4000-8000-000000000003"));
}

TEST(ClusterLoaderTest, ShortFormErrorsNameThePath) {
  const DeviceConfig config;
  EXPECT_THAT(
      LoadClusterYaml("nodes:\n- name: a\n  gpus:\n  - {model: x, "
                      "memory_mib: 1, splt: 2}\n",
                      "c.yaml", config),
      StatusIs(absl::StatusCode::kInvalidArgument,
               StartsWith("c.yaml: document 1 (line 1): nodes[0].gpus[0].splt: "
                          "unknown key")));
  EXPECT_THAT(
      LoadClusterYaml("nodes:\n- name: a\n  gpus:\n  - {model: x, memory_mib: "
                      "1}\n- name: b\n  gpus:\n  - {model: x, memory_mib: "
                      "\"80Gi\"}\n",
                      "c.yaml", config),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          HasSubstr(
              "document 1 (line 1): nodes[1].gpus[0].memory_mib: \"80Gi\" is "
              "a string, want an integer")));
  EXPECT_THAT(LoadClusterYaml("nodes:\n- gpus: []\n", "c.yaml", config),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("nodes[0].name: is missing")));
  EXPECT_THAT(
      LoadClusterYaml("nodes:\n- name: a\n  gpus:\n  - {model: x, "
                      "memory_mib: 1, count: 2, uuid: GPU-1}\n",
                      "c.yaml", config),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("nodes[0].gpus[0].uuid: a uuid names one GPU")));
  EXPECT_THAT(LoadClusterYaml("nodes:\n- name: a\n  gpus:\n  - {model: x, "
                              "memory_mib: 1, mode: shared}\n",
                              "c.yaml", config),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("nodes[0].gpus[0].mode")));
  EXPECT_THAT(LoadClusterYaml("nodes: []\nnode: x\n", "c.yaml", config),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("node: unknown key")));
  EXPECT_THAT(
      LoadClusterYaml("nodes:\n- name: a\n- name: a\n", "c.yaml", config),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("c.yaml: node a is defined twice")));
  EXPECT_THAT(LoadClusterYaml("nodes:\n- name: a\n  gpus:\n  - {model: x, "
                              "memory_mib: 1, uuid: G}\n- name: b\n  gpus:\n  "
                              "- {model: x, memory_mib: 1, uuid: G}\n",
                              "c.yaml", config),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("node b: gpu uuid G is also on node a")));
}

TEST(ClusterLoaderTest, NodeObjectErrorsNameTheDocument) {
  const DeviceConfig config;
  EXPECT_THAT(
      LoadClusterYaml(R"(kind: Node
metadata: {name: a, annotations: {volcano.sh/node-vgpu-register: 'GPU-1,10,100,T4,true,hami-core:'}}
---
kind: Pod
metadata: {name: b}
)",
                      "n.yaml", config),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          StartsWith("n.yaml: document 2 (line 4): kind: Pod, want Node")));
  EXPECT_THAT(LoadClusterYaml(R"(kind: Node
metadata:
  name: a
  annotations:
    hami.io/node-nvidia-register: '[{"id": 7}]'
)",
                              "n.yaml", config),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       StartsWith("n.yaml: document 1 (line 1): node a: ")));
  EXPECT_THAT(
      LoadClusterYaml("nodes: [\n", "n.yaml", config),
      StatusIs(absl::StatusCode::kInvalidArgument, StartsWith("n.yaml: ")));
}

TEST(PodLoaderTest, PodsKeepFileOrderAndGetUids) {
  auto pods = LoadPodsYaml(
      Docs({PodYaml("b", "nvidia.com/gpu: 1"),
            "kind: List\nitems:\n- metadata: {name: a, uid: u-1}\n  spec: "
            "{containers: [{name: c}]}\n"}),
      "p.yaml", DeviceConfig());
  ASSERT_OK(pods);
  ASSERT_THAT(*pods, SizeIs(2));
  EXPECT_EQ((*pods)[0].Key(), "default/b");
  EXPECT_EQ((*pods)[0].uid, "default/b");
  EXPECT_EQ((*pods)[1].Key(), "default/a");
  EXPECT_EQ((*pods)[1].uid, "u-1");
}

TEST(PodLoaderTest, ErrorsNameFileDocumentAndField) {
  EXPECT_THAT(
      LoadPodsYaml(Docs({PodYaml("a", "nvidia.com/gpu: 1"),
                         PodYaml("b",
                                 "nvidia.com/gpu: 1, "
                                 "nvidia.com/gpumem: \"-3\"")}),
                   "p.yaml", DeviceConfig()),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(StartsWith("p.yaml: document 2 (line 13): pod default/b "
                                "container main: "),
                     HasSubstr("nvidia.com/gpumem"))));
  EXPECT_THAT(LoadPodsYaml(Docs({PodYaml("a", "nvidia.com/gpu: 1"),
                                 PodYaml("a", "nvidia.com/gpu: 2")}),
                           "p.yaml", DeviceConfig()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "p.yaml: document 2 (line 13): pod default/a is already "
                       "defined in document 1"));
  EXPECT_THAT(
      LoadPodsYaml("kind: Deployment\nmetadata: {name: d}\n", "p.yaml",
                   DeviceConfig()),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "p.yaml: document 1 (line 1): kind: Deployment, want Pod"));
  EXPECT_THAT(
      LoadPodsYaml("kind: Pod\nmetadata: {name: a\n", "p.yaml", DeviceConfig()),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(StartsWith("p.yaml: "), HasSubstr("line"))));
}

TEST(PodLoaderTest, DocumentLinesSkipEmptyDocumentsLikeTheParser) {
  EXPECT_THAT(YamlDocumentLines("# c\na: 1\n---\n---\n\n# x\nb: 2\n"),
              ::testing::ElementsAre(2, 7));
  EXPECT_THAT(YamlDocumentLines("a: [\n"), ::testing::IsEmpty());
}

TEST(SimulateOptionsTest, OneCompleteInputKind) {
  SimulateOptions none;
  EXPECT_THAT(CheckOptions(none), StatusIs(absl::StatusCode::kInvalidArgument,
                                           HasSubstr("no input")));
  SimulateOptions half;
  half.cluster_path = "c.yaml";
  EXPECT_THAT(CheckOptions(half), StatusIs(absl::StatusCode::kInvalidArgument,
                                           "--cluster needs --pods"));
  SimulateOptions mixed = half;
  mixed.pods_path = "p.yaml";
  mixed.trace_nodes_path = "n.csv";
  EXPECT_THAT(CheckOptions(mixed), StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr("give one")));
  SimulateOptions synthetic;
  synthetic.synthetic_nodes = 2;
  synthetic.gpus_per_node = 0;
  synthetic.synthetic_pods = 3;
  EXPECT_THAT(CheckOptions(synthetic),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--gpus-per-node: 0 is outside")));
  synthetic.gpus_per_node = 8;
  EXPECT_THAT(CheckOptions(synthetic), ::deviceshare::testing::IsOk());
}

TEST(SimulateOptionsTest, MissingFilesAndBadConfigNameTheFile) {
  SimulateOptions options;
  options.cluster_path = "/nonexistent/cluster.yaml";
  options.pods_path = WriteTempFile("pods.yaml", "");
  EXPECT_THAT(Simulate(options),
              StatusIs(absl::StatusCode::kNotFound,
                       StartsWith("--cluster /nonexistent/cluster.yaml: cannot "
                                  "open")));
  auto bad_config =
      SimulateJson("nodes: []\n", "", "nvidia:\n  deviceSplitCout: 3\n");
  EXPECT_THAT(bad_config, StatusIs(absl::StatusCode::kInvalidArgument,
                                   HasSubstr("config.yaml: nvidia."
                                             "deviceSplitCout: unknown key")));
}

TEST(SimulateOptionsTest, SeedShufflesAndLimitCuts) {
  std::vector<std::string> docs;
  for (int i = 0; i < 20; ++i) {
    docs.push_back(PodYaml(absl::StrCat("p", i),
                           "nvidia.com/gpu: 1, "
                           "nvidia.com/gpumem: 10"));
  }
  const std::string cluster =
      "nodes:\n- name: n\n  gpus:\n  - {model: x, memory_mib: 81920, "
      "count: 8}\n";
  auto order = [](const nlohmann::ordered_json& report) {
    std::vector<std::string> pods;
    for (const auto& p : report["placements"]) pods.push_back(p["pod"]);
    return pods;
  };
  auto plain = SimulateJson(cluster, Docs(docs));
  ASSERT_OK(plain);
  EXPECT_EQ(order(*plain).front(), "default/p0");
  SimulateOptions seeded;
  seeded.seed = 7;
  auto a = SimulateJson(cluster, Docs(docs), "", seeded);
  auto b = SimulateJson(cluster, Docs(docs), "", seeded);
  ASSERT_OK(a);
  ASSERT_OK(b);
  EXPECT_EQ(order(*a), order(*b));
  EXPECT_NE(order(*a), order(*plain));
  SimulateOptions limited;
  limited.limit_pods = 5;
  auto cut = SimulateJson(cluster, Docs(docs), "", limited);
  ASSERT_OK(cut);
  EXPECT_EQ((*cut)["summary"]["pods"], 5);
}

}  // namespace
}  // namespace deviceshare::simulate
