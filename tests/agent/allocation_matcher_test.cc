// AllocationMatcher: every container gets its own pod's share, matched on
// the GPUs kubelet passes; served containers are remembered across a
// restart; a wrong guess between confusable pods is caught at PreStart.
#include "deviceshare/agent/allocation_matcher.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/mps/mps_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/agent_pods.h"

namespace deviceshare::agent {
namespace {

using ::deviceshare::testing::BoundPod;
using ::deviceshare::testing::PodSpec;
using ::deviceshare::testing::ShareOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

constexpr char kNode[] = "node-a";

std::map<std::string, std::string> EnvOf(const ContainerGrant& grant) {
  return {grant.edits.env.begin(), grant.edits.env.end()};
}

class MatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           absl::StrCat(
               "matcher-",
               ::testing::UnitTest::GetInstance()->current_test_info()->name(),
               "-", getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    Start();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // (Re)creates the matcher over the same journal, as a restarted agent.
  void Start() {
    matcher_.reset();
    absl::StatusOr<std::unique_ptr<ServedJournal>> journal =
        ServedJournal::Open((dir_ / "served.journal").string());
    ASSERT_TRUE(journal.ok()) << journal.status();
    AllocationMatcherOptions options;
    options.node_name = kNode;
    options.kubelet_checkpoint_path = (dir_ / "checkpoint").string();
    options.pod_watch_grace = grace_;
    options.list_pods = list_pods_;
    options.api_unreachable_wait = api_unreachable_wait_;
    options.list_retry_interval = absl::Milliseconds(20);
    absl::StatusOr<std::unique_ptr<AllocationMatcher>> matcher =
        AllocationMatcher::Create(
            options, Config{}, *std::move(journal),
            [this](const std::string& key, const std::string& uid,
                   const nlohmann::json& annotations) {
              patches_[key].merge_patch(annotations);
            },
            MigPreparer());
    ASSERT_TRUE(matcher.ok()) << matcher.status();
    matcher_ = *std::move(matcher);
    std::vector<Gpu> gpus(2);
    gpus[0].uuid = "GPU-0";
    gpus[1].uuid = "GPU-1";
    gpus[1].index = 1;
    matcher_->SetGpus(gpus);
  }

  // What kubelet writes after Allocate.
  void WriteCheckpoint(
      const std::vector<std::pair<std::string, std::vector<std::string>>>&
          holders) {
    nlohmann::json entries = nlohmann::json::array();
    for (const auto& [uid, ids] : holders) {
      entries.push_back({{"PodUID", uid},
                         {"ContainerName", "main"},
                         {"ResourceName", "nvidia.com/gpu"},
                         {"DeviceIDs", {{"-1", ids}}},
                         {"AllocResp", ""}});
    }
    std::ofstream(dir_ / "checkpoint") << nlohmann::json{
        {"Data", {{"PodDeviceEntries", entries}}},
        {"Checksum", 1}}.dump();
  }

  std::filesystem::path dir_;
  // Refusals are asserted often here; the grace has its own test.
  absl::Duration grace_ = absl::ZeroDuration();
  // The API server's answer to the agent's second look (none by default).
  std::function<absl::StatusOr<std::vector<nlohmann::json>>()> list_pods_;
  absl::Duration api_unreachable_wait_ = absl::Seconds(5);
  std::unique_ptr<AllocationMatcher> matcher_;
  std::map<std::string, nlohmann::json> patches_;
};

TEST_F(MatcherTest, EachContainerGetsItsOwnPodsShareByGpu) {
  matcher_->ReplacePods(
      {BoundPod(PodSpec{.name = "small", .memory_mib = 3000, .cores = 30},
                Dialect::kHami, kNode, {ShareOf("GPU-0", 3000, 30)}),
       BoundPod(PodSpec{.name = "big", .memory_mib = 9000, .cores = 60},
                Dialect::kHami, kNode, {ShareOf("GPU-1", 9000, 60)})});

  absl::StatusOr<ContainerGrant> big = matcher_->Allocate({"GPU-1::4"});
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ(EnvOf(*big)["CUDA_DEVICE_MEMORY_LIMIT_0"], "9000m");
  EXPECT_EQ(EnvOf(*big)["CUDA_DEVICE_SM_LIMIT"], "60");
  EXPECT_EQ(EnvOf(*big)["NVIDIA_VISIBLE_DEVICES"], "GPU-1");

  absl::StatusOr<ContainerGrant> small = matcher_->Allocate({"GPU-0::0"});
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ(EnvOf(*small)["CUDA_DEVICE_MEMORY_LIMIT_0"], "3000m");

  // Both served: a third call for GPU-0 has nobody left.
  absl::StatusOr<ContainerGrant> extra = matcher_->Allocate({"GPU-0::1"});
  EXPECT_EQ(extra.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(extra.status().message(), HasSubstr("GPU-0::1"));
  EXPECT_THAT(patches_["default/big"][keys::kHamiBindPhase], "success");
  EXPECT_THAT(patches_["default/small"][keys::kHamiBindPhase], "success");
}

// HAMi's webhook gives a container with nvidia.com/priority the env
// CUDA_TASK_PRIORITY (device_test.go:2289 TestMutateAdmission_Priority);
// deviceshare's node agent sets it with the container's other limits.
TEST_F(MatcherTest, PriorityResourceBecomesCudaTaskPriority) {
  nlohmann::json pod =
      BoundPod(PodSpec{.name = "urgent", .memory_mib = 3000, .cores = 30},
               Dialect::kHami, kNode, {ShareOf("GPU-0", 3000, 30)});
  pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/priority"] =
      "1";
  matcher_->ReplacePods({pod});
  absl::StatusOr<ContainerGrant> grant = matcher_->Allocate({"GPU-0::0"});
  ASSERT_TRUE(grant.ok()) << grant.status();
  EXPECT_EQ(EnvOf(*grant)["CUDA_TASK_PRIORITY"], "1");
}

TEST_F(MatcherTest, AnAllocateAheadOfThePodWatchWaitsForIt) {
  grace_ = absl::Seconds(5);
  Start();
  matcher_->ReplacePods({});
  // Kubelet admits the pod before the agent's watch has delivered it.
  std::thread watch([this] {
    absl::SleepFor(absl::Milliseconds(200));
    matcher_->ApplyPod(
        "ADDED", BoundPod(PodSpec{.name = "late", .memory_mib = 3000},
                          Dialect::kHami, kNode, {ShareOf("GPU-0", 3000, 0)}));
  });
  absl::StatusOr<ContainerGrant> late = matcher_->Allocate({"GPU-0::0"});
  watch.join();
  ASSERT_TRUE(late.ok()) << late.status();
  EXPECT_EQ(EnvOf(*late)["CUDA_DEVICE_MEMORY_LIMIT_0"], "3000m");

  // A pod that never comes is refused once the grace has passed.
  grace_ = absl::Milliseconds(100);
  Start();
  const absl::Time start = absl::Now();
  absl::StatusOr<ContainerGrant> none = matcher_->Allocate({"GPU-1::0"});
  EXPECT_EQ(none.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(100));
}

// Found with the real kube-apiserver (tests/cluster e2e): kubelet asked
// GetPreferredAllocation for a pod the agent's watch had not delivered
// yet, got replicas of another GPU, and the Allocate that followed could
// only refuse them. Preferred now waits for the watch as Allocate does.
TEST_F(MatcherTest, APreferredAheadOfThePodWatchWaitsForIt) {
  grace_ = absl::Seconds(5);
  Start();
  matcher_->ReplacePods({});
  std::thread watch([this] {
    absl::SleepFor(absl::Milliseconds(200));
    matcher_->ApplyPod(
        "ADDED", BoundPod(PodSpec{.name = "late", .memory_mib = 3000},
                          Dialect::kHami, kNode, {ShareOf("GPU-1", 3000, 0)}));
  });
  absl::StatusOr<std::vector<std::string>> preferred =
      matcher_->Preferred({"GPU-0::0", "GPU-0::1", "GPU-1::0"}, {}, 1);
  watch.join();
  ASSERT_TRUE(preferred.ok()) << preferred.status();
  EXPECT_THAT(*preferred, ElementsAre("GPU-1::0"));
  absl::StatusOr<ContainerGrant> late = matcher_->Allocate(*preferred);
  ASSERT_TRUE(late.ok()) << late.status();
  EXPECT_EQ(EnvOf(*late)["NVIDIA_VISIBLE_DEVICES"], "GPU-1");

  // With no pod coming, any valid answer once the grace has passed.
  grace_ = absl::Milliseconds(100);
  Start();
  const absl::Time start = absl::Now();
  preferred = matcher_->Preferred({"GPU-0::0", "GPU-1::0"}, {}, 1);
  ASSERT_TRUE(preferred.ok()) << preferred.status();
  EXPECT_THAT(*preferred, ElementsAre("GPU-0::0"));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(100));
}

// Found with the real kube-apiserver killed and restarted (tests/cluster
// e2e): the agent's watch came back later than kubelet's by more than the
// grace, and the Allocate refused a pod its own watch had not delivered.
// Past the grace the agent reads the node's pods afresh, once.
TEST_F(MatcherTest, PastTheGraceTheApiServerIsAskedOnce) {
  int lists = 0;
  list_pods_ = [&lists]() -> absl::StatusOr<std::vector<nlohmann::json>> {
    ++lists;
    return std::vector<nlohmann::json>{
        BoundPod(PodSpec{.name = "lagging", .memory_mib = 3000}, Dialect::kHami,
                 kNode, {ShareOf("GPU-1", 3000, 0)})};
  };
  Start();
  matcher_->ReplacePods({});
  absl::StatusOr<std::vector<std::string>> preferred =
      matcher_->Preferred({"GPU-0::0", "GPU-1::0"}, {}, 1);
  ASSERT_TRUE(preferred.ok()) << preferred.status();
  EXPECT_THAT(*preferred, ElementsAre("GPU-1::0"));
  EXPECT_EQ(lists, 1);
  absl::StatusOr<ContainerGrant> grant = matcher_->Allocate(*preferred);
  ASSERT_TRUE(grant.ok()) << grant.status();
  EXPECT_EQ(EnvOf(*grant)["NVIDIA_VISIBLE_DEVICES"], "GPU-1");
  EXPECT_EQ(lists, 1);  // the pod was known by then

  // A read that keeps failing past api_unreachable_wait leaves the
  // refusal as it was.
  lists = 0;
  list_pods_ = [&lists]() -> absl::StatusOr<std::vector<nlohmann::json>> {
    ++lists;
    return absl::UnavailableError("connection refused");
  };
  api_unreachable_wait_ = absl::Milliseconds(300);
  Start();
  absl::StatusOr<ContainerGrant> none = matcher_->Allocate({"GPU-0::0"});
  EXPECT_EQ(none.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_GE(lists, 2);
}

// Found with the real kube-apiserver killed during a burst (tests/cluster
// e2e, TestControlPlaneKilledDuringBurst): kubelet admitted a pod its own
// watch had seen bound just before the kill, the agent's watch had not, and
// the agent's one fresh read met the API server still down: the pod was
// refused and kubelet failed it for good. The agent now retries the read
// while the API server is unreachable.
TEST_F(MatcherTest, AnApiServerComingBackIsWaitedFor) {
  int lists = 0;
  list_pods_ = [&lists]() -> absl::StatusOr<std::vector<nlohmann::json>> {
    if (++lists < 3) return absl::UnavailableError("connection refused");
    return std::vector<nlohmann::json>{
        BoundPod(PodSpec{.name = "bound-before-the-kill", .memory_mib = 3000},
                 Dialect::kHami, kNode, {ShareOf("GPU-1", 3000, 0)})};
  };
  Start();
  matcher_->ReplacePods({});
  absl::StatusOr<std::vector<std::string>> preferred =
      matcher_->Preferred({"GPU-0::0", "GPU-1::0"}, {}, 1);
  ASSERT_TRUE(preferred.ok()) << preferred.status();
  EXPECT_THAT(*preferred, ElementsAre("GPU-1::0"));
  EXPECT_EQ(lists, 3);
  absl::StatusOr<ContainerGrant> grant = matcher_->Allocate(*preferred);
  ASSERT_TRUE(grant.ok()) << grant.status();
  EXPECT_EQ(EnvOf(*grant)["NVIDIA_VISIBLE_DEVICES"], "GPU-1");
}

TEST_F(MatcherTest, PreferredSteersKubeletToTheWaitingContainersGpus) {
  matcher_->ReplacePods(
      {BoundPod(PodSpec{.name = "two", .gpus = 2}, Dialect::kVolcano, kNode,
                {ShareOf("GPU-0", 1000, 0), ShareOf("GPU-1", 1000, 0)})});
  absl::StatusOr<std::vector<std::string>> preferred = matcher_->Preferred(
      {"GPU-0::0", "GPU-0::1", "GPU-1::0", "GPU-1::1"}, {}, 2);
  ASSERT_TRUE(preferred.ok()) << preferred.status();
  EXPECT_THAT(*preferred, ElementsAre("GPU-0::0", "GPU-1::0"));
  // Two replicas of one GPU would be a different container's shape.
  absl::StatusOr<ContainerGrant> wrong =
      matcher_->Allocate({"GPU-0::0", "GPU-0::1"});
  EXPECT_FALSE(wrong.ok());
  absl::StatusOr<ContainerGrant> right = matcher_->Allocate(*preferred);
  ASSERT_TRUE(right.ok()) << right.status();
  EXPECT_EQ(EnvOf(*right)["NVIDIA_VISIBLE_DEVICES"], "GPU-0,GPU-1");
  EXPECT_THAT(patches_["default/two"][keys::kVolcanoBindPhase], "success");
}

TEST_F(MatcherTest, RestartedAgentNeitherRepeatsNorForgets) {
  const std::vector<nlohmann::json> pods = {
      BoundPod(PodSpec{.name = "first", .memory_mib = 1000}, Dialect::kHami,
               kNode, {ShareOf("GPU-0", 1000, 0)}, 100),
      BoundPod(PodSpec{.name = "second", .memory_mib = 2000}, Dialect::kHami,
               kNode, {ShareOf("GPU-0", 2000, 0)}, 200)};
  matcher_->ReplacePods(pods);
  absl::StatusOr<ContainerGrant> first = matcher_->Allocate({"GPU-0::0"});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(EnvOf(*first)["CUDA_DEVICE_MEMORY_LIMIT_0"], "1000m");

  Start();  // the agent was killed and came back
  matcher_->ReplacePods(pods);
  absl::StatusOr<ContainerGrant> second = matcher_->Allocate({"GPU-0::1"});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(EnvOf(*second)["CUDA_DEVICE_MEMORY_LIMIT_0"], "2000m");
  EXPECT_FALSE(matcher_->Allocate({"GPU-0::2"}).ok());
  EXPECT_EQ(matcher_->stats().served, 1);
}

// Killed after serving a pod but before its success patch went out: the
// restarted agent finds the pod still allocating, its journal says served,
// and it sends the patch (and serves the pod no second time).
TEST_F(MatcherTest, RestartedAgentSendsASuccessItLost) {
  const std::vector<nlohmann::json> pods = {
      BoundPod(PodSpec{.name = "first", .memory_mib = 1000}, Dialect::kHami,
               kNode, {ShareOf("GPU-0", 1000, 0)}, 100)};
  matcher_->ReplacePods(pods);
  ASSERT_TRUE(matcher_->Allocate({"GPU-0::0"}).ok());
  ASSERT_EQ(patches_.size(), 1u);
  patches_.clear();  // the patch queue died with the agent

  Start();
  matcher_->ReplacePods(pods);  // the pod as the API server still has it
  ASSERT_EQ(patches_.size(), 1u);
  EXPECT_EQ(patches_.begin()->second[keys::kHamiBindPhase], "success");
  EXPECT_FALSE(matcher_->Allocate({"GPU-0::1"}).ok());
  // Seen again (a later watch event): no second patch while it is pending.
  patches_.clear();
  matcher_->ApplyPod("MODIFIED", pods[0]);
  EXPECT_TRUE(patches_.empty());
}

TEST_F(MatcherTest, InterchangeablePodsAreFixedUpAtPreStart) {
  matcher_->ReplacePods(
      {BoundPod(PodSpec{.name = "a", .memory_mib = 1000}, Dialect::kHami, kNode,
                {ShareOf("GPU-0", 1000, 0)}, 100),
       BoundPod(PodSpec{.name = "b", .memory_mib = 1000}, Dialect::kHami, kNode,
                {ShareOf("GPU-0", 1000, 0)}, 200)});
  // Kubelet admits b first; the matcher guesses a (decided earlier).
  ASSERT_TRUE(matcher_->Allocate({"GPU-0::0"}).ok());
  WriteCheckpoint({{"uid-b", {"GPU-0::0"}}});
  EXPECT_TRUE(matcher_->PreStart({"GPU-0::0"}).ok());
  EXPECT_EQ(matcher_->stats().swapped, 1);
  // Now a is the one waiting, and gets the same share.
  ASSERT_TRUE(matcher_->Allocate({"GPU-0::1"}).ok());
  WriteCheckpoint({{"uid-b", {"GPU-0::0"}}, {"uid-a", {"GPU-0::1"}}});
  EXPECT_TRUE(matcher_->PreStart({"GPU-0::1"}).ok());
  EXPECT_EQ(matcher_->stats().prestart_refused, 0);
}

// The swap takes a's container back after this agent marked a served, and
// the watch may already show that success: a waits again all the same (the
// success was this agent's own), and is marked allocating again. Found by
// the e2e test under load: three twin pods, one refused after the grace.
TEST_F(MatcherTest, ASwapTakesBackASuccessThisAgentWrote) {
  auto pod = [](const char* name, int decided) {
    return BoundPod(PodSpec{.name = name, .memory_mib = 1000}, Dialect::kHami,
                    kNode, {ShareOf("GPU-0", 1000, 0)}, decided);
  };
  matcher_->ReplacePods({pod("a", 100), pod("b", 200)});
  ASSERT_TRUE(matcher_->Allocate({"GPU-0::0"}).ok());  // guessed a
  ASSERT_EQ(patches_["default/a"]["hami.io/bind-phase"], "success");
  // The watch delivers a with the success just written.
  nlohmann::json a = pod("a", 100);
  a["metadata"]["annotations"].merge_patch(patches_["default/a"]);
  matcher_->ReplacePods({a, pod("b", 200)});
  // Kubelet had admitted b.
  WriteCheckpoint({{"uid-b", {"GPU-0::0"}}});
  ASSERT_TRUE(matcher_->PreStart({"GPU-0::0"}).ok());
  EXPECT_EQ(matcher_->stats().swapped, 1);
  EXPECT_EQ(patches_["default/a"]["hami.io/bind-phase"], "allocating");
  EXPECT_EQ(patches_["default/b"]["hami.io/bind-phase"], "success");
  // a's admission finds it waiting.
  absl::StatusOr<ContainerGrant> second = matcher_->Allocate({"GPU-0::1"});
  ASSERT_TRUE(second.ok()) << second.status();
  WriteCheckpoint({{"uid-b", {"GPU-0::0"}}, {"uid-a", {"GPU-0::1"}}});
  EXPECT_TRUE(matcher_->PreStart({"GPU-0::1"}).ok());
  EXPECT_EQ(patches_["default/a"]["hami.io/bind-phase"], "success");
}

TEST_F(MatcherTest, ConfusablePodsNeverRunWithAnotherPodsLimits) {
  matcher_->ReplacePods(
      {BoundPod(PodSpec{.name = "a", .memory_mib = 1000}, Dialect::kHami, kNode,
                {ShareOf("GPU-0", 1000, 0)}, 100),
       BoundPod(PodSpec{.name = "b", .memory_mib = 7000}, Dialect::kHami, kNode,
                {ShareOf("GPU-0", 7000, 0)}, 200)});
  absl::StatusOr<ContainerGrant> guess = matcher_->Allocate({"GPU-0::0"});
  ASSERT_TRUE(guess.ok());
  EXPECT_EQ(EnvOf(*guess)["CUDA_DEVICE_MEMORY_LIMIT_0"], "1000m");
  EXPECT_EQ(matcher_->stats().confusable, 1);
  // Kubelet was admitting b: its container must not start with a's limits.
  WriteCheckpoint({{"uid-b", {"GPU-0::0"}}});
  absl::Status prestart = matcher_->PreStart({"GPU-0::0"});
  EXPECT_EQ(prestart.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(prestart.message(), HasSubstr("uid-a"));
  EXPECT_THAT(prestart.message(), HasSubstr("uid-b"));
  // The right guess passes.
  WriteCheckpoint({{"uid-a", {"GPU-0::0"}}});
  EXPECT_TRUE(matcher_->PreStart({"GPU-0::0"}).ok());
}

TEST_F(MatcherTest, FinishedDeletedAndForeignPodsAreNotServed) {
  nlohmann::json done = BoundPod(PodSpec{.name = "done"}, Dialect::kHami, kNode,
                                 {ShareOf("GPU-0", 1000, 0)});
  done["status"]["phase"] = "Succeeded";
  nlohmann::json elsewhere =
      BoundPod(PodSpec{.name = "elsewhere"}, Dialect::kHami, "node-b",
               {ShareOf("GPU-1", 1000, 0)});
  nlohmann::json failed = BoundPod(PodSpec{.name = "failed"}, Dialect::kHami,
                                   kNode, {ShareOf("GPU-1", 1000, 0)});
  failed["metadata"]["annotations"][keys::kHamiBindPhase] = "failed";
  matcher_->ReplacePods({done, elsewhere, failed});
  EXPECT_FALSE(matcher_->Allocate({"GPU-0::0"}).ok());
  EXPECT_FALSE(matcher_->Allocate({"GPU-1::0"}).ok());

  nlohmann::json live = BoundPod(PodSpec{.name = "live"}, Dialect::kHami, kNode,
                                 {ShareOf("GPU-1", 1000, 0)});
  matcher_->ApplyPod("ADDED", live);
  matcher_->ApplyPod("DELETED", live);
  EXPECT_FALSE(matcher_->Allocate({"GPU-1::0"}).ok());
}

TEST_F(MatcherTest, BadDeviceIdsAreRefusedByName) {
  absl::StatusOr<ContainerGrant> grant = matcher_->Allocate({"nonsense"});
  EXPECT_EQ(grant.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(grant.status().message(), HasSubstr("\"nonsense\""));
}

TEST_F(MatcherTest, MpsGpusGetMpsEdits) {
  std::vector<Gpu> gpus(1);
  gpus[0].uuid = "GPU-0";
  gpus[0].mode = mps::kMode;
  matcher_->SetGpus(gpus);
  matcher_->ReplacePods(
      {BoundPod(PodSpec{.name = "m", .cores = 25}, Dialect::kHami, kNode,
                {ShareOf("GPU-0", 4000, 25)})});
  absl::StatusOr<ContainerGrant> grant = matcher_->Allocate({"GPU-0::0"});
  ASSERT_TRUE(grant.ok()) << grant.status();
  EXPECT_EQ(EnvOf(*grant)["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"], "25");
  EXPECT_EQ(EnvOf(*grant)["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"], "0=4000M");
}

}  // namespace
}  // namespace deviceshare::agent
