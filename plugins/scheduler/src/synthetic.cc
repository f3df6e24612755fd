#include "deviceshare/simulate/synthetic.h"

#include <random>

#include "absl/strings/str_format.h"
#include "deviceshare/config/device_registration.h"
#include "deviceshare/input/gpu_uuid.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::simulate {

using input::GeneratedGpuUuid;

namespace {

constexpr int64_t kGiB = 1024;

// Uniform in [0, n) up to a modulo bias below 2^-50 for the small n used
// here; the same on every platform.
int64_t Draw(std::mt19937_64& rng, int64_t n) {
  return static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
}

PodRequest WholeGpus(std::string name, int32_t gpus) {
  PodRequest pod;
  pod.name = std::move(name);
  pod.uid = pod.Key();
  ContainerRequest container;
  container.name = "main";
  container.gpu_count = gpus;
  container.cores = 100;
  container.memory_percent = 100;
  pod.containers.push_back(container);
  pod.cpu_milli = 8000 * int64_t{gpus};
  pod.memory_mib = 64 * kGiB * gpus;
  return pod;
}

}  // namespace

absl::StatusOr<std::vector<NodeInventory>> SyntheticNodes(
    int64_t nodes, int64_t gpus_per_node, const DeviceConfig& config) {
  std::vector<NodeInventory> result;
  result.reserve(static_cast<size_t>(nodes));
  for (int64_t n = 0; n < nodes; ++n) {
    NodeInventory node;
    node.name = absl::StrFormat("node-%05d", n);
    node.cpu_milli = 128000;
    node.memory_mib = 1024 * kGiB;
    for (int64_t g = 0; g < gpus_per_node; ++g) {
      Gpu physical;
      physical.index = static_cast<int32_t>(g);
      physical.uuid = GeneratedGpuUuid(node.name, physical.index);
      physical.model = kSyntheticGpuModel;
      physical.memory_mib = kSyntheticGpuMemoryMib;
      physical.sm_count = 108;
      physical.numa_node = g < (gpus_per_node + 1) / 2 ? 0 : 1;
      DS_ASSIGN_OR_RETURN(Gpu gpu, RegisteredGpu(std::move(physical), config));
      node.gpus.push_back(std::move(gpu));
    }
    result.push_back(std::move(node));
  }
  return result;
}

std::vector<PodRequest> SyntheticPods(int64_t pods, int64_t gpus_per_node,
                                      uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<PodRequest> result;
  result.reserve(static_cast<size_t>(pods));
  for (int64_t p = 0; p < pods; ++p) {
    std::string name = absl::StrFormat("pod-%06d", p);
    const int64_t kind = Draw(rng, 100);
    if (kind < 70) {
      PodRequest pod;
      pod.name = std::move(name);
      pod.uid = pod.Key();
      ContainerRequest container;
      container.name = "main";
      container.gpu_count = 1;
      container.memory_mib = 2 * kGiB * (1 + Draw(rng, 20));
      container.cores = static_cast<int32_t>(10 * Draw(rng, 7));
      pod.containers.push_back(container);
      pod.cpu_milli = 1000 * (1 + Draw(rng, 8));
      pod.memory_mib = 4 * kGiB * (1 + Draw(rng, 8));
      result.push_back(std::move(pod));
    } else if (kind < 90 || gpus_per_node < 2) {
      result.push_back(WholeGpus(std::move(name), 1));
    } else {
      const int32_t choices[] = {2, 4, 8};
      int allowed = 0;
      for (int32_t c : choices) allowed += c <= gpus_per_node ? 1 : 0;
      result.push_back(WholeGpus(std::move(name), choices[Draw(rng, allowed)]));
    }
  }
  return result;
}

std::string SyntheticMixDescription() {
  return "synthetic pods: 70% a share of one GPU (memory 2..40 GiB in 2 GiB "
         "steps, cores 0..60% in steps of 10, 1..8 CPUs, 4..32 GiB), 20% one "
         "whole GPU (8 CPUs, 64 GiB), 10% 2/4/8 whole GPUs (at most "
         "--gpus-per-node; 8 CPUs and 64 GiB per GPU); nodes: A100-SXM4-80GB "
         "GPUs in two NUMA halves, 128 CPUs, 1 TiB";
}

}  // namespace deviceshare::simulate
