// Tests of the cluster reader: the short form and Node objects, and the
// errors for invalid input, which must name the file, the document (and its
// line) and the field.
#include "deviceshare/input/cluster_loader.h"

#include <string>

#include "deviceshare/config/device_config.h"
#include "deviceshare/input/gpu_uuid.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace deviceshare::input {
namespace {

using ::deviceshare::testing::StatusIs;
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
                              "memory_mib: 1, mode: Shared}\n",
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

}  // namespace
}  // namespace deviceshare::input
