// deviceshare-node-agent end to end, without a GPU: the real binary loads
// the fake libnvidia-ml.so.1 through its dlopen path, registers the node
// with an in-memory API server, and serves a test kubelet (gRPC over unix
// sockets) that admits containers the way kubelet does. Every container
// must get its own pod's limits; killing the agent mid-stream and starting
// it again must re-register with kubelet and neither lose nor repeat an
// allocation.

#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/k8s/node_parser.h"
#include "deviceshare/mig/mig_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/agent_pods.h"
#include "testing/agent_rig.h"
#include "testing/wait_for.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::AdmittedContainer;
using ::deviceshare::testing::AgentRig;
using ::deviceshare::testing::BoundPod;
using ::deviceshare::testing::PodSpec;
using ::deviceshare::testing::ShareOf;
using ::deviceshare::testing::WaitFor;
using ::testing::HasSubstr;

constexpr char kNode[] = "gpu-node";
constexpr char kResource[] = "nvidia.com/gpu";
constexpr int kGpus = 4;
constexpr int kSplit = 10;

std::string Uuid(int index) { return AgentRig::Uuid(index); }

// A pod's container and what it must get.
struct Expected {
  std::string name;
  std::vector<DeviceGrant> grants;
};

class NodeAgentE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<AgentRig>> rig =
        AgentRig::Create({.node = kNode,
                          .gpus = kGpus,
                          .split = kSplit,
                          .extra_args = {"--health-interval", "100ms",
                                         "--register-interval", "1s"}});
    ASSERT_TRUE(rig.ok()) << rig.status();
    rig_ = *std::move(rig);
  }

  void StartAgent() {
    absl::Status started = rig_->StartAgent();
    ASSERT_TRUE(started.ok()) << started;
  }

  bool AllHealthy() { return rig_->AllHealthy(); }

  // Binds a pod to the node with `grants` for its one container.
  void Bind(const std::string& name, const std::vector<DeviceGrant>& grants,
            int64_t decided_at) {
    int64_t memory = grants.front().memory_mib;
    rig_->api().UpsertPod(
        BoundPod(PodSpec{.name = name,
                         .gpus = static_cast<int>(grants.size()),
                         .memory_mib = memory},
                 Dialect::kHami, kNode, grants, decided_at));
    expected_["uid-" + name] = Expected{name, grants};
  }

  // The container's limits are its own pod's.
  void ExpectOwnShare(const std::string& uid,
                      const AdmittedContainer& admitted) {
    const Expected& want = expected_.at(uid);
    std::vector<std::string> uuids;
    for (size_t i = 0; i < want.grants.size(); ++i) {
      uuids.push_back(want.grants[i].uuid);
      EXPECT_EQ(admitted.envs.at(absl::StrCat("CUDA_DEVICE_MEMORY_LIMIT_", i)),
                absl::StrCat(want.grants[i].memory_mib, "m"))
          << uid;
    }
    EXPECT_EQ(admitted.envs.at("NVIDIA_VISIBLE_DEVICES"),
              absl::StrJoin(uuids, ","))
        << uid;
  }

  std::string BindPhase(const std::string& name) {
    std::optional<nlohmann::json> pod = rig_->api().GetPod("default", name);
    if (!pod) return "";
    return (*pod)["metadata"]["annotations"].value(keys::kHamiBindPhase, "");
  }

  std::unique_ptr<AgentRig> rig_;
  std::map<std::string, Expected> expected_;
};

