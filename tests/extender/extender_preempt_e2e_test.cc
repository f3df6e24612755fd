// End to end: a preemption through the real `deviceshare-scheduler serve`
// process against the in-memory API server (testing/fake_api_server.h).
// The test plays kube-scheduler: /filter finds no node, /preempt gets the
// candidates with kube-scheduler's victims, the victims the answer names
// are deleted, and the pod then binds. After every step no GPU holds more
// than its memory, by the records on the API server's pods and by the
// extender's own ledger (/metrics).
#include <sys/types.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "deviceshare/codec/annotation_keys.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "testing/fake_api_server.h"
#include "testing/kube_objects.h"
#include "testing/server_process.h"
#include "testing/wait_for.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::FakeApiServer;
using ::deviceshare::testing::HamiBoundPodObject;
using ::deviceshare::testing::HamiNodeObject;
using ::deviceshare::testing::HamiPodObject;
using ::deviceshare::testing::ReadyClient;
using ::deviceshare::testing::SchedulerProcess;
using ::deviceshare::testing::WaitFor;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

constexpr int64_t kGpuMemoryMib = 10000;
// Every pod the tests create.
const char* const kPods[] = {"a0", "b0", "b1", "keep", "d0", "urgent"};

nlohmann::json WithPriority(nlohmann::json pod, int32_t priority) {
  pod["spec"]["priority"] = priority;
  return pod;
}

// A pod bound on `gpu` of `node` holding `memory_mib` there.
nlohmann::json BoundPod(const std::string& name, const std::string& node,
                        int gpu, int64_t memory_mib, int32_t priority) {
  return WithPriority(
      HamiBoundPodObject({.name = name, .memory_mib = memory_mib}, node, gpu),
      priority);
}

// {"Pods":[{"UID":...}],"NumPDBViolations":0}, as kube-scheduler sends it.
nlohmann::json MetaVictims(const std::vector<std::string>& uids) {
  nlohmann::json pods = nlohmann::json::array();
  for (const std::string& uid : uids) pods.push_back({{"UID", uid}});
  return {{"Pods", pods}, {"NumPDBViolations", 0}};
}

// The value of `metric` per gpu label, from a /metrics text.
std::map<std::string, int64_t> PerGpu(const std::string& text,
                                      const std::string& metric) {
  std::map<std::string, int64_t> values;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(line, metric + "{")) continue;
    const size_t gpu = line.find("gpu=\"");
    const size_t space = line.rfind(' ');
    if (gpu == absl::string_view::npos || space == absl::string_view::npos) {
      continue;
    }
    const size_t start = gpu + 5;
    const std::string uuid(line.substr(start, line.find('"', start) - start));
    double value = 0;
    if (absl::SimpleAtod(line.substr(space + 1), &value)) {
      values[uuid] = static_cast<int64_t>(value);
    }
  }
  return values;
}

