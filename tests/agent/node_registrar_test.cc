// NodeRegistrar: what the agent writes, the scheduler library reads back
// to the same inventory, in both dialects; an unchanged registration is
// not patched again; health travels.
#include "deviceshare/agent/node_registrar.h"

#include "deviceshare/hamicore/hamicore_backend.h"
#include "deviceshare/k8s/node_parser.h"
#include "deviceshare/mig/mig_backend.h"
#include "deviceshare/mps/mps_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/fake_api_server.h"

namespace deviceshare::agent {
namespace {

using ::deviceshare::testing::FakeApiServer;

std::vector<DiscoveredGpu> TwoGpus() {
  std::vector<DiscoveredGpu> gpus(2);
  gpus[0].uuid = "GPU-11111111-2222-3333-4444-555555555555";
  gpus[0].model = "NVIDIA H100 80GB HBM3";
  gpus[0].memory_mib = 81559;
  gpus[0].numa_node = 0;
  gpus[1] = gpus[0];
  gpus[1].uuid = "GPU-11111111-2222-3333-4444-666666666666";
  gpus[1].index = 1;
  gpus[1].numa_node = 1;
  return gpus;
}

class RegistrarTest : public ::testing::TestWithParam<Dialect> {
 protected:
  void SetUp() override {
    server_.UpsertNode({{"apiVersion", "v1"},
                        {"kind", "Node"},
                        {"metadata", {{"name", "gpu-node"}}}});
    auto client = kube::ApiClient::Create(server_.kube_config());
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }

  // The GPUs as the scheduler reads them off the node.
  std::vector<Gpu> ReadBack(int32_t volcano_memory_factor = 1) {
    absl::StatusOr<NodeInventory> inventory =
        ParseNodeInventory(*server_.GetNode("gpu-node"), volcano_memory_factor);
    EXPECT_TRUE(inventory.ok()) << inventory.status();
    return inventory.ok() ? inventory->gpus : std::vector<Gpu>();
  }

