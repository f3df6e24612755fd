#include "deviceshare/agent/inventory_source.h"

#include <stdlib.h>

#include <filesystem>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/fake_nvml_env.h"
#include "testing/status_matchers.h"

namespace deviceshare::agent {
namespace {

using ::deviceshare::testing::StatusIs;
using ::deviceshare::testing::WriteFileAtomically;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class InventorySourceTest : public ::testing::Test {
 protected:
  InventorySourceTest() {
    std::string pattern = ::testing::TempDir() + "inventory-XXXXXX";
    EXPECT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  ~InventorySourceTest() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    WriteFileAtomically(path, text);
    return path;
  }
  std::string dir_;
};

constexpr char kTwoGpus[] = R"(gpus:
- uuid: GPU-0
  index: 0
  model: NVIDIA H100 80GB HBM3
  memory_mib: 81559
  sm_count: 132
  numa: 0
  pci_device_id: "0x2330"
  mig_capable: true
  health: healthy
- uuid: GPU-1
  index: 1
  model: NVIDIA H100 80GB HBM3
  memory_mib: 81559
  numa: 1
  pci_device_id: 8960
  health: true
)";

TEST_F(InventorySourceTest, ReadsTheGpusForm) {
  const std::string path = Write("gpus.yaml", kTwoGpus);
  auto source = OpenInventorySource(path);
  ASSERT_OK(source);
  EXPECT_EQ((*source)->Describe(), "inventory " + path);
  auto gpus = (*source)->Discover();
  ASSERT_OK(gpus);
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[0].uuid, "GPU-0");
  EXPECT_EQ((*gpus)[0].model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ((*gpus)[0].memory_mib, 81559);
  EXPECT_EQ((*gpus)[0].sm_count, 132);
  EXPECT_EQ((*gpus)[0].pci_device_id, 0x2330u);
  EXPECT_TRUE((*gpus)[0].mig_capable);
  EXPECT_FALSE((*gpus)[0].mig_enabled);
  EXPECT_TRUE((*gpus)[0].healthy);
  EXPECT_EQ((*gpus)[1].numa_node, 1);
  EXPECT_EQ((*gpus)[1].pci_device_id, 0x2300u);
}

TEST_F(InventorySourceTest, ReadsJsonToo) {
  const std::string path = Write(
      "gpus.json",
      R"({"gpus": [{"uuid": "GPU-j", "model": "L4", "memory_mib": 23034}]})");
  auto source = OpenInventorySource(path);
  ASSERT_OK(source);
  auto gpus = (*source)->Discover();
  ASSERT_OK(gpus);
  ASSERT_EQ(gpus->size(), 1u);
  EXPECT_EQ((*gpus)[0].uuid, "GPU-j");
}

constexpr char kCluster[] = R"(nodes:
- name: gpu-a
  gpus:
  - {model: NVIDIA A100-SXM4-80GB, memory_mib: 81920, count: 2, numa: 1}
- name: gpu-b
  gpus:
  - {model: NVIDIA H100 80GB HBM3, memory_mib: 81559, uuid: GPU-hb,
     mode: mig, healthy: false}
  - {model: NVIDIA L4, memory_mib: 23034}
)";