class ExtenderPreemptE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           absl::StrCat("deviceshare-preempt-e2e-", getpid());
    std::filesystem::create_directories(dir_);
    kubeconfig_ = api_.WriteKubeconfig(dir_.string());
  }

  void TearDown() override {
    scheduler_.reset();
    std::filesystem::remove_all(dir_);
  }

  void StartScheduler() {
    scheduler_ = std::make_unique<SchedulerProcess>(
        DEVICESHARE_SCHEDULER_BIN,
        std::vector<std::string>{"--kubeconfig", kubeconfig_, "--address",
                                 "127.0.0.1:0"});
    ASSERT_TRUE(scheduler_->Start().ok()) << scheduler_->Log();
    absl::StatusOr<std::unique_ptr<httplib::Client>> client =
        ReadyClient(*scheduler_);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }

  nlohmann::json Post(const std::string& verb, const nlohmann::json& body) {
    auto result = client_->Post(verb, body.dump(), "application/json");
    EXPECT_TRUE(result) << verb << ": no answer; log:\n" << scheduler_->Log();
    if (!result) return nullptr;
    EXPECT_EQ(result->status, 200) << result->body;
    return nlohmann::json::parse(result->body, nullptr, false);
  }

  nlohmann::json Pod(const std::string& name) {
    return *api_.GetPod("default", name);
  }

  std::map<std::string, int64_t> Allocated() {
    auto metrics = client_->Get("/metrics");
    if (!metrics) return {};
    return PerGpu(metrics->body, "deviceshare_gpu_memory_allocated_mib");
  }

  // No GPU over its memory: by the records of the pods the API server
  // holds (what node agents would serve) and by the extender's ledger.
  void ExpectNoGpuOverCapacity(const std::string& step) {
    std::map<std::string, int64_t> recorded;
    for (const char* name : kPods) {
      std::optional<nlohmann::json> found = api_.GetPod("default", name);
      if (!found) continue;
      const nlohmann::json& pod = *found;
      const nlohmann::json& annotations = pod["metadata"]["annotations"];
      if (!pod["spec"].contains("nodeName") || !annotations.is_object() ||
          !annotations.contains(keys::kHamiAllocated)) {
        continue;
      }
      const std::string record = annotations[keys::kHamiAllocated];
      for (absl::string_view device :
           absl::StrSplit(record, absl::ByAnyChar(":;"), absl::SkipEmpty())) {
        const std::vector<std::string> fields = absl::StrSplit(device, ',');
        ASSERT_GE(fields.size(), 3u) << record;
        recorded[fields[0]] += std::stoll(fields[2]);
      }
    }
    for (const auto& [gpu, mib] : recorded) {
      EXPECT_LE(mib, kGpuMemoryMib) << step << ": records on " << gpu;
    }
    const std::map<std::string, int64_t> ledger = Allocated();
    EXPECT_EQ(ledger.size(), 3u) << step;
    for (const auto& [gpu, mib] : ledger) {
      EXPECT_LE(mib, kGpuMemoryMib) << step << ": ledger of " << gpu;
    }
  }

  FakeApiServer api_;
  std::filesystem::path dir_;
  std::string kubeconfig_;
  std::unique_ptr<SchedulerProcess> scheduler_;
  std::unique_ptr<httplib::Client> client_;
};

