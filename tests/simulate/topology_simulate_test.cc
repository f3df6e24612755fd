// topology-aware through simulate: the short form's `links`, its errors,
// and a k-GPU pod going to the node with the better set when topology-aware
// is the node policy too.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/config/device_config.h"
#include "deviceshare/input/cluster_loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simulate_fixtures.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::Gpus;
using ::deviceshare::testing::PlacementOf;
using ::deviceshare::testing::PodYaml;
using ::deviceshare::testing::ShortCluster;
using ::deviceshare::testing::SimulateJson;
using ::deviceshare::testing::StatusIs;
using ::deviceshare::testing::UuidsOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A short-form node of `count` A100s with `links` (YAML list items, each
// "  - {...}\n"), GPUs 0..count/2-1 on NUMA 0 and the rest on NUMA 1.
std::string LinkedNode(const std::string& name, int count,
                       const std::string& links) {
  std::string out = absl::StrCat("- name: ", name, "\n  gpus:\n");
  absl::StrAppend(
      &out, Gpus(name, count / 2, 81920, "NVIDIA A100-SXM4-80GB", "numa: 0"));
  absl::StrAppend(&out, Gpus(name, count - count / 2, 81920,
                             "NVIDIA A100-SXM4-80GB", "numa: 1", count / 2));
  if (!links.empty()) absl::StrAppend(&out, "  links:\n", links);
  return out;
}

// Two NVLink islands of four (4 lanes a pair), each behind a host bridge.
const char kTwoIslands[] =
    "  - {gpus: [0, 1, 2, 3], nvlinks: 4, pcie: hostbridge}\n"
    "  - {gpus: [4, 5, 6, 7], nvlinks: 4, pcie: hostbridge}\n";
// PCIe only: switches 0-1, 2-3, 4-5, 6-7.
const char kPcieOnly[] =
    "  - {gpus: [0, 1], pcie: switch}\n"
    "  - {gpus: [2, 3], pcie: switch}\n"
    "  - {gpus: [4, 5], pcie: switch}\n"
    "  - {gpus: [6, 7], pcie: switch}\n";

TEST(TopologySimulateTest, ShortFormLinksAreParsed) {
  const DeviceConfig config;
  auto cluster = input::LoadClusterYaml(
      ShortCluster({LinkedNode("a", 4,
                               "  - {gpus: [0, 1, 2, 3], nvlinks: 2}\n"
                               "  - {gpus: [0, 1], nvlinks: 12, pcie: "
                               "switch}\n"
                               "  - {gpus: [1, 2], numa: true}\n"),
                    LinkedNode("plain", 2, "")}),
      "c.yaml", config);
  ASSERT_OK(cluster);
  const std::vector<Gpu>& gpus = cluster->nodes[0].gpus;
  ASSERT_EQ(gpus.size(), 4u);
  // 0-1: later entry wins member by member; 0-2, 0-3: 2 lanes, NUMA from
  // the GPUs' numa (0 and 1: no), 1-2: numa said.
  EXPECT_THAT(gpus[0].links,
              ElementsAre(GpuLink{1, 12, true, PcieLevel::kSwitch},
                          GpuLink{2, 2, false, PcieLevel::kSystem},
                          GpuLink{3, 2, false, PcieLevel::kSystem}));
  EXPECT_THAT(gpus[1].links,
              ElementsAre(GpuLink{0, 12, true, PcieLevel::kSwitch},
                          GpuLink{2, 2, true, PcieLevel::kNuma},
                          GpuLink{3, 2, false, PcieLevel::kSystem}));
  EXPECT_THAT(gpus[3].links,
              ElementsAre(GpuLink{0, 2, false, PcieLevel::kSystem},
                          GpuLink{1, 2, false, PcieLevel::kSystem},
                          GpuLink{2, 2, true, PcieLevel::kNuma}));
  EXPECT_THAT(cluster->nodes[1].gpus[0].links, IsEmpty());
}

TEST(TopologySimulateTest, BadShortFormLinksNameFieldAndValue) {
  const DeviceConfig config;
  struct Case {
    std::string link;
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      {"{gpus: [0, 9], nvlinks: 2}",
       {"nodes[0].links[0].gpus[1]: 9 is out of range (the node has 4 GPUs"}},
      {"{gpus: [0, 1], nvlinks: -2}", {"nodes[0].links[0].nvlinks", "-2"}},
      {"{gpus: [0, 1], pcie: bridge}",
       {"nodes[0].links[0].pcie: \"bridge\" is not a PCIe level (want board, "
        "switch, switches, hostbridge, numa or system)"}},
      {"{gpus: [0], nvlinks: 2}", {"nodes[0].links[0].gpus: names 1 GPU"}},
      {"{gpus: [1, 1], nvlinks: 2}",
       {"nodes[0].links[0].gpus[1]: 1 is listed twice"}},
      {"{gpus: [0, x]}", {"nodes[0].links[0].gpus[1]: \"x\" is not a GPU"}},
      {"{nvlinks: 2}", {"nodes[0].links[0].gpus: is missing"}},
      {"{gpus: [0, 1], lanes: 2}", {"nodes[0].links[0].lanes: unknown key"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.link);
    auto cluster = input::LoadClusterYaml(
        ShortCluster({LinkedNode("a", 4, absl::StrCat("  - ", c.link, "\n"))}),
        "c.yaml", config);
    for (const std::string& part : c.parts) {
      EXPECT_THAT(cluster, StatusIs(absl::StatusCode::kInvalidArgument,
                                    HasSubstr(part)));
    }
  }
}

// A pod asking four whole GPUs, its GPU policy topology-aware.
std::string FourGpuPod(const std::string& name) {
  return PodYaml(name, "nvidia.com/gpu: 4",
                 "hami.io/gpu-scheduler-policy: topology-aware");
}

// Node "a-pcie" (PCIe only) sorts before "b-nvlink" (two NVLink islands):
// with topology-aware as the node policy the pod goes where the better set
// is, an NVLink island; with binpack the empty nodes tie and the name
// decides.
TEST(TopologySimulateTest, TheNodeWithTheBetterSetWins) {
  const std::string cluster =
      ShortCluster({LinkedNode("a-pcie", 8, kPcieOnly),
                    LinkedNode("b-nvlink", 8, kTwoIslands)});
  auto topology = SimulateJson(
      cluster, FourGpuPod("p"),
      "scheduler: {nodePolicy: topology-aware, gpuPolicy: spread}\n");
  ASSERT_OK(topology);
  EXPECT_EQ(PlacementOf(*topology, "p")["node"], "b-nvlink");
  EXPECT_THAT(UuidsOf(*topology, "p"),
              ElementsAre("GPU-b-nvlink-0", "GPU-b-nvlink-1", "GPU-b-nvlink-2",
                          "GPU-b-nvlink-3"));
  auto binpack =
      SimulateJson(cluster, FourGpuPod("p"),
                   "scheduler: {nodePolicy: binpack, gpuPolicy: spread}\n");
  ASSERT_OK(binpack);
  EXPECT_EQ(PlacementOf(*binpack, "p")["node"], "a-pcie");
  // On the PCIe node the set is two switch pairs on one NUMA node.
  EXPECT_THAT(UuidsOf(*binpack, "p"),
              ElementsAre("GPU-a-pcie-0", "GPU-a-pcie-1", "GPU-a-pcie-2",
                          "GPU-a-pcie-3"));
}

// Island 0-3 of b-nvlink partly used by a one-GPU pod: the next four-GPU
// pod takes island 4-7 there, and two-GPU pods pick a switch pair on the
// PCIe node over a cross-socket lowest-index pair.
TEST(TopologySimulateTest, SetsFollowTheNodesState) {
  const std::string cluster =
      ShortCluster({LinkedNode("b-nvlink", 8, kTwoIslands)});
  const std::string pods =
      absl::StrCat(PodYaml("one", "nvidia.com/gpu: 1",
                           "hami.io/gpu-scheduler-policy: topology-aware"),
                   "---\n", FourGpuPod("four"));
  auto report = SimulateJson(
      cluster, pods,
      "scheduler: {nodePolicy: topology-aware, gpuPolicy: spread}\n");
  ASSERT_OK(report);
  // One GPU: all alike, the first ranked.
  EXPECT_THAT(UuidsOf(*report, "one"), ElementsAre("GPU-b-nvlink-0"));
  EXPECT_THAT(UuidsOf(*report, "four"),
              ElementsAre("GPU-b-nvlink-4", "GPU-b-nvlink-5", "GPU-b-nvlink-6",
                          "GPU-b-nvlink-7"));
}

}  // namespace
}  // namespace deviceshare
