// The DRA prepare path end to end in one process: the published slices,
// claims in the in-memory API server, the real plugin server on unix
// sockets, the preparer writing CDI specs and its journal, and the test
// kubelet calling NodePrepareResources / NodeUnprepareResources.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/agent/dra_claim_preparer.h"
#include "deviceshare/agent/dra_plugin_server.h"
#include "deviceshare/agent/node_registrar.h"
#include "deviceshare/agent/resource_slices.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/config/config_parser.h"
#include "deviceshare/hamicore/hamicore_backend.h"
#include "deviceshare/kube/api_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/fake_api_server.h"
#include "testing/status_matchers.h"
#include "testing/temp_folder.h"
#include "testing/test_dra_kubelet.h"

namespace deviceshare::agent {
namespace {

using ::deviceshare::testing::IsOk;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kDriver[] = "gpu.deviceshare.io";

DiscoveredGpu Gpu80(int index) {
  DiscoveredGpu gpu;
  gpu.uuid = absl::StrCat("GPU-", index, "0000000-aaaa-4000-8000-000000000000");
  gpu.index = index;
  gpu.model = "NVIDIA A100-SXM4-80GB";
  gpu.memory_mib = 81920;
  gpu.cc_major = 8;
  return gpu;
}

nlohmann::json Result(const std::string& request, const std::string& device,
                      const std::string& share, const std::string& memory,
                      const std::string& cores) {
  nlohmann::json result = {{"request", request},
                           {"driver", kDriver},
                           {"pool", "node-a"},
                           {"device", device},
                           {"shareID", share}};
  result["consumedCapacity"] = {{"memory", memory}, {"cores", cores}};
  return result;
}

nlohmann::json Claim(const std::string& name, nlohmann::json results) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaim"},
          {"metadata", {{"name", name}, {"namespace", "ml"}}},
          {"status",
           {{"allocation", {{"devices", {{"results", std::move(results)}}}}}}}};
}

class DraPrepareTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = folder_.path();
    ASSERT_FALSE(dir_.empty());
    absl::StatusOr<std::unique_ptr<kube::ApiClient>> api =
        kube::ApiClient::Create(server_.kube_config());
    ASSERT_THAT(api.status(), IsOk());
    api_ = *std::move(api);
    BackendRegistry registry;
    ASSERT_THAT(RegisterBuiltinBackends(registry), IsOk());
    absl::StatusOr<Config> config = ParseConfigYaml(
        "scheduler: {modes: [hami-core]}\n", BuiltinConfigExtensions());
    ASSERT_THAT(config.status(), IsOk());
    absl::StatusOr<BackendSet> backends = BackendSet::Create(registry, *config);
    ASSERT_THAT(backends.status(), IsOk());
    backends_ = std::make_unique<BackendSet>(*std::move(backends));
    std::vector<DiscoveredGpu> discovered = {Gpu80(0), Gpu80(1), Gpu80(2)};
    absl::StatusOr<std::vector<Gpu>> gpus =
        RegisteredGpus(discovered, config->device, hamicore::kMode);
    ASSERT_THAT(gpus.status(), IsOk());
    gpus_ = *gpus;
    absl::StatusOr<NodeSlices> slices =
        BuildResourceSlices(discovered, gpus_, *backends_, {kDriver, "node-a"});
    ASSERT_THAT(slices.status(), IsOk());
    slices_ = *slices;
    StartAgent();
    ASSERT_THAT(kubelet_->WaitForPlugin(kDriver).status(), IsOk());
  }

  void TearDown() override { server_plugin_.reset(); }

  // A fresh preparer and plugin server on the same folders: what a
  // restarted agent has.
  void StartAgent() {
    server_plugin_.reset();
    DraPreparerOptions options;
    options.driver = kDriver;
    options.node_name = "node-a";
    options.cdi_dir = dir_ + "/cdi";
    options.state_dir = dir_ + "/state";
    options.edits.hook_path = dir_ + "/vgpu";
    preparer_ = std::make_unique<DraClaimPreparer>(options, api_.get(),
                                                   backends_.get());
    preparer_->SetDevices(slices_, gpus_);
    DraPluginServerOptions server_options;
    server_options.driver_name = kDriver;
    server_options.plugin_dir = dir_ + "/plugins";
    server_options.registry_dir = dir_ + "/registry";
    server_plugin_ =
        std::make_unique<DraPluginServer>(server_options, preparer_.get());
    ASSERT_THAT(server_plugin_->Start(), IsOk());
    kubelet_ = std::make_unique<testing::TestDraKubelet>(dir_ + "/registry");
  }

  ClaimRef Add(const nlohmann::json& claim) {
    nlohmann::json stored = server_.UpsertResourceClaim(claim);
    return {"ml", stored["metadata"]["uid"], stored["metadata"]["name"]};
  }

  std::string CdiPath(const std::string& uid) const {
    return absl::StrCat(dir_, "/cdi/", kDriver, "-claim-", uid, ".json");
  }

  std::vector<std::string> SpecEnv(const std::string& uid) const {
    std::ifstream in(CdiPath(uid));
    std::stringstream text;
    text << in.rdbuf();
    nlohmann::json spec = nlohmann::json::parse(text.str());
    return spec["containerEdits"]["env"].get<std::vector<std::string>>();
  }

  testing::FakeApiServer server_;
  ::deviceshare::testing::TempFolder folder_{"dsprep-"};
  std::string dir_;
  std::unique_ptr<kube::ApiClient> api_;
  std::unique_ptr<BackendSet> backends_;
  std::vector<Gpu> gpus_;
  NodeSlices slices_;
  std::unique_ptr<DraClaimPreparer> preparer_;
  std::unique_ptr<DraPluginServer> server_plugin_;
  std::unique_ptr<testing::TestDraKubelet> kubelet_;
};

