// embedding: the smallest C++ host of the deviceshare library, built
// against the installed package (find_package(deviceshare); see
// CMakeLists.txt here). It registers the nodes of examples/cluster.yaml,
// built in code as the node agent would register them, schedules a few
// pods given as Kubernetes Pod JSON (both dialects), and prints where each
// went and which share of which GPU each container got.
//
// examples/schedule_example.cc does the same from YAML files, in the tree.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/config/device_registration.h"
#include "deviceshare/k8s/pod_parser.h"
#include "deviceshare/scheduler/scheduler.h"
#include "deviceshare/status_macros.h"
#include "nlohmann/json.hpp"

namespace {

using deviceshare::Config;
using deviceshare::Decision;
using deviceshare::DeviceGrant;
using deviceshare::Gpu;
using deviceshare::NodeInventory;
using deviceshare::PodRequest;
using deviceshare::Scheduler;

// Identical GPUs of one node: a line of examples/cluster.yaml.
struct GpuGroup {
  std::string model;
  int64_t memory_mib;  // as NVML reports it
  int count;
  int numa_node;
  int split = 10;  // tenants per GPU at most
};

// A node's inventory with each GPU registered as the node agent does it:
// RegisteredGpu applies the device config (split count, memory and core
// scaling) to the physical facts.
absl::StatusOr<NodeInventory> MakeNode(const std::string& name,
                                       int64_t cpu_milli, int64_t memory_mib,
                                       const std::vector<GpuGroup>& groups,
                                       const Config& config) {
  NodeInventory node;
  node.name = name;
  node.cpu_milli = cpu_milli;
  node.memory_mib = memory_mib;
  for (const GpuGroup& group : groups) {
    for (int i = 0; i < group.count; ++i) {
      Gpu physical;
      physical.index = static_cast<int32_t>(node.gpus.size());
      physical.uuid = absl::StrFormat("GPU-%s-%d", name, physical.index);
      physical.model = group.model;
      physical.memory_mib = group.memory_mib;
      physical.numa_node = group.numa_node;
      DS_ASSIGN_OR_RETURN(Gpu gpu,
                          deviceshare::RegisteredGpu(physical, config.device));
      gpu.split_count = group.split;
      node.gpus.push_back(std::move(gpu));
    }
  }
  return node;
}

// The cluster of examples/cluster.yaml: two 8 x A100-80GB nodes, one
// 4 x H100 node and one 4 x A30 node (four tenants per A30).
absl::Status AddNodes(Scheduler& scheduler, const Config& config) {
  const std::string a100 = "NVIDIA A100-SXM4-80GB";
  const std::string h100 = "NVIDIA H100 80GB HBM3";
  const std::vector<absl::StatusOr<NodeInventory>> nodes = {
      MakeNode("a100-1", 128000, 1048576,
               {{a100, 81920, 4, 0}, {a100, 81920, 4, 1}}, config),
      MakeNode("a100-2", 128000, 1048576,
               {{a100, 81920, 4, 0}, {a100, 81920, 4, 1}}, config),
      MakeNode("h100-1", 96000, 786432,
               {{h100, 81559, 2, 0}, {h100, 81559, 2, 1}}, config),
      MakeNode("a30-1", 32000, 262144,
               {{"NVIDIA A30", 24576, 2, 0, 4}, {"NVIDIA A30", 24576, 2, 1, 4}},
               config),
  };
  for (const absl::StatusOr<NodeInventory>& node : nodes) {
    if (!node.ok()) return node.status();
    // Returns the pods a changed node no longer holds: none here.
    DS_RETURN_IF_ERROR(scheduler.UpsertNode(*node).status());
  }
  return absl::OkStatus();
}

// Pods as a host receives them from the API server.
std::vector<nlohmann::json> Pods() {
  return {
      // HAMi: 20 GiB and 30 % of one GPU.
      nlohmann::json::parse(R"({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "hami-small", "namespace": "team-a",
                     "uid": "embedding-0001"},
        "spec": {"containers": [{"name": "main", "resources": {"limits": {
          "nvidia.com/gpu": 1, "nvidia.com/gpumem": 20480,
          "nvidia.com/gpucores": 30}}}]}})"),
      // Volcano: two GPUs of 10 GiB and 50 % each, H100 only.
      nlohmann::json::parse(R"({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "volcano-two-gpus", "namespace": "team-b",
                     "uid": "embedding-0002",
                     "annotations": {"nvidia.com/use-gputype": "H100"}},
        "spec": {"containers": [{"name": "trainer", "resources": {"limits": {
          "volcano.sh/vgpu-number": 2, "volcano.sh/vgpu-memory": 10240,
          "volcano.sh/vgpu-cores": 50}}}]}})"),
      // More memory than any GPU has: placed nowhere, with reasons.
      nlohmann::json::parse(R"({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "too-big", "namespace": "team-c",
                     "uid": "embedding-0003"},
        "spec": {"containers": [{"name": "main", "resources": {"limits": {
          "nvidia.com/gpu": 1, "nvidia.com/gpumem": 204800}}}]}})"),
  };
}

void PrintDecision(const PodRequest& request, const Decision& decision) {
  if (!decision.allocation) {
    std::cout << request.Key() << ": fits nowhere\n";
    for (const auto& [code, nodes] : decision.reason_counts) {
      std::cout << absl::StrFormat("  %s on %d nodes\n", code, nodes);
    }
    return;
  }
  std::cout << absl::StrFormat("%s -> %s (score %d)\n", request.Key(),
                               decision.allocation->node_name, decision.score);
  for (const auto& container : decision.allocation->containers) {
    for (const DeviceGrant& grant : container.devices) {
      std::cout << absl::StrFormat("  %s: %s %s %d MiB %d%%\n", container.name,
                                   grant.uuid, grant.mode.name(),
                                   grant.memory_mib, grant.cores);
    }
  }
}

absl::Status Run() {
  deviceshare::BackendRegistry registry;
  DS_RETURN_IF_ERROR(deviceshare::RegisterBuiltinBackends(registry));
  const Config config;  // the defaults; ParseConfigYaml reads a config file
  DS_ASSIGN_OR_RETURN(std::unique_ptr<Scheduler> scheduler,
                      Scheduler::Create(config, registry));
  DS_RETURN_IF_ERROR(AddNodes(*scheduler, config));

  std::vector<std::string> placed;
  for (const nlohmann::json& pod : Pods()) {
    DS_ASSIGN_OR_RETURN(PodRequest request,
                        deviceshare::ParsePodRequest(pod, config.device));
    DS_ASSIGN_OR_RETURN(Decision decision, scheduler->Schedule(request));
    PrintDecision(request, decision);
    if (decision.allocation) placed.push_back(request.uid);
  }
  // The pods are gone: their shares are free again.
  for (const std::string& uid : placed) scheduler->Release(uid);
  return absl::OkStatus();
}

}  // namespace

int main() {
  const absl::Status status = Run();
  if (!status.ok()) {
    std::cerr << "embedding: " << status << "\n";
    return 1;
  }
  return 0;
}
