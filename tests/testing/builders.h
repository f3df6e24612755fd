// File: testing/builders.h
//
// Small builders for the model types, so tests read as the situation they
// set up: MakeNode("n1", 4, 81920) is a node with four 80 GiB GPUs.
#ifndef DEVICESHARE_TESTS_TESTING_BUILDERS_H_
#define DEVICESHARE_TESTS_TESTING_BUILDERS_H_

#include <string>

#include "deviceshare/config/scheduler_config.h"
#include "deviceshare/model/gpu.h"
#include "deviceshare/model/node_inventory.h"
#include "deviceshare/model/pod_allocation.h"
#include "deviceshare/model/pod_request.h"

namespace deviceshare::testing {

// GPU `index` of node `node`: uuid "GPU-<node>-<index>", A100-80GB model.
Gpu MakeGpu(const std::string& node, int index, int64_t memory_mib = 81920,
            int split = 10, int numa = 0);

// A node with `gpus` identical GPUs; GPU i is on NUMA node i / (gpus/2)
// when `two_numa` is set, else NUMA 0.
NodeInventory MakeNode(const std::string& name, int gpus,
                       int64_t memory_mib = 81920, int split = 10,
                       bool two_numa = false);

ContainerRequest GpuContainer(const std::string& name, int gpus,
                              int64_t memory_mib, int cores = 0);

// A pod with one container "c" asking `percent` of one GPU: that percent
// of its cores and of `gpu_memory_mib` (MakeNode's GPUs by default).
PodRequest ShareOfOneGpu(const std::string& name, int percent,
                         int64_t gpu_memory_mib = 81920);

// A pod uid "uid-<name>" in namespace "default" with the given containers.
PodRequest MakePod(const std::string& name,
                   std::vector<ContainerRequest> containers);

// A hami-core grant of `memory_mib` and `cores` on GPU `uuid` (index -1:
// not resolved, as a decoded annotation gives it).
DeviceGrant Grant(std::string uuid, int64_t memory_mib, int32_t cores);

// Container `index` named "c<index>".
ContainerAllocation Container(int32_t index, bool is_init,
                              std::vector<DeviceGrant> devices);

// Defaults with hami-core enabled and the given policies.
Config MakeConfig(const std::string& node_policy = "binpack",
                  const std::string& gpu_policy = "binpack");

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_BUILDERS_H_
