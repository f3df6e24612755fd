// File: nvml/nvml_gpu_reader.h
//
// Reads one GPU's DiscoveredGpu through NVML, and the links between GPUs,
// with the rules agent/nvml_source.h documents.
//
// Thread safety: stateless; NVML is thread-safe.
#ifndef DEVICESHARE_AGENT_NVML_NVML_GPU_READER_H_
#define DEVICESHARE_AGENT_NVML_NVML_GPU_READER_H_

#include <string>
#include <vector>

#include "deviceshare/agent/discovered_gpu.h"
#include "nvml/nvml_library.h"

namespace deviceshare::agent {

struct NvmlGpu {
  nvmlDevice_t device = nullptr;  // null when even the handle failed
  DiscoveredGpu gpu;
  // Why the GPU did not answer; empty when it did. Health comes from this
  // and the XID rule (nvml/xid_health.h).
  std::string error;
};

// GPU `index`. Never fails as a whole: optional facts stay unknown, and a
// failed core read (handle, name, PCI info, memory, MIG instances) is
// recorded in `error`.
NvmlGpu ReadNvmlGpu(const NvmlLibrary& nvml, unsigned int index,
                    const std::string& sysfs_root);

// Sets `links` of every GPU: one GpuLink per other GPU, in index order.
void ReadNvmlLinks(const NvmlLibrary& nvml, std::vector<NvmlGpu>& gpus);

// <sysfs_root>/bus/pci/devices/<name>/numa_node; 0 when absent, negative
// (no NUMA) or unreadable.
int32_t ReadSysfsNuma(const std::string& sysfs_root,
                      const std::string& nvml_bus_id);

// The "pci<domain>:<bus>" root complex that <sysfs_root>/bus/pci/devices/
// <name> resolves under; "" when the link cannot be read.
std::string ReadSysfsPcieRoot(const std::string& sysfs_root,
                              const std::string& nvml_bus_id);

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_NVML_NVML_GPU_READER_H_