TEST_F(InventorySourceTest, ReadsTheShortClusterForm) {
  const std::string path = Write("cluster.yaml", kCluster);
  auto first = OpenInventorySource(path);
  ASSERT_OK(first);
  auto gpus = (*first)->Discover();
  ASSERT_OK(gpus);
  ASSERT_EQ(gpus->size(), 2u);  // gpu-a, the first node
  EXPECT_EQ((*gpus)[1].index, 1);
  EXPECT_EQ((*gpus)[1].numa_node, 1);
  EXPECT_EQ((*gpus)[1].memory_mib, 81920);
  EXPECT_THAT((*gpus)[0].uuid, ::testing::StartsWith("GPU-"));

  auto named = OpenInventorySource(path, {.node_name = "gpu-b"});
  ASSERT_OK(named);
  gpus = (*named)->Discover();
  ASSERT_OK(gpus);
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[0].uuid, "GPU-hb");
  EXPECT_TRUE((*gpus)[0].mig_capable);
  EXPECT_TRUE((*gpus)[0].mig_enabled);
  EXPECT_FALSE((*gpus)[0].healthy);
  EXPECT_EQ((*gpus)[1].model, "NVIDIA L4");
  EXPECT_FALSE((*gpus)[1].mig_capable);

  EXPECT_THAT(OpenInventorySource(path, {.node_name = "gpu-z"}),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr(path), HasSubstr("\"gpu-z\""),
                             HasSubstr("gpu-a, gpu-b"))));
}

TEST_F(InventorySourceTest, BadFilesFailAtOpenNamingThePath) {
  EXPECT_THAT(OpenInventorySource(dir_ + "/missing.yaml"),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("cannot read inventory file")));
  const std::string bad_value = Write("bad.yaml", R"(gpus:
- {uuid: GPU-0, model: m, memory_mib: 1}
- {uuid: GPU-1, model: m, memory_mib: x}
)");
  EXPECT_THAT(OpenInventorySource(bad_value),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(bad_value + ": gpus[1].memory_mib: \"x\" is "
                                             "a string, want an integer")));
  const std::string unknown = Write("unknown.yaml", R"(gpus:
- {uuid: GPU-0, model: m, memory_mib: 1, cores: 3}
)");
  EXPECT_THAT(OpenInventorySource(unknown),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("gpus[0].cores: unknown key")));
  const std::string short_bad = Write("short.yaml", R"(nodes:
- name: n
  gpus: [{model: m, memory_mib: 1, splt: 3}]
)");
  EXPECT_THAT(OpenInventorySource(short_bad),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("nodes[0].gpus[0].splt: unknown key")));
  const std::string broken = Write("broken.yaml", "gpus: [\n");
  EXPECT_THAT(OpenInventorySource(broken),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(broken)));
}

TEST_F(InventorySourceTest, CheckHealthRereadsTheFile) {
  const std::string path = Write("gpus.yaml", kTwoGpus);
  auto source = OpenInventorySource(path);
  ASSERT_OK(source);
  ASSERT_OK((*source)->Discover());
  auto health = (*source)->CheckHealth();
  ASSERT_OK(health);
  EXPECT_THAT(*health, ElementsAre(GpuHealth{"GPU-0", true, ""},
                                   GpuHealth{"GPU-1", true, ""}));

  std::string edited = kTwoGpus;
  edited.replace(edited.find("health: true"), 12,
                 "health: unhealthy\n  health_reason: fell off the bus");
  Write("gpus.yaml", edited);
  health = (*source)->CheckHealth();
  ASSERT_OK(health);
  EXPECT_THAT(*health,
              ElementsAre(GpuHealth{"GPU-0", true, ""},
                          GpuHealth{"GPU-1", false, "fell off the bus"}));

  // A GPU that leaves the file is unhealthy, not forgotten.
  Write("gpus.yaml", R"(gpus:
- {uuid: GPU-0, model: m, memory_mib: 1, health: unhealthy}
)");
  health = (*source)->CheckHealth();
  ASSERT_OK(health);
  EXPECT_THAT(
      *health,
      ElementsAre(GpuHealth{"GPU-0", false, "unhealthy in " + path},
                  GpuHealth{"GPU-1", false, "no longer listed in " + path}));

  // Back to healthy.
  Write("gpus.yaml", kTwoGpus);
  health = (*source)->CheckHealth();
  ASSERT_OK(health);
  EXPECT_TRUE((*health)[1].healthy);

  // A file broken later is an error, not a silent "all healthy".
  Write("gpus.yaml", "gpus: [{uuid: 1}]\n");
  EXPECT_THAT((*source)->CheckHealth(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace deviceshare::agent