TEST_F(DraPrepareTest, TwoGpusWithDifferentSharesAreIndexedInGpuOrder) {
  // Results in the opposite order of the GPUs: the index follows the GPU.
  const ClaimRef ref =
      Add(Claim("two", {Result("b", "gpu-1", "s-b", "8Gi", "60"),
                        Result("a", "gpu-0", "s-a", "4Gi", "30")}));
  auto answer = kubelet_->Prepare("v1", {ref});
  ASSERT_THAT(answer.status(), IsOk());
  const ClaimPrepareResult& result = answer->at(ref.uid);
  ASSERT_EQ(result.error, "");
  ASSERT_EQ(result.devices.size(), 2u);
  EXPECT_EQ(result.devices[0].device, "gpu-1");
  EXPECT_EQ(result.devices[0].cdi_device_ids[0],
            absl::StrCat(kDriver, "/claim=", ref.uid, "-gpu-1"));
  const std::vector<std::string> env = SpecEnv(ref.uid);
  EXPECT_THAT(env, Contains("CUDA_DEVICE_MEMORY_LIMIT_0=4096m"));
  EXPECT_THAT(env, Contains("CUDA_DEVICE_MEMORY_LIMIT_1=8192m"));
  EXPECT_THAT(env, Contains("CUDA_DEVICE_SM_LIMIT_0=30"));
  EXPECT_THAT(env, Contains("CUDA_DEVICE_SM_LIMIT_1=60"));
  EXPECT_THAT(env, Contains("CUDA_DEVICE_ORDER=PCI_BUS_ID"));

  auto gone = kubelet_->Unprepare("v1", {ref});
  ASSERT_THAT(gone.status(), IsOk());
  EXPECT_EQ(gone->at(ref.uid), "");
  EXPECT_FALSE(std::filesystem::exists(CdiPath(ref.uid)));
  // Again: already done.
  gone = kubelet_->Unprepare("v1beta1", {ref});
  ASSERT_THAT(gone.status(), IsOk());
  EXPECT_EQ(gone->at(ref.uid), "");
}

TEST_F(DraPrepareTest, TwoSharesOfOneGpuAreBothHonoured) {
  const ClaimRef ref =
      Add(Claim("same", {Result("a", "gpu-2", "s-a", "4Gi", "30"),
                         Result("b", "gpu-2", "s-b", "8Gi", "60")}));
  auto answer = kubelet_->Prepare("v1beta1", {ref});
  ASSERT_THAT(answer.status(), IsOk());
  ASSERT_EQ(answer->at(ref.uid).error, "");
  EXPECT_EQ(answer->at(ref.uid).devices.size(), 2u);
  const std::vector<std::string> env = SpecEnv(ref.uid);
  EXPECT_THAT(env, Contains("CUDA_DEVICE_MEMORY_LIMIT_0=12288m"));
  EXPECT_THAT(env, Contains("CUDA_DEVICE_SM_LIMIT=90"));
  EXPECT_THAT(env, Not(Contains(HasSubstr("CUDA_DEVICE_MEMORY_LIMIT_1"))));
}

