#include "nvml/nvml_gpu_reader.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nvml/nvml_mig_reader.h"

namespace deviceshare::agent {
namespace {

constexpr unsigned long long kMiB = 1024ull * 1024ull;

// Remembers the first failure only: it is the one that explains the rest.
void Fail(NvmlGpu& gpu, const NvmlLibrary& nvml, nvmlReturn_t result,
          absl::string_view call) {
  if (gpu.error.empty()) {
    gpu.error = absl::StrCat(call, ": ", nvml.ErrorText(result));
  }
}

void ReadMig(const NvmlLibrary& nvml, NvmlGpu& out) {
  const NvmlFunctions& fn = nvml.fn();
  DiscoveredGpu& gpu = out.gpu;
  if (fn.DeviceGetMigMode == nullptr) return;
  unsigned int current = 0;
  unsigned int pending = 0;
  if (fn.DeviceGetMigMode(out.device, &current, &pending) != NVML_SUCCESS) {
    return;  // NOT_SUPPORTED: not a MIG part
  }
  gpu.mig_capable = true;
  gpu.mig_enabled = current == NVML_DEVICE_MIG_ENABLE;
  gpu.mig_profiles = ReadMigProfiles(nvml, out.device);
  if (gpu.sm_count == 0) {
    // NVML gives multiprocessorCount for MIG devices only (seen on an H100
    // with driver 580); the largest profile spans the whole GPU's SMs.
    for (const MigProfileInfo& profile : gpu.mig_profiles) {
      gpu.sm_count = std::max(gpu.sm_count, profile.sm_count);
    }
  }
  if (!gpu.mig_enabled) return;
  auto instances = ReadMigInstances(nvml, out.device, gpu.mig_profiles);
  if (!instances.ok()) {
    if (out.error.empty())
      out.error = std::string(instances.status().message());
    return;
  }
  gpu.mig_instances = *std::move(instances);
}

bool SameBusId(absl::string_view a, absl::string_view b) {
  return SysfsPciName(a) == SysfsPciName(b);
}

}  // namespace

int32_t ReadSysfsNuma(const std::string& sysfs_root,
                      const std::string& nvml_bus_id) {
  if (nvml_bus_id.empty()) return 0;
  std::ifstream file(absl::StrCat(sysfs_root, "/bus/pci/devices/",
                                  SysfsPciName(nvml_bus_id), "/numa_node"));
  std::string text;
  if (!file || !std::getline(file, text)) return 0;
  int32_t node = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &node) || node < 0) {
    return 0;
  }
  return node;
}

std::string ReadSysfsPcieRoot(const std::string& sysfs_root,
                              const std::string& nvml_bus_id) {
  if (nvml_bus_id.empty()) return "";
  std::error_code error;
  const std::filesystem::path device = std::filesystem::canonical(
      absl::StrCat(sysfs_root, "/bus/pci/devices/", SysfsPciName(nvml_bus_id)),
      error);
  if (error) return "";
  // /sys/devices/pci0000:00/0000:00:01.0/.../0000:3b:00.0: the first
  // component below devices/ that names a root complex.
  for (const std::filesystem::path& part : device) {
    const std::string name = part.string();
    if (absl::StartsWith(name, "pci") && name.find(':') != std::string::npos) {
      return name;
    }
  }
  return "";
}

NvmlGpu ReadNvmlGpu(const NvmlLibrary& nvml, unsigned int index,
                    const std::string& sysfs_root) {
  const NvmlFunctions& fn = nvml.fn();
  NvmlGpu out;
  DiscoveredGpu& gpu = out.gpu;
  gpu.index = static_cast<int32_t>(index);
  gpu.driver_version = nvml.driver_version();
  nvmlReturn_t result = fn.DeviceGetHandleByIndex(index, &out.device);
  if (result != NVML_SUCCESS) {
    out.device = nullptr;
    Fail(out, nvml, result, "nvmlDeviceGetHandleByIndex_v2");
    return out;
  }
  char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
  result = fn.DeviceGetUUID(out.device, uuid, sizeof(uuid));
  if (result == NVML_SUCCESS) {
    gpu.uuid = FromNvmlChars(uuid, sizeof(uuid));
  } else {
    Fail(out, nvml, result, "nvmlDeviceGetUUID");
  }
  char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
  result = fn.DeviceGetName(out.device, name, sizeof(name));
  if (result == NVML_SUCCESS) {
    gpu.model = FromNvmlChars(name, sizeof(name));
  } else {
    Fail(out, nvml, result, "nvmlDeviceGetName");
  }
  nvmlPciInfo_t pci{};
  result = fn.DeviceGetPciInfo(out.device, &pci);
  if (result == NVML_SUCCESS) {
    gpu.pci_bus_id = FromNvmlChars(pci.busId, sizeof(pci.busId));
    gpu.pci_device_id = pci.pciDeviceId >> 16;
    gpu.numa_node = ReadSysfsNuma(sysfs_root, gpu.pci_bus_id);
    gpu.pcie_root = ReadSysfsPcieRoot(sysfs_root, gpu.pci_bus_id);
  } else {
    Fail(out, nvml, result, "nvmlDeviceGetPciInfo_v3");
  }
  nvmlMemory_t memory{};
  result = fn.DeviceGetMemoryInfo(out.device, &memory);
  if (result == NVML_SUCCESS) {
    gpu.memory_mib = static_cast<int64_t>(memory.total / kMiB);
  } else {
    Fail(out, nvml, result, "nvmlDeviceGetMemoryInfo");
  }
  if (fn.DeviceGetCudaComputeCapability != nullptr) {
    int major = 0;
    int minor = 0;
    if (fn.DeviceGetCudaComputeCapability(out.device, &major, &minor) ==
        NVML_SUCCESS) {
      gpu.cc_major = major;
      gpu.cc_minor = minor;
    }
  }
  if (fn.DeviceGetAttributes != nullptr) {
    // Many drivers answer this for MIG devices only; 0 stays "unknown".
    nvmlDeviceAttributes_t attributes{};
    if (fn.DeviceGetAttributes(out.device, &attributes) == NVML_SUCCESS) {
      gpu.sm_count = static_cast<int32_t>(attributes.multiprocessorCount);
    }
  }
  ReadMig(nvml, out);
  return out;
}

