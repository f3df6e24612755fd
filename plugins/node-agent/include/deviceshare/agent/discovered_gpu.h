// File: agent/discovered_gpu.h
//
// DiscoveredGpu: everything the node agent learns about one physical GPU,
// from NVML or from an inventory file -- more than the scheduler's Gpu
// (model/gpu.h) carries: PCI bus id, compute capability, the MIG profiles
// and legal placements NVML reports, the MIG instances that exist now, and
// why a GPU is unhealthy. Value types. ToPhysicalGpu() gives the model's
// view before the device config shapes it (config/device_registration.h);
// FromPhysicalGpu() goes the other way, for GPUs written as a Gpu (the
// short cluster form of an inventory file). The facts both types carry are
// copied in one place (discovered_gpu.cc), so a fact added to both is
// carried across by adding it there.
//
// Thread safety: value types and pure functions.
#ifndef DEVICESHARE_AGENT_DISCOVERED_GPU_H_
#define DEVICESHARE_AGENT_DISCOVERED_GPU_H_

#include <cstdint>
#include <string>
#include <vector>

#include "deviceshare/model/gpu.h"

namespace deviceshare::agent {

// One GPU-instance profile as NVML reports it (nvmlGpuInstanceProfileInfo).
struct MigProfileInfo {
  std::string name;         // canonical, without "MIG ": "1g.10gb"
  int32_t profile_id = -1;  // NVML profile id (info.id), not the index
  int32_t slice_count = 0;  // compute slices
  int32_t instance_count = 0;
  int32_t sm_count = 0;
  int64_t memory_mib = 0;
  std::vector<int32_t> starts;  // legal placement starts (memory slices)
  int32_t memory_slices = 0;    // placement size

  bool operator==(const MigProfileInfo& other) const = default;
};

// A MIG GPU instance (with its compute instance) that exists now.
struct MigInstanceInfo {
  MigSlot slot;  // profile, start, size
  int32_t gpu_instance_id = -1;
  int32_t compute_instance_id = -1;  // -1: GPU instance without a CI
  std::string mig_uuid;              // "MIG-..."; empty without a CI

  bool operator==(const MigInstanceInfo& other) const = default;
};

struct DiscoveredGpu {
  std::string uuid;
  int32_t index = 0;
  std::string model;       // NVML name, e.g. "NVIDIA H100 80GB HBM3"
  std::string pci_bus_id;  // "00000000:3B:00.0"; "" when unknown
  // The PCIe root complex above the GPU, as Kubernetes' standard DRA
  // attribute resource.kubernetes.io/pcieRoot writes it ("pci0000:00");
  // "" when unknown.
  std::string pcie_root;
  std::string driver_version;  // NVML's, e.g. "550.54.15"; "" when unknown
  uint32_t pci_device_id = 0;  // 16-bit device id, e.g. 0x2330
  int64_t memory_mib = 0;      // total, as NVML reports it
  int32_t cc_major = 0;        // compute capability; 0 = unknown
  int32_t cc_minor = 0;
  int32_t sm_count = 0;   // 0 = unknown
  int32_t numa_node = 0;  // sysfs numa_node; -1 there reads as 0
  std::vector<GpuLink> links;
  bool mig_capable = false;
  bool mig_enabled = false;  // current MIG mode
  std::vector<MigProfileInfo> mig_profiles;
  std::vector<MigInstanceInfo> mig_instances;
  bool healthy = true;
  std::string health_reason;  // why not healthy, e.g. "xid 79"

  bool operator==(const DiscoveredGpu& other) const = default;
};

// The model's physical Gpu: uuid, index, model, PCI id, memory, SMs, NUMA,
// links, MIG capability, health; mode mig when MIG is enabled (instances
// become Gpu::mig_instances), hami-core otherwise. Split count and core
// capacity keep their defaults until RegisteredGpu() applies the config.
Gpu ToPhysicalGpu(const DiscoveredGpu& gpu);

// The discovered view of a Gpu: the facts both carry; MIG capable and
// enabled when the mode is mig (without instances: a Gpu's MigSlots lack
// the NVML ids). No PCI bus id, compute capability, MIG profiles or health
// reason.
DiscoveredGpu FromPhysicalGpu(const Gpu& gpu);

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_DISCOVERED_GPU_H_
