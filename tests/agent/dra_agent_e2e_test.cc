// `deviceshare-node-agent serve --dra` end to end through real processes,
// without a GPU: the agent on fake NVML publishes its ResourceSlices to the
// in-memory API server (which rejects slices that break the API's rules),
// registers with the test kubelet over its registration socket, and
// prepares claims the test allocates, writing CDI specs.
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/agent_rig.h"
#include "testing/status_matchers.h"
#include "testing/test_dra_kubelet.h"
#include "testing/wait_for.h"

namespace deviceshare::testing {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

constexpr char kDriver[] = "gpu.deviceshare.io";

nlohmann::json Share(const std::string& request, const std::string& device,
                     const std::string& memory, const std::string& cores) {
  return {{"request", request},
          {"driver", kDriver},
          {"pool", "gpu-node"},
          {"device", device},
          {"shareID", absl::StrCat("share-", request)},
          {"consumedCapacity", {{"memory", memory}, {"cores", cores}}}};
}

nlohmann::json AllocatedClaim(const std::string& name, nlohmann::json results) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaim"},
          {"metadata", {{"name", name}, {"namespace", "ml"}}},
          {"status",
           {{"allocation", {{"devices", {{"results", std::move(results)}}}}}}}};
}

class DraAgentE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<AgentRig>> rig =
        AgentRig::Create({.gpus = 4, .dra = true});
    ASSERT_THAT(rig.status(), IsOk());
    rig_ = *std::move(rig);
    ASSERT_THAT(rig_->StartAgent(), IsOk()) << rig_->Log();
    kubelet_ = std::make_unique<TestDraKubelet>(rig_->DraDir("dra-registry"));
    ASSERT_THAT(kubelet_->WaitForPlugin(kDriver).status(), IsOk())
        << rig_->Log();
  }

  std::string CdiPath(const std::string& uid) const {
    return absl::StrCat(rig_->DraDir("cdi"), "/", kDriver, "-claim-", uid,
                        ".json");
  }

  std::vector<std::string> SpecEnv(const std::string& uid) const {
    std::ifstream in(CdiPath(uid));
    std::stringstream text;
    text << in.rdbuf();
    nlohmann::json spec =
        nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
    if (spec.is_discarded()) return {};
    return spec["containerEdits"]["env"].get<std::vector<std::string>>();
  }

  agent::ClaimRef Add(const nlohmann::json& claim) {
    nlohmann::json stored = rig_->api().UpsertResourceClaim(claim);
    return {"ml", stored["metadata"]["uid"], stored["metadata"]["name"]};
  }

  std::unique_ptr<AgentRig> rig_;
  std::unique_ptr<TestDraKubelet> kubelet_;
};

TEST_F(DraAgentE2eTest, PublishesPreparesAndUnprepares) {
  ASSERT_TRUE(WaitFor([&] { return rig_->api().ResourceSlices().size() == 1; },
                      absl::Seconds(20)))
      << rig_->Log();
  const nlohmann::json slice = rig_->api().ResourceSlices()[0];
  EXPECT_EQ(slice["spec"]["pool"]["name"], "gpu-node");
  EXPECT_EQ(slice["spec"]["devices"].size(), 4u);

  const agent::ClaimRef ref =
      Add(AllocatedClaim("two", {Share("a", "gpu-0", "4Gi", "30"),
                                 Share("b", "gpu-1", "8Gi", "60")}));
  auto answer = kubelet_->Prepare("v1", {ref});
  ASSERT_THAT(answer.status(), IsOk());
  ASSERT_EQ(answer->at(ref.uid).error, "") << rig_->Log();
  const std::vector<std::string> env = SpecEnv(ref.uid);
  EXPECT_THAT(env, Contains("CUDA_DEVICE_MEMORY_LIMIT_0=4096m"));
  EXPECT_THAT(env, Contains("CUDA_DEVICE_MEMORY_LIMIT_1=8192m"));
  EXPECT_THAT(env, Contains("CUDA_DEVICE_SM_LIMIT_0=30"));
  EXPECT_THAT(env, Contains("CUDA_DEVICE_SM_LIMIT_1=60"));

  auto gone = kubelet_->Unprepare("v1", {ref});
  ASSERT_THAT(gone.status(), IsOk());
  EXPECT_EQ(gone->at(ref.uid), "");
  EXPECT_FALSE(std::filesystem::exists(CdiPath(ref.uid)));
}