  FakeApiServer server_;
  std::unique_ptr<kube::ApiClient> client_;
};

TEST_P(RegistrarTest, SchedulerReadsBackWhatTheAgentWrote) {
  DeviceConfig config;
  config.device_split_count = 7;
  config.device_memory_scaling_milli = 1500;
  absl::StatusOr<std::vector<Gpu>> gpus =
      RegisteredGpus(TwoGpus(), config, hamicore::kMode);
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  EXPECT_EQ((*gpus)[0].memory_mib, 81559 * 3 / 2);
  EXPECT_EQ((*gpus)[0].split_count, 7);

  NodeRegistrar registrar(client_.get(), "gpu-node", GetParam(), 1);
  absl::StatusOr<bool> patched = registrar.Register(*gpus);
  ASSERT_TRUE(patched.ok()) << patched.status();
  EXPECT_TRUE(*patched);
  std::vector<Gpu> read = ReadBack();
  ASSERT_EQ(read.size(), 2u);
  for (size_t i = 0; i < read.size(); ++i) {
    EXPECT_EQ(read[i].uuid, (*gpus)[i].uuid);
    EXPECT_EQ(read[i].index, (*gpus)[i].index);
    EXPECT_EQ(read[i].memory_mib, (*gpus)[i].memory_mib);
    EXPECT_EQ(read[i].split_count, (*gpus)[i].split_count);
    EXPECT_EQ(read[i].healthy, (*gpus)[i].healthy);
    EXPECT_EQ(read[i].mode, (*gpus)[i].mode);
    EXPECT_EQ(read[i].model, GetParam() == Dialect::kVolcano
                                 ? "NVIDIA-NVIDIA H100 80GB HBM3"
                                 : "NVIDIA H100 80GB HBM3");
    if (GetParam() == Dialect::kHami) {
      // Only HAMi's format carries these.
      EXPECT_EQ(read[i], (*gpus)[i]) << i;
    }
  }

  // A heartbeat with nothing new writes nothing.
  const size_t patches = server_.Patches().size();
  patched = registrar.Register(*gpus);
  ASSERT_TRUE(patched.ok());
  EXPECT_FALSE(*patched);
  EXPECT_EQ(server_.Patches().size(), patches);

  // An unhealthy GPU is registered so, and comes back.
  std::vector<Gpu> sick = *gpus;
  sick[1].healthy = false;
  ASSERT_TRUE(registrar.Register(sick).ok());
  EXPECT_FALSE(ReadBack()[1].healthy);
  ASSERT_TRUE(registrar.Register(*gpus).ok());
  EXPECT_TRUE(ReadBack()[1].healthy);
}

// HAMi's device plugin writes hami.io/node-nvidia-score beside its
// registration (calculate_score.go): the agent rates each discovered link,
// and the scheduler reads the same scores back for topology-aware pods.
TEST(RegistrarPairScoreTest, HamiRegistersPairScoresFromLinks) {
  FakeApiServer server;
  server.UpsertNode({{"apiVersion", "v1"},
                     {"kind", "Node"},
                     {"metadata", {{"name", "gpu-node"}}}});
  auto client = kube::ApiClient::Create(server.kube_config());
  ASSERT_TRUE(client.ok()) << client.status();
  std::vector<DiscoveredGpu> discovered = TwoGpus();
  discovered.push_back(discovered[1]);
  discovered[2].uuid = "GPU-11111111-2222-3333-4444-777777777777";
  discovered[2].index = 2;
  discovered[0].links = {GpuLink{1, 18, false}, GpuLink{2, 0, true}};
  discovered[1].links = {GpuLink{0, 18, false}, GpuLink{2, 0, false}};
  discovered[2].links = {GpuLink{0, 0, true}, GpuLink{1, 0, false}};
  absl::StatusOr<std::vector<Gpu>> gpus =
      RegisteredGpus(discovered, DeviceConfig{}, hamicore::kMode);
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  EXPECT_EQ((*gpus)[0].pair_scores,
            (std::vector<GpuPairScore>{{discovered[1].uuid, 1800},
                                       {discovered[2].uuid, 20}}));
  EXPECT_EQ((*gpus)[1].pair_scores[1], (GpuPairScore{discovered[2].uuid, 10}));

  NodeRegistrar registrar(client->get(), "gpu-node", Dialect::kHami, 1);
  ASSERT_TRUE(registrar.Register(*gpus).ok());
  absl::StatusOr<NodeInventory> inventory =
      ParseNodeInventory(*server.GetNode("gpu-node"), 1);
  ASSERT_TRUE(inventory.ok()) << inventory.status();
  for (size_t i = 0; i < gpus->size(); ++i) {
    EXPECT_EQ(inventory->gpus[i].pair_scores, (*gpus)[i].pair_scores) << i;
    // The links travel in the registration's `links` member.
    EXPECT_EQ(inventory->gpus[i].links, (*gpus)[i].links) << i;
    EXPECT_FALSE(inventory->gpus[i].links.empty()) << i;
  }
  // Nothing new: no patch.
  const size_t patches = server.Patches().size();
  absl::StatusOr<bool> again = registrar.Register(*gpus);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  EXPECT_EQ(server.Patches().size(), patches);
}

// Volcano's plugin registers MiB / gpuMemoryFactor (upstream-volcano.md
// §9); the scheduler reads it back in MiB. HAMi's registration is in MiB.
TEST_P(RegistrarTest, VolcanoRegistersMemoryInFactorUnits) {
  DeviceConfig config;
  absl::StatusOr<std::vector<Gpu>> gpus =
      RegisteredGpus(TwoGpus(), config, hamicore::kMode);
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  NodeRegistrar registrar(client_.get(), "gpu-node", GetParam(), 2);
  ASSERT_TRUE(registrar.Register(*gpus).ok());
  const std::string value = (*server_.GetNode(
      "gpu-node"))["metadata"]["annotations"][RegistrationKey(GetParam())]
                                .get<std::string>();
  if (GetParam() == Dialect::kVolcano) {
    EXPECT_THAT(value, ::testing::HasSubstr(",40779,"));  // 81559 / 2
    EXPECT_EQ(ReadBack(2)[0].memory_mib, 81558);
  } else {
    EXPECT_EQ(ReadBack(2)[0].memory_mib, 81559);
  }
}

TEST_P(RegistrarTest, MissingNodeIsNotFound) {
  NodeRegistrar registrar(client_.get(), "no-such-node", GetParam(), 1);
  absl::StatusOr<bool> patched = registrar.Register({});
  EXPECT_EQ(patched.status().code(), absl::StatusCode::kNotFound);
}

INSTANTIATE_TEST_SUITE_P(BothDialects, RegistrarTest,
                         ::testing::Values(Dialect::kHami, Dialect::kVolcano),
                         [](const auto& info) {
                           return std::string(DialectName(info.param));
                         });

TEST(RegisteredTypeTest, FollowsEachDialectsNodePlugin) {
  EXPECT_EQ(RegisteredType("NVIDIA A30", Dialect::kHami), "NVIDIA A30");
  EXPECT_EQ(RegisteredType("Tesla T4", Dialect::kHami), "NVIDIA-Tesla T4");
  EXPECT_EQ(RegisteredType("NVIDIA A30", Dialect::kVolcano),
            "NVIDIA-NVIDIA A30");
}

TEST(RegisteredGpusTest, MigGpusAreMigAndMpsGpusMpsCapable) {
  std::vector<DiscoveredGpu> gpus = TwoGpus();
  gpus[0].mig_capable = true;
  gpus[0].mig_enabled = true;
  absl::StatusOr<std::vector<Gpu>> registered =
      RegisteredGpus(gpus, DeviceConfig{}, mps::kMode);
  ASSERT_TRUE(registered.ok()) << registered.status();
  EXPECT_EQ((*registered)[0].mode, mig::kMode);
  EXPECT_EQ((*registered)[1].mode, mps::kMode);
  EXPECT_TRUE((*registered)[1].mps_capable);
}

}  // namespace
}  // namespace deviceshare::agent
