// Discovery against the machine's real NVIDIA driver, checked against
// nvidia-smi. Skipped where there is no driver or no nvidia-smi.
#include <stdio.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "deviceshare/agent/nvml_source.h"
#include "gtest/gtest.h"

namespace deviceshare::agent {
namespace {

struct SmiGpu {
  std::string name;
  int64_t memory_mib = 0;
  std::string mig_mode;  // "Enabled", "Disabled" or "[N/A]"
};

// uuid -> what nvidia-smi says; nullopt when nvidia-smi cannot run.
std::optional<std::map<std::string, SmiGpu>> QueryNvidiaSmi() {
  FILE* pipe = popen(
      "nvidia-smi --query-gpu=name,memory.total,uuid,mig.mode.current "
      "--format=csv,noheader,nounits 2>/dev/null",
      "r");
  if (pipe == nullptr) return std::nullopt;
  std::string output;
  char buffer[512];
  while (fgets(buffer, sizeof(buffer), pipe) != nullptr) output += buffer;
  if (pclose(pipe) != 0) return std::nullopt;
  std::map<std::string, SmiGpu> gpus;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (line.empty()) continue;
    std::vector<std::string> fields = absl::StrSplit(line, ", ");
    if (fields.size() != 4) continue;
    SmiGpu gpu;
    gpu.name = fields[0];
    if (!absl::SimpleAtoi(fields[1], &gpu.memory_mib)) continue;
    gpu.mig_mode = fields[3];
    gpus[fields[2]] = gpu;
  }
  return gpus;
}

TEST(GpuDiscoveryTest, MatchesNvidiaSmi) {
  auto source = OpenNvmlSource(NvmlSourceOptions{});
  if (!source.ok()) {
    GTEST_SKIP() << "no NVIDIA driver here: " << source.status();
  }
  auto smi = QueryNvidiaSmi();
  if (!smi) GTEST_SKIP() << "nvidia-smi is not available";
  auto gpus = (*source)->Discover();
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), smi->size());
  for (const DiscoveredGpu& gpu : *gpus) {
    SCOPED_TRACE(gpu.uuid);
    auto it = smi->find(gpu.uuid);
    ASSERT_NE(it, smi->end()) << "nvidia-smi does not list " << gpu.uuid;
    EXPECT_EQ(gpu.model, it->second.name);
    EXPECT_EQ(gpu.memory_mib, it->second.memory_mib);
    EXPECT_EQ(gpu.mig_capable, it->second.mig_mode != "[N/A]");
    EXPECT_EQ(gpu.mig_enabled, it->second.mig_mode == "Enabled");
    if (gpu.mig_capable) {
      EXPECT_FALSE(gpu.mig_profiles.empty());
    }
    EXPECT_TRUE(gpu.healthy) << gpu.health_reason;
    EXPECT_GT(gpu.cc_major, 0);
    EXPECT_FALSE(gpu.pci_bus_id.empty());
    EXPECT_NE(gpu.pci_device_id, 0u);
  }
  auto health = (*source)->CheckHealth();
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(health->size(), gpus->size());
}

}  // namespace
}  // namespace deviceshare::agent