// Found with kubelet's own DRA manager (tests/cluster e2e): kubelet
// deletes every ResourceSlice of its node when it starts, and the agent
// published them again only at its next health round, 30 s later, the
// node's GPUs invisible to every scheduler meanwhile. The agent watches its
// slices and publishes a deleted one again at once.
TEST_F(DraAgentE2eTest, ADeletedSliceIsPublishedAgainAtOnce) {
  ASSERT_TRUE(WaitFor([&] { return rig_->api().ResourceSlices().size() == 1; },
                      absl::Seconds(20)))
      << rig_->Log();
  const std::string name = rig_->api().ResourceSlices()[0]["metadata"]["name"];
  ASSERT_TRUE(rig_->api().DeleteResourceSlice(name));
  EXPECT_TRUE(WaitFor([&] { return rig_->api().ResourceSlices().size() == 1; },
                      absl::Seconds(10)))
      << rig_->Log();
}

TEST_F(DraAgentE2eTest, KilledDuringPrepareAnswersTheSameAfterRestart) {
  const agent::ClaimRef ref =
      Add(AllocatedClaim("k", {Share("a", "gpu-2", "2Gi", "20")}));
  // The agent is killed while it reads the claim: after kubelet asked and
  // before it answered.
  rig_->api().SetResourceClaimGetDelay(absl::Seconds(3));
  auto pending = std::async(std::launch::async,
                            [&] { return kubelet_->Prepare("v1", {ref}); });
  ASSERT_TRUE(
      WaitFor([&] { return rig_->api().request_counts().claim_gets > 0; },
              absl::Seconds(20)));
  rig_->KillAgent();
  EXPECT_FALSE(pending.get().ok());
  rig_->api().SetResourceClaimGetDelay(absl::ZeroDuration());

  ASSERT_THAT(rig_->StartAgent(), IsOk()) << rig_->Log();
  ASSERT_THAT(kubelet_->WaitForPlugin(kDriver).status(), IsOk());
  auto first = kubelet_->Prepare("v1", {ref});
  ASSERT_THAT(first.status(), IsOk());
  ASSERT_EQ(first->at(ref.uid).error, "") << rig_->Log();
  EXPECT_THAT(SpecEnv(ref.uid), Contains("CUDA_DEVICE_MEMORY_LIMIT_0=2048m"));
  // Killed after answering: the journal answers the same.
  rig_->KillAgent();
  ASSERT_THAT(rig_->StartAgent(), IsOk()) << rig_->Log();
  ASSERT_THAT(kubelet_->WaitForPlugin(kDriver).status(), IsOk());
  auto again = kubelet_->Prepare("v1", {ref});
  ASSERT_THAT(again.status(), IsOk());
  EXPECT_EQ(again->at(ref.uid), first->at(ref.uid));
  int specs = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(rig_->DraDir("cdi"))) {
    ++specs;
    EXPECT_THAT(entry.path().string(), ::testing::Not(HasSubstr(".tmp")));
  }
  EXPECT_EQ(specs, 1);
}

// A MIG partition through DRA: the instance is created at the allocated
// placement when the claim is prepared, adopted after a restart, and
// removed when the claim is unprepared.
TEST(DraAgentMigE2eTest, PartitionIsCreatedAdoptedAndRemoved) {
  absl::StatusOr<std::unique_ptr<AgentRig>> made = AgentRig::Create(
      {.gpus = 2,
       .dra = true,
       .config_extra = "scheduler:\n  modes: [hami-core, mig]\n"});
  ASSERT_THAT(made.status(), IsOk());
  AgentRig& rig = **made;
  nlohmann::json inventory = rig.ReadInventory();
  inventory["gpus"][1]["mig_mode"] = true;
  rig.WriteInventory(inventory);
  ASSERT_THAT(rig.StartAgent(), IsOk()) << rig.Log();
  TestDraKubelet kubelet(rig.DraDir("dra-registry"));
  ASSERT_THAT(kubelet.WaitForPlugin(kDriver).status(), IsOk()) << rig.Log();
  const std::string device = "gpu-1-mig-3g40gb-4";
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const nlohmann::json& slice : rig.api().ResourceSlices()) {
          // The MIG GPU's counter set has a slice without devices.
          for (const nlohmann::json& d :
               slice["spec"].value("devices", nlohmann::json::array())) {
            if (d["name"] == device) return true;
          }
        }
        return false;
      },
      absl::Seconds(20)))
      << rig.Log();
  nlohmann::json stored = rig.api().UpsertResourceClaim(
      AllocatedClaim("mig", {{{"request", "part"},
                              {"driver", kDriver},
                              {"pool", "gpu-node"},
                              {"device", device}}}));
  const agent::ClaimRef ref{"ml", stored["metadata"]["uid"], "mig"};
  auto prepared = kubelet.Prepare("v1", {ref});
  ASSERT_THAT(prepared.status(), IsOk());
  ASSERT_EQ(prepared->at(ref.uid).error, "") << rig.Log();
  EXPECT_EQ(rig.InstanceStarts(AgentRig::Uuid(1)), std::vector<int>{4});
  const std::string spec_path = absl::StrCat(rig.DraDir("cdi"), "/", kDriver,
                                             "-claim-", ref.uid, ".json");
  std::ifstream in(spec_path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("NVIDIA_VISIBLE_DEVICES=MIG-"));

  rig.KillAgent();
  ASSERT_THAT(rig.StartAgent(), IsOk()) << rig.Log();
  ASSERT_THAT(kubelet.WaitForPlugin(kDriver).status(), IsOk());
  auto again = kubelet.Prepare("v1", {ref});
  ASSERT_THAT(again.status(), IsOk());
  EXPECT_EQ(again->at(ref.uid), prepared->at(ref.uid));
  EXPECT_EQ(rig.InstanceStarts(AgentRig::Uuid(1)), std::vector<int>{4});

  auto gone = kubelet.Unprepare("v1", {ref});
  ASSERT_THAT(gone.status(), IsOk());
  EXPECT_EQ(gone->at(ref.uid), "");
  EXPECT_TRUE(rig.InstanceStarts(AgentRig::Uuid(1)).empty());
}