TEST_F(DraPrepareTest, BadClaimsFailAloneAndNameWhy) {
  const ClaimRef good =
      Add(Claim("good", {Result("a", "gpu-0", "s", "1Gi", "10")}));
  const ClaimRef unknown =
      Add(Claim("unknown", {Result("a", "gpu-9", "s", "1Gi", "10")}));
  nlohmann::json other_result = Result("a", "gpu-0", "s", "1Gi", "10");
  other_result["driver"] = "gpu.nvidia.com";
  const ClaimRef other = Add(Claim("other", {other_result}));
  const ClaimRef too_big =
      Add(Claim("big", {Result("a", "gpu-0", "s", "1Gi", "150")}));
  const ClaimRef malformed =
      Add(Claim("bad", {Result("a", "gpu-0", "s", "lots", "10")}));
  const ClaimRef absent{"ml", "no-such-uid", "absent"};
  auto answer = kubelet_->Prepare(
      "v1", {good, unknown, other, too_big, malformed, absent});
  ASSERT_THAT(answer.status(), IsOk());
  EXPECT_EQ(answer->at(good.uid).error, "");
  EXPECT_THAT(answer->at(unknown.uid).error,
              HasSubstr("\"gpu-9\" is not published by this node"));
  EXPECT_THAT(answer->at(other.uid).error,
              HasSubstr("none of its 1 results is a device of"));
  EXPECT_THAT(answer->at(too_big.uid).error,
              HasSubstr("consumedCapacity[cores]: 150 is more than"));
  EXPECT_THAT(answer->at(malformed.uid).error,
              HasSubstr("consumedCapacity[memory]"));
  EXPECT_THAT(answer->at(absent.uid).error, HasSubstr("absent"));
  EXPECT_TRUE(std::filesystem::exists(CdiPath(good.uid)));
  EXPECT_FALSE(std::filesystem::exists(CdiPath(unknown.uid)));
}

TEST_F(DraPrepareTest, RestartAnswersTheSameAndDuplicatesNothing) {
  const ClaimRef ref =
      Add(Claim("r", {Result("a", "gpu-1", "s-1", "2Gi", "20")}));
  auto first = kubelet_->Prepare("v1", {ref});
  ASSERT_THAT(first.status(), IsOk());
  ASSERT_EQ(first->at(ref.uid).error, "");
  // A restart after the journal was written: answered from the journal,
  // even with the API server unreachable for this claim.
  StartAgent();
  ASSERT_THAT(kubelet_->WaitForPlugin(kDriver).status(), IsOk());
  ASSERT_TRUE(server_.DeleteResourceClaim("ml", "r"));
  auto again = kubelet_->Prepare("v1", {ref});
  ASSERT_THAT(again.status(), IsOk());
  EXPECT_EQ(again->at(ref.uid), first->at(ref.uid));
  // A crash after the CDI spec but before the journal: prepared again from
  // the claim, the same spec rewritten under the same name.
  Add(Claim("r", {Result("a", "gpu-1", "s-1", "2Gi", "20")}));
  const ClaimRef same =
      Add(Claim("r2", {Result("a", "gpu-1", "s-1", "2Gi", "20")}));
  auto prepared = kubelet_->Prepare("v1", {same});
  ASSERT_THAT(prepared.status(), IsOk());
  std::filesystem::remove(
      absl::StrCat(dir_, "/state/dra-claims/", same.uid, ".json"));
  StartAgent();
  ASSERT_THAT(kubelet_->WaitForPlugin(kDriver).status(), IsOk());
  auto repeated = kubelet_->Prepare("v1", {same});
  ASSERT_THAT(repeated.status(), IsOk());
  EXPECT_EQ(repeated->at(same.uid), prepared->at(same.uid));
  int specs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_ + "/cdi")) {
    ++specs;
    EXPECT_THAT(entry.path().string(), Not(HasSubstr(".tmp")));
  }
  EXPECT_EQ(specs, 2);  // r and r2, once each
}

}  // namespace
}  // namespace deviceshare::agent