namespace {

// NVML's common-ancestor level as a PcieLevel (the same six steps).
PcieLevel PcieLevelOf(nvmlGpuTopologyLevel_t level) {
  if (level <= NVML_TOPOLOGY_INTERNAL) return PcieLevel::kBoard;
  if (level <= NVML_TOPOLOGY_SINGLE) return PcieLevel::kSwitch;
  if (level <= NVML_TOPOLOGY_MULTIPLE) return PcieLevel::kSwitches;
  if (level <= NVML_TOPOLOGY_HOSTBRIDGE) return PcieLevel::kHostBridge;
  if (level <= NVML_TOPOLOGY_NODE) return PcieLevel::kNuma;
  return PcieLevel::kSystem;
}

}  // namespace

void ReadNvmlLinks(const NvmlLibrary& nvml, std::vector<NvmlGpu>& gpus) {
  const NvmlFunctions& fn = nvml.fn();
  // lanes[i][j]: active NVLinks from GPU i whose far end is GPU j.
  std::vector<std::map<size_t, int32_t>> lanes(gpus.size());
  if (fn.DeviceGetNvLinkState != nullptr &&
      fn.DeviceGetNvLinkRemotePciInfo != nullptr) {
    for (size_t i = 0; i < gpus.size(); ++i) {
      if (gpus[i].device == nullptr) continue;
      for (unsigned int link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
        nvmlEnableState_t active = NVML_FEATURE_DISABLED;
        const nvmlReturn_t state =
            fn.DeviceGetNvLinkState(gpus[i].device, link, &active);
        // NOT_SUPPORTED (no NVLink, or a PCIe pass-through VM) or
        // INVALID_ARGUMENT (past the last link) ends the walk.
        if (state == NVML_ERROR_NOT_SUPPORTED ||
            state == NVML_ERROR_INVALID_ARGUMENT) {
          break;
        }
        if (state != NVML_SUCCESS || active != NVML_FEATURE_ENABLED) continue;
        nvmlPciInfo_t remote{};
        if (fn.DeviceGetNvLinkRemotePciInfo(gpus[i].device, link, &remote) !=
            NVML_SUCCESS) {
          continue;
        }
        const std::string remote_bus =
            FromNvmlChars(remote.busId, sizeof(remote.busId));
        for (size_t j = 0; j < gpus.size(); ++j) {
          if (j != i && !gpus[j].gpu.pci_bus_id.empty() &&
              SameBusId(remote_bus, gpus[j].gpu.pci_bus_id)) {
            ++lanes[i][j];
          }
        }
      }
    }
  }
  for (size_t i = 0; i < gpus.size(); ++i) {
    gpus[i].gpu.links.clear();
    for (size_t j = 0; j < gpus.size(); ++j) {
      if (j == i) continue;
      GpuLink link;
      link.peer_index = gpus[j].gpu.index;
      auto it = lanes[i].find(j);
      link.nvlinks = it == lanes[i].end() ? 0 : it->second;
      link.same_numa = gpus[i].gpu.numa_node == gpus[j].gpu.numa_node;
      nvmlGpuTopologyLevel_t level = NVML_TOPOLOGY_SYSTEM;
      if (fn.DeviceGetTopologyCommonAncestor != nullptr &&
          gpus[i].device != nullptr && gpus[j].device != nullptr &&
          fn.DeviceGetTopologyCommonAncestor(gpus[i].device, gpus[j].device,
                                             &level) == NVML_SUCCESS) {
        link.same_numa = level <= NVML_TOPOLOGY_NODE;
        link.pcie = PcieLevelOf(level);
      } else if (link.same_numa) {
        link.pcie = PcieLevel::kNuma;
      }
      gpus[i].gpu.links.push_back(link);
    }
  }
}

}  // namespace deviceshare::agent
