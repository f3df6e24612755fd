#include "deviceshare/model/pcie_level.h"

#include <array>

namespace deviceshare {
namespace {

constexpr std::array<absl::string_view, 6> kNames = {
    "board", "switch", "switches", "hostbridge", "numa", "system"};

}  // namespace

absl::string_view PcieLevelName(PcieLevel level) {
  const auto at = static_cast<size_t>(level);
  return at < kNames.size() ? kNames[at] : "system";
}

std::optional<PcieLevel> ParsePcieLevel(absl::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<PcieLevel>(i);
  }
  return std::nullopt;
}

absl::string_view PcieLevelNames() {
  return "board, switch, switches, hostbridge, numa or system";
}

}  // namespace deviceshare