// Acceptance (issue 23 item 2). n1: GPU0 a0 8000 MiB; GPU1 b0 5000 + b1
// 4000. n2: GPU0 keep 9000 (above the pod's priority) + d0 500. The pod
// asks 9000 MiB at priority 100. kube-scheduler's victims (b0 on n1, d0 on
// n2: lowest priority first, blind to GPUs) would free nothing it can use.
TEST_F(ExtenderPreemptE2eTest, AHighPriorityPodPreemptsTheRightPodAndBinds) {
  for (const char* node : {"n1", "n2"}) {
    api_.UpsertNode(HamiNodeObject({.name = node,
                                    .gpus = node == std::string("n1") ? 2 : 1,
                                    .memory_mib = kGpuMemoryMib}));
  }
  api_.UpsertPod(BoundPod("a0", "n1", 0, 8000, 5));
  api_.UpsertPod(BoundPod("b0", "n1", 1, 5000, 1));
  api_.UpsertPod(BoundPod("b1", "n1", 1, 4000, 1));
  api_.UpsertPod(BoundPod("keep", "n2", 0, 9000, 1000));
  api_.UpsertPod(BoundPod("d0", "n2", 0, 500, 1));
  api_.UpsertPod(
      WithPriority(HamiPodObject({.name = "urgent", .memory_mib = 9000}), 100));
  StartScheduler();
  ExpectNoGpuOverCapacity("start");

  const nlohmann::json args = {{"Pod", Pod("urgent")},
                               {"NodeNames", {"n1", "n2"}}};
  nlohmann::json filtered = Post("/filter", args);
  ASSERT_TRUE(filtered.is_object());
  EXPECT_THAT(filtered["NodeNames"], IsEmpty());
  EXPECT_TRUE(filtered["FailedNodes"].contains("n1")) << filtered;
  EXPECT_TRUE(filtered["FailedNodes"].contains("n2")) << filtered;

  nlohmann::json answer = Post(
      "/preempt",
      {{"Pod", Pod("urgent")},
       {"NodeNameToMetaVictims",
        {{"n1", MetaVictims({"uid-b0"})}, {"n2", MetaVictims({"uid-d0"})}}}});
  EXPECT_EQ(answer, nlohmann::json({{"NodeNameToMetaVictims",
                                     {{"n1", MetaVictims({"uid-a0"})}}}}));
  // The verb releases nothing: a0 still holds its GPU.
  EXPECT_EQ(Allocated()["GPU-n1-0"], 8000);
  ExpectNoGpuOverCapacity("after /preempt");

  // kube-scheduler deletes the victims the answer names.
  for (const auto& [node, victims] : answer["NodeNameToMetaVictims"].items()) {
    for (const nlohmann::json& victim : victims["Pods"]) {
      const std::string uid = victim["UID"];
      for (const char* name : kPods) {
        std::optional<nlohmann::json> pod = api_.GetPod("default", name);
        if (pod && (*pod)["metadata"]["uid"] == uid) {
          ASSERT_TRUE(api_.DeletePod("default", name));
        }
      }
    }
  }
  ASSERT_TRUE(WaitFor([&] { return Allocated()["GPU-n1-0"] == 0; }))
      << scheduler_->Log();
  ExpectNoGpuOverCapacity("after the deletion");

  // The next cycle: filter, prioritize, bind.
  filtered = Post("/filter", args);
  ASSERT_TRUE(filtered.is_object());
  EXPECT_THAT(filtered["NodeNames"], UnorderedElementsAre("n1")) << filtered;
  Post("/prioritize", {{"Pod", Pod("urgent")}, {"NodeNames", {"n1"}}});
  nlohmann::json bound = Post("/bind", {{"PodName", "urgent"},
                                        {"PodNamespace", "default"},
                                        {"PodUID", "uid-urgent"},
                                        {"Node", "n1"}});
  ASSERT_TRUE(bound.is_object());
  EXPECT_EQ(bound["Error"], "");
  EXPECT_EQ(Pod("urgent")["spec"]["nodeName"], "n1");
  EXPECT_THAT(Pod("urgent")["metadata"]["annotations"][keys::kHamiAllocated]
                  .get<std::string>(),
              HasSubstr("GPU-n1-0,NVIDIA,9000"));
  ExpectNoGpuOverCapacity("after the bind");
  EXPECT_TRUE(api_.GetPod("default", "b0").has_value());
  EXPECT_TRUE(api_.GetPod("default", "d0").has_value());
}

TEST_F(ExtenderPreemptE2eTest, BadBodiesGetA400NamingTheField) {
  api_.UpsertNode(HamiNodeObject({.name = "n"}));
  StartScheduler();
  auto bad_uid =
      client_->Post("/preempt",
                    R"({"Pod":{"metadata":{"name":"p"}},)"
                    R"("NodeNameToMetaVictims":{"n":{"Pods":[{"UID":7}]}}})",
                    "application/json");
  ASSERT_TRUE(bad_uid);
  EXPECT_EQ(bad_uid->status, 400);
  EXPECT_THAT(bad_uid->body,
              HasSubstr("ExtenderPreemptionArgs.NodeNameToMetaVictims[\"n\"]"
                        ".Pods[0].UID: 7 is not a string"));
  auto bad_priority = client_->Post(
      "/preempt",
      R"({"Pod":{"metadata":{"name":"p"},"spec":{"priority":"high"}},)"
      R"("NodeNameToMetaVictims":{}})",
      "application/json");
  ASSERT_TRUE(bad_priority);
  EXPECT_EQ(bad_priority->status, 400);
  EXPECT_THAT(bad_priority->body,
              HasSubstr("ExtenderPreemptionArgs.Pod.spec.priority: \"high\""));
  auto metrics = client_->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_THAT(metrics->body, HasSubstr("verb=\"preempt\""));
}

}  // namespace
}  // namespace deviceshare
