#include "testing/builders.h"

#include "absl/strings/str_cat.h"

namespace deviceshare::testing {

Gpu MakeGpu(const std::string& node, int index, int64_t memory_mib, int split,
            int numa) {
  Gpu gpu;
  gpu.uuid = absl::StrCat("GPU-", node, "-", index);
  gpu.index = index;
  gpu.model = "NVIDIA-NVIDIA A100-SXM4-80GB";
  gpu.memory_mib = memory_mib;
  gpu.split_count = split;
  gpu.numa_node = numa;
  return gpu;
}

NodeInventory MakeNode(const std::string& name, int gpus, int64_t memory_mib,
                       int split, bool two_numa) {
  NodeInventory node;
  node.name = name;
  for (int i = 0; i < gpus; ++i) {
    int numa = two_numa && gpus > 1 ? i / (gpus / 2) : 0;
    node.gpus.push_back(MakeGpu(name, i, memory_mib, split, numa));
  }
  return node;
}

ContainerRequest GpuContainer(const std::string& name, int gpus,
                              int64_t memory_mib, int cores) {
  ContainerRequest c;
  c.name = name;
  c.gpu_count = gpus;
  c.memory_mib = memory_mib;
  c.cores = cores;
  return c;
}

PodRequest MakePod(const std::string& name,
                   std::vector<ContainerRequest> containers) {
  PodRequest pod;
  pod.uid = absl::StrCat("uid-", name);
  pod.name = name;
  pod.containers = std::move(containers);
  return pod;
}

DeviceGrant Grant(std::string uuid, int64_t memory_mib, int32_t cores) {
  DeviceGrant grant;
  grant.uuid = std::move(uuid);
  grant.memory_mib = memory_mib;
  grant.cores = cores;
  return grant;
}

ContainerAllocation Container(int32_t index, bool is_init,
                              std::vector<DeviceGrant> devices) {
  ContainerAllocation container;
  container.container_index = index;
  container.name = absl::StrCat("c", index);
  container.is_init = is_init;
  container.devices = std::move(devices);
  return container;
}

Config MakeConfig(const std::string& node_policy,
                  const std::string& gpu_policy) {
  Config config;
  config.scheduler.node_policy = node_policy;
  config.scheduler.gpu_policy = gpu_policy;
  return config;
}

PodRequest ShareOfOneGpu(const std::string& name, int percent,
                         int64_t gpu_memory_mib) {
  return MakePod(
      name, {GpuContainer("c", 1, gpu_memory_mib * percent / 100, percent)});
}

}  // namespace deviceshare::testing