TEST_F(NodeAgentE2eTest, RegistersTheNodeAndServesEveryPodItsOwnShare) {
  StartAgent();
  ASSERT_TRUE(AllHealthy()) << rig_->Log();
  // The registration reads back as the GPUs fake NVML reported.
  ASSERT_TRUE(WaitFor([&] {
    auto node = rig_->api().GetNode(kNode);
    return ParseNodeInventory(*node, 1).ok();
  })) << rig_->Log();
  absl::StatusOr<NodeInventory> inventory =
      ParseNodeInventory(*rig_->api().GetNode(kNode), 1);
  ASSERT_TRUE(inventory.ok());
  ASSERT_EQ(inventory->gpus.size(), static_cast<size_t>(kGpus));
  for (int i = 0; i < kGpus; ++i) {
    EXPECT_EQ(inventory->gpus[i].uuid, Uuid(i));
    EXPECT_EQ(inventory->gpus[i].memory_mib, 81559);
    EXPECT_EQ(inventory->gpus[i].split_count, kSplit);
  }

  // Several pods in flight at once, none confusable with another (what
  // deviceshare's scheduler guarantees): each device count is asked by one
  // share only, and the three one-GPU pods ask the same share.
  Bind("pair", {ShareOf(Uuid(0), 4000, 20), ShareOf(Uuid(1), 4000, 20)}, 100);
  Bind("triple",
       {ShareOf(Uuid(0), 3000, 0), ShareOf(Uuid(1), 3000, 0),
        ShareOf(Uuid(2), 3000, 0)},
       101);
  Bind("quad",
       {ShareOf(Uuid(0), 500, 0), ShareOf(Uuid(1), 500, 0),
        ShareOf(Uuid(2), 500, 0), ShareOf(Uuid(3), 500, 0)},
       102);
  for (const char* twin : {"twin-a", "twin-b", "twin-c"}) {
    Bind(twin, {ShareOf(Uuid(3), 6000, 0)}, 103);
  }
  // The agent sees the pods through its watch.
  absl::SleepFor(absl::Milliseconds(300));

  std::map<std::string, absl::StatusOr<AdmittedContainer>> results;
  absl::Mutex mu;
  std::vector<std::thread> threads;
  for (const auto& [uid, want] : expected_) {
    threads.emplace_back([&, uid = uid, count = want.grants.size()] {
      absl::StatusOr<AdmittedContainer> admitted =
          rig_->kubelet().AdmitContainer(uid, "main", kResource,
                                         static_cast<int>(count));
      absl::MutexLock lock(&mu);
      results.emplace(uid, std::move(admitted));
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const auto& [uid, admitted] : results) {
    ASSERT_TRUE(admitted.ok()) << uid << ": " << admitted.status() << "\n"
                               << rig_->Log();
    ExpectOwnShare(uid, *admitted);
  }
  for (const auto& [uid, want] : expected_) {
    EXPECT_TRUE(WaitFor([&] { return BindPhase(want.name) == "success"; }))
        << want.name;
  }
}

TEST_F(NodeAgentE2eTest, ConfusablePodsNeverStartWithAnotherPodsLimits) {
  StartAgent();
  ASSERT_TRUE(AllHealthy()) << rig_->Log();
  // Written by some other scheduler: two different shares of one GPU in
  // flight at once, and kubelet admits the later one first.
  Bind("early", {ShareOf(Uuid(0), 1000, 0)}, 100);
  Bind("late", {ShareOf(Uuid(0), 9000, 0)}, 200);
  absl::SleepFor(absl::Milliseconds(300));
  absl::StatusOr<AdmittedContainer> late =
      rig_->kubelet().AdmitContainer("uid-late", "main", kResource, 1);
  // The agent guessed "early"; PreStart found kubelet gave the ids to
  // "late" and refused to start it.
  ASSERT_FALSE(late.ok());
  EXPECT_THAT(late.status().message(), HasSubstr("another pod's limits"));
}

TEST_F(NodeAgentE2eTest, KilledAgentComesBackWithoutLosingOrRepeating) {
  StartAgent();
  ASSERT_TRUE(AllHealthy()) << rig_->Log();
  for (int i = 0; i < 8; ++i) {
    Bind(absl::StrCat("pod-", i), {ShareOf(Uuid(i % kGpus), 1000 + i, 0)},
         100 + i);
  }
  absl::SleepFor(absl::Milliseconds(300));
  std::vector<std::string> uids;
  for (const auto& [uid, want] : expected_) uids.push_back(uid);
  for (size_t i = 0; i < 4; ++i) {
    absl::StatusOr<AdmittedContainer> admitted =
        rig_->kubelet().AdmitContainer(uids[i], "main", kResource, 1);
    ASSERT_TRUE(admitted.ok()) << admitted.status() << rig_->Log();
    ExpectOwnShare(uids[i], *admitted);
  }
  const int registrations = rig_->kubelet().registrations();
  rig_->KillAgent();
  EXPECT_TRUE(WaitFor([&] { return !rig_->kubelet().stream_open(kResource); },
                      absl::Seconds(5)));

  StartAgent();
  EXPECT_TRUE(
      WaitFor([&] { return rig_->kubelet().registrations() > registrations; },
              absl::Seconds(10)));
  EXPECT_TRUE(WaitFor([&] { return rig_->kubelet().stream_open(kResource); },
                      absl::Seconds(10)));
  ASSERT_TRUE(AllHealthy()) << rig_->Log();
  for (size_t i = 4; i < uids.size(); ++i) {
    absl::StatusOr<AdmittedContainer> admitted =
        rig_->kubelet().AdmitContainer(uids[i], "main", kResource, 1);
    ASSERT_TRUE(admitted.ok()) << admitted.status() << rig_->Log();
    ExpectOwnShare(uids[i], *admitted);
  }
  // Nothing is left: the pods served before the kill are not served again.
  for (int gpu = 0; gpu < kGpus; ++gpu) {
    absl::StatusOr<AdmittedContainer> extra = rig_->kubelet().AdmitContainer(
        absl::StrCat("uid-intruder-", gpu), "main", kResource, 1);
    EXPECT_FALSE(extra.ok());
  }
  for (const auto& [uid, want] : expected_) {
    EXPECT_TRUE(WaitFor([&] { return BindPhase(want.name) == "success"; }))
        << want.name;
  }
}

TEST_F(NodeAgentE2eTest, KubeletRestartAndGpuHealthReachBothSides) {
  StartAgent();
  ASSERT_TRUE(AllHealthy()) << rig_->Log();
  const int registrations = rig_->kubelet().registrations();
  ASSERT_TRUE(rig_->kubelet().Restart().ok());
  EXPECT_TRUE(
      WaitFor([&] { return rig_->kubelet().registrations() > registrations; },
              absl::Seconds(10)))
      << rig_->Log();
  ASSERT_TRUE(AllHealthy()) << rig_->Log();

  // GPU 2 falls off the bus: its replicas go unhealthy, the node
  // registration says so; it comes back.
  nlohmann::json inventory = rig_->ReadInventory();
  inventory["gpus"][2]["lost"] = true;
  rig_->WriteInventory(inventory);
  EXPECT_TRUE(rig_->kubelet().WaitForDevices(
      kResource,
      [](const std::vector<agent::AdvertisedDevice>& devices) {
        int unhealthy = 0;
        for (const auto& device : devices) unhealthy += !device.healthy;
        return unhealthy == kSplit;
      },
      absl::Seconds(10)))
      << rig_->Log();
  EXPECT_TRUE(WaitFor([&] {
    auto parsed = ParseNodeInventory(*rig_->api().GetNode(kNode), 1);
    return parsed.ok() && !parsed->gpus[2].healthy;
  }));
  inventory["gpus"][2].erase("lost");
  rig_->WriteInventory(inventory);
  EXPECT_TRUE(AllHealthy()) << rig_->Log();
  EXPECT_TRUE(WaitFor([&] {
    auto parsed = ParseNodeInventory(*rig_->api().GetNode(kNode), 1);
    return parsed.ok() && parsed->gpus[2].healthy;
  }));
}

}  // namespace
}  // namespace deviceshare

