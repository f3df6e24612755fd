// File: model/pcie_level.h
//
// PcieLevel: the closest PCIe element two GPUs of one node share, NVML's
// topology common-ancestor levels (nvmlGpuTopologyLevel_t, the rows of
// `nvidia-smi topo -m`), closest first. Named on the wire and in the short
// form as board, switch, switches, hostbridge, numa, system.
#ifndef DEVICESHARE_MODEL_PCIE_LEVEL_H_
#define DEVICESHARE_MODEL_PCIE_LEVEL_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

namespace deviceshare {

enum class PcieLevel : int8_t {
  kBoard = 0,       // NVML_TOPOLOGY_INTERNAL: one board (a dual-GPU card)
  kSwitch = 1,      // NVML_TOPOLOGY_SINGLE (PIX): one PCIe switch
  kSwitches = 2,    // NVML_TOPOLOGY_MULTIPLE (PXB): switches, no host bridge
  kHostBridge = 3,  // NVML_TOPOLOGY_HOSTBRIDGE (PHB): one host bridge
  kNuma = 4,        // NVML_TOPOLOGY_NODE (NODE): one NUMA node
  kSystem = 5,      // NVML_TOPOLOGY_SYSTEM (SYS): across sockets, or unknown
};

// "board", "switch", "switches", "hostbridge", "numa", "system".
absl::string_view PcieLevelName(PcieLevel level);
// The level of a name PcieLevelName gives; nullopt for any other.
std::optional<PcieLevel> ParsePcieLevel(absl::string_view name);
// "board, switch, switches, hostbridge, numa or system", for errors.
absl::string_view PcieLevelNames();

}  // namespace deviceshare

#endif  // DEVICESHARE_MODEL_PCIE_LEVEL_H_