// An MPS GPU through DRA: the claim's share becomes the MPS client limits.
TEST(DraAgentMpsE2eTest, ShareBecomesMpsLimits) {
  absl::StatusOr<std::unique_ptr<AgentRig>> made = AgentRig::Create(
      {.gpus = 1,
       .extra_args = {"--gpu-mode", "mps", "--mps-control", "/bin/false"},
       .dra = true,
       .config_extra = "scheduler:\n  modes: [hami-core, mps]\n"});
  ASSERT_THAT(made.status(), IsOk());
  AgentRig& rig = **made;
  ASSERT_THAT(rig.StartAgent(), IsOk()) << rig.Log();
  TestDraKubelet kubelet(rig.DraDir("dra-registry"));
  ASSERT_THAT(kubelet.WaitForPlugin(kDriver).status(), IsOk()) << rig.Log();
  ASSERT_TRUE(WaitFor([&] { return rig.api().ResourceSlices().size() == 1; },
                      absl::Seconds(20)));
  const nlohmann::json device =
      rig.api().ResourceSlices()[0]["spec"]["devices"][0];
  EXPECT_EQ(device["attributes"]["mode"]["string"], "mps");
  nlohmann::json stored = rig.api().UpsertResourceClaim(
      AllocatedClaim("mps", {Share("a", "gpu-0", "4Gi", "30")}));
  const agent::ClaimRef ref{"ml", stored["metadata"]["uid"], "mps"};
  auto prepared = kubelet.Prepare("v1beta1", {ref});
  ASSERT_THAT(prepared.status(), IsOk());
  ASSERT_EQ(prepared->at(ref.uid).error, "") << rig.Log();
  std::ifstream in(absl::StrCat(rig.DraDir("cdi"), "/", kDriver, "-claim-",
                                ref.uid, ".json"));
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=30"));
  EXPECT_THAT(text.str(), HasSubstr("CUDA_MPS_PIPE_DIRECTORY="));
}

// A GPU that falls off the bus is withdrawn from the pool (a new
// generation) and comes back when it answers again.
TEST(DraAgentHealthE2eTest, LostGpuIsWithdrawnAndComesBack) {
  absl::StatusOr<std::unique_ptr<AgentRig>> made = AgentRig::Create(
      {.gpus = 3, .extra_args = {"--health-interval", "100ms"}, .dra = true});
  ASSERT_THAT(made.status(), IsOk());
  AgentRig& rig = **made;
  ASSERT_THAT(rig.StartAgent(), IsOk()) << rig.Log();
  auto devices_and_generation = [&]() -> std::pair<size_t, int64_t> {
    std::vector<nlohmann::json> slices = rig.api().ResourceSlices();
    if (slices.size() != 1) return {0, 0};
    return {slices[0]["spec"]["devices"].size(),
            slices[0]["spec"]["pool"]["generation"].get<int64_t>()};
  };
  ASSERT_TRUE(WaitFor([&] { return devices_and_generation().first == 3; },
                      absl::Seconds(20)))
      << rig.Log();
  const int64_t first = devices_and_generation().second;
  nlohmann::json inventory = rig.ReadInventory();
  inventory["gpus"][2]["lost"] = true;
  rig.WriteInventory(inventory);
  EXPECT_TRUE(WaitFor([&] { return devices_and_generation().first == 2; },
                      absl::Seconds(20)))
      << rig.Log();
  EXPECT_GT(devices_and_generation().second, first);
  inventory["gpus"][2].erase("lost");
  rig.WriteInventory(inventory);
  EXPECT_TRUE(WaitFor([&] { return devices_and_generation().first == 3; },
                      absl::Seconds(20)))
      << rig.Log();
}

}  // namespace
}  // namespace deviceshare::testing