namespace deviceshare {
namespace {

// MIG through the whole agent: the instance the scheduler placed is created
// at exactly that slot through (fake) NVML when kubelet admits the pod, the
// container sees the MIG device, the runtime ids go back on the pod, a
// restarted agent adopts the instance, and the instance of a deleted pod is
// removed.
TEST_F(NodeAgentE2eTest, MigInstanceIsCreatedAdoptedAndRemoved) {
  nlohmann::json inventory = rig_->ReadInventory();
  inventory["gpus"][1]["mig_mode"] = true;
  rig_->WriteInventory(inventory);
  StartAgent();
  ASSERT_TRUE(AllHealthy()) << rig_->Log();
  ASSERT_TRUE(WaitFor([&] {
    auto parsed = ParseNodeInventory(*rig_->api().GetNode(kNode), 1);
    return parsed.ok() && parsed->gpus[1].mode == mig::kMode;
  })) << rig_->Log();

  DeviceGrant grant = ShareOf(Uuid(1), 40448, 42);
  grant.mode = mig::kMode;
  grant.mig = MigSlot{.profile = "3g.40gb", .start = 4, .size = 4};
  Bind("mig", {grant}, 100);
  absl::SleepFor(absl::Milliseconds(300));
  absl::StatusOr<AdmittedContainer> admitted =
      rig_->kubelet().AdmitContainer("uid-mig", "main", kResource, 1);
  ASSERT_TRUE(admitted.ok()) << admitted.status() << rig_->Log();
  const std::string visible = admitted->envs.at("NVIDIA_VISIBLE_DEVICES");
  EXPECT_THAT(visible, ::testing::StartsWith("MIG-"));

  // The pod's record now carries the instance's runtime identity.
  ASSERT_TRUE(WaitFor([&] { return BindPhase("mig") == "success"; }))
      << rig_->Log();
  nlohmann::json pod = *rig_->api().GetPod("default", "mig");
  const nlohmann::json mig = nlohmann::json::parse(
      pod["metadata"]["annotations"][keys::kHamiMigAllocations]
          .get<std::string>());
  ASSERT_EQ(mig.size(), 1u);
  EXPECT_EQ(mig[0]["migUUID"], visible);
  EXPECT_EQ(mig[0]["placement"]["start"], 4);

  // Restarted, the agent finds the instance where it was and adopts it:
  // still exactly one GPU instance, at slice 4.
  rig_->KillAgent();
  StartAgent();
  ASSERT_TRUE(AllHealthy()) << rig_->Log();
  EXPECT_EQ(rig_->InstanceStarts(Uuid(1)), std::vector<int>{4});

  // The pod goes away: the next sweep removes its instance.
  rig_->api().DeletePod("default", "mig");
  EXPECT_TRUE(WaitFor([&] { return rig_->InstanceStarts(Uuid(1)).empty(); },
                      absl::Seconds(10)))
      << rig_->Log();
}

}  // namespace
}  // namespace deviceshare
