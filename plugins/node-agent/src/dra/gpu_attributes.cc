// The attributes every device of a GPU carries: NVIDIA's DRA driver names
// (uuid, productName, architecture, cudaComputeCapability, driverVersion),
// Kubernetes' standard resource.kubernetes.io/pcieRoot, and ours (index,
// numa). Under HAMi's driver name also HAMi's: type "hami-gpu", minor and
// pcieBusID.
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "deviceshare/agent/resource_slices.h"

namespace deviceshare::agent {

std::string AsSemver(absl::string_view text) {
  std::vector<std::string> parts;
  for (absl::string_view part : absl::StrSplit(text, '.')) {
    if (parts.size() == 3) break;
    size_t digits = 0;
    while (digits < part.size() && absl::ascii_isdigit(part[digits])) ++digits;
    uint64_t value = 0;
    if (digits == 0 || digits > 18 ||
        !absl::SimpleAtoi(part.substr(0, digits), &value)) {
      break;
    }
    parts.push_back(absl::StrCat(value));
    if (digits != part.size()) break;  // "05-beta": keep 5, stop
  }
  if (parts.empty()) return "";
  while (parts.size() < 3) parts.push_back("0");
  return absl::StrJoin(parts, ".");
}

std::string ArchitectureOf(int32_t cc_major, int32_t cc_minor) {
  switch (cc_major) {
    case 6:
      return "Pascal";
    case 7:
      return cc_minor >= 5 ? "Turing" : "Volta";
    case 8:
      return cc_minor == 9 ? "Ada Lovelace" : "Ampere";
    case 9:
      return "Hopper";
    case 10:
    case 12:
      return "Blackwell";
    default:
      return "";
  }
}

std::map<std::string, dra::DeviceAttribute> GpuAttributes(
    const DiscoveredGpu& gpu, const std::string& driver) {
  using dra::DeviceAttribute;
  std::map<std::string, DeviceAttribute> attributes;
  attributes["uuid"] = DeviceAttribute::String(gpu.uuid);
  attributes["productName"] = DeviceAttribute::String(gpu.model.substr(0, 64));
  attributes["index"] = DeviceAttribute::Int(gpu.index);
  attributes["numa"] = DeviceAttribute::Int(gpu.numa_node);
  if (gpu.cc_major > 0) {
    attributes["cudaComputeCapability"] = DeviceAttribute::Version(
        AsSemver(absl::StrCat(gpu.cc_major, ".", gpu.cc_minor)));
    if (std::string arch = ArchitectureOf(gpu.cc_major, gpu.cc_minor);
        !arch.empty()) {
      attributes["architecture"] = DeviceAttribute::String(arch);
    }
  }
  if (std::string version = AsSemver(gpu.driver_version); !version.empty()) {
    attributes["driverVersion"] = DeviceAttribute::Version(version);
  }
  if (!gpu.pcie_root.empty()) {
    attributes["resource.kubernetes.io/pcieRoot"] =
        DeviceAttribute::String(gpu.pcie_root);
  }
  if (driver == kHamiDraDriver) {
    attributes["type"] = DeviceAttribute::String("hami-gpu");
    attributes["minor"] = DeviceAttribute::Int(gpu.index);
    if (!gpu.pci_bus_id.empty()) {
      attributes["pcieBusID"] = DeviceAttribute::String(gpu.pci_bus_id);
    }
  } else {
    attributes["type"] = DeviceAttribute::String("gpu");
  }
  return attributes;
}

}  // namespace deviceshare::agent
