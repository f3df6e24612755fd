// End to end, through the real processes: `deviceshare-scheduler serve`
// signs the allocation records it writes, and the node agent (on fake
// NVML, kubelet played by TestKubelet) serves a container only when its
// pod's record carries a valid signature. Unsigned, forged, replayed and
// tampered records are refused with a reason and an Event; keys rotate.
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/trust/record_signature.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "testing/agent_pods.h"
#include "testing/agent_rig.h"
#include "testing/kube_objects.h"
#include "testing/server_process.h"
#include "testing/temp_folder.h"
#include "testing/wait_for.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::AgentRig;
using ::deviceshare::testing::BoundPod;
using ::deviceshare::testing::HamiPodObject;
using ::deviceshare::testing::PodSpec;
using ::deviceshare::testing::SchedulerProcess;
using ::deviceshare::testing::ShareOf;
using ::deviceshare::testing::TempFolder;
using ::deviceshare::testing::WaitFor;
using ::testing::HasSubstr;
using json = nlohmann::json;

constexpr char kNode[] = "gpu-node";

std::string KeyLine(const std::string& id, char fill) {
  return id + ": " + absl::Base64Escape(std::string(32, fill)) + "\n";
}

class SignedRecordsE2eTest : public ::testing::Test {
 protected:
  // The agent checks records against `agent_keys`; more flags after.
  void StartAgent(const std::string& agent_keys,
                  std::vector<std::string> more = {}) {
    const std::string path = temp_.File("agent-keys");
    std::ofstream(path) << agent_keys;
    std::vector<std::string> args = {"--record-key-file", path};
    args.insert(args.end(), more.begin(), more.end());
    absl::StatusOr<std::unique_ptr<AgentRig>> rig =
        AgentRig::Create({.node = kNode, .gpus = 2, .extra_args = args});
    ASSERT_TRUE(rig.ok()) << rig.status();
    rig_ = *std::move(rig);
    ASSERT_TRUE(rig_->StartAgent().ok()) << rig_->Log();
    ASSERT_TRUE(rig_->AllHealthy()) << rig_->Log();
  }

  // (Re)starts serve signing with `serve_keys`.
  void StartScheduler(const std::string& serve_keys) {
    scheduler_.reset();
    const std::string path = temp_.File("serve-keys");
    std::ofstream(path, std::ios::trunc) << serve_keys;
    scheduler_ = std::make_unique<SchedulerProcess>(
        DEVICESHARE_SCHEDULER_BIN,
        std::vector<std::string>{
            "--kubeconfig", rig_->api().WriteKubeconfig(temp_.path()),
            "--address", "127.0.0.1:0", "--record-key-file", path,
            "--in-flight-timeout", "0s"});
    ASSERT_TRUE(scheduler_->Start().ok()) << scheduler_->Log();
    absl::StatusOr<std::unique_ptr<httplib::Client>> client =
        testing::ReadyClient(*scheduler_);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
    // The agent's registration reached serve's watch.
    ASSERT_TRUE(WaitFor([&] {
      json args = {{"Pod", HamiPodObject({.name = "probe", .memory_mib = 10})},
                   {"NodeNames", {kNode}}};
      auto answer = client_->Post("/filter", args.dump(), "application/json");
      return answer && json::parse(answer->body, nullptr, false)
                               .value("NodeNames", json::array())
                               .size() == 1;
    })) << scheduler_->Log();
  }

  // A pod of 1 GPU scheduled through serve's filter and bind.
  void Schedule(const std::string& name, int64_t memory_mib) {
    rig_->api().UpsertPod(
        HamiPodObject({.name = name, .memory_mib = memory_mib, .cores = 10}));
    const json pod = *rig_->api().GetPod("default", name);
    auto filtered = client_->Post(
        "/filter", json{{"Pod", pod}, {"NodeNames", {kNode}}}.dump(),
        "application/json");
    ASSERT_TRUE(filtered);
    ASSERT_THAT(filtered->body, HasSubstr(kNode));
    auto bound = client_->Post("/bind",
                               json{{"PodName", name},
                                    {"PodNamespace", "default"},
                                    {"PodUID", pod["metadata"]["uid"]},
                                    {"Node", kNode}}
                                   .dump(),
                               "application/json");
    ASSERT_TRUE(bound);
    ASSERT_EQ(json::parse(bound->body).value("Error", "?"), "")
        << bound->body << scheduler_->Log();
  }

  json Annotations(const std::string& name) {
    return (*rig_->api().GetPod("default", name))["metadata"]["annotations"];
  }

  // Kubelet admits the pod's one-GPU container "main".
  absl::StatusOr<testing::AdmittedContainer> Admit(const std::string& name) {
    const std::string uid =
        (*rig_->api().GetPod("default", name))["metadata"]["uid"];
    return rig_->kubelet().AdmitContainer(uid, "main", AgentRig::kResource, 1);
  }

  // A pod bound to the node with a hand-made record on GPU 1 (no scheduler
  // signed it), with `annotations` added.
  void PlantPod(const std::string& name, const json& annotations) {
    json pod =
        BoundPod(PodSpec{.name = name, .gpus = 1, .memory_mib = 2000},
                 Dialect::kHami, kNode, {ShareOf(AgentRig::Uuid(1), 2000, 0)});
    for (const auto& [key, value] : annotations.items()) {
      pod["metadata"]["annotations"][key] = value;
    }
    rig_->api().UpsertPod(pod);
  }

  bool EventFor(const std::string& name, const std::string& needle) {
    for (const json& event : rig_->api().Events()) {
      if (event["involvedObject"].value("name", "") == name &&
          event.value("reason", "") == "AllocationRecordRefused" &&
          absl::StrContains(event.value("message", ""), needle)) {
        return true;
      }
    }
    return false;
  }

  TempFolder temp_;
  std::unique_ptr<AgentRig> rig_;
  std::unique_ptr<SchedulerProcess> scheduler_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(SignedRecordsE2eTest, OnlySignedRecordsAreServed) {
  ASSERT_NO_FATAL_FAILURE(
      StartAgent(KeyLine("k1", 'a'), {"--metrics-address", "127.0.0.1:0"}));
  ASSERT_NO_FATAL_FAILURE(StartScheduler(KeyLine("k1", 'a')));

  // Valid: scheduled and signed by serve, served by the agent.
  ASSERT_NO_FATAL_FAILURE(Schedule("valid", 3000));
  const json valid = Annotations("valid");
  ASSERT_THAT(valid.value(trust::kRecordSignature, ""),
              ::testing::StartsWith("v1.k1."));
  absl::SleepFor(absl::Milliseconds(300));  // the agent's watch
  absl::StatusOr<testing::AdmittedContainer> admitted = Admit("valid");
  ASSERT_TRUE(admitted.ok()) << admitted.status() << rig_->Log();
  EXPECT_EQ(admitted->envs.at("CUDA_DEVICE_MEMORY_LIMIT_0"), "3000m");

  // Each refused pod alone on the node, so that the refusal kubelet gets
  // can only be about it.
  const auto expect_refused = [&](const std::string& pod,
                                  const std::string& verdict) {
    absl::SleepFor(absl::Milliseconds(300));  // the agent's watch
    absl::StatusOr<testing::AdmittedContainer> refused = Admit(pod);
    ASSERT_FALSE(refused.ok()) << pod;
    EXPECT_THAT(refused.status().message(),
                HasSubstr(absl::StrCat("pod default/", pod)))
        << pod;
    EXPECT_THAT(refused.status().message(), HasSubstr(verdict)) << pod;
    EXPECT_TRUE(WaitFor([&] { return EventFor(pod, verdict); }))
        << pod << " has no AllocationRecordRefused event";
    rig_->api().DeletePod("default", pod);
  };
  // Unsigned (written by hand, or by another scheduler).
  PlantPod("unsigned", json::object());
  expect_refused("unsigned", "is unsigned");
  // Forged: a signature made up.
  PlantPod("forged",
           {{trust::kRecordSignature, "v1.k1.AAAAAAAAAAAAAAAAAAAAAA"}});
  expect_refused("forged", "is forged");
  // Replayed: another pod's valid record and signature, copied whole.
  PlantPod("replayed", valid);
  rig_->api().UpdatePod("default", "replayed", [](json& pod) {
    pod["metadata"]["annotations"][keys::kHamiBindPhase] = "allocating";
  });
  expect_refused("replayed", "is forged");
  // Tampered: signed by serve, then its memory raised by hand.
  ASSERT_NO_FATAL_FAILURE(Schedule("tampered", 1000));
  rig_->api().UpdatePod("default", "tampered", [](json& pod) {
    json& annotations = pod["metadata"]["annotations"];
    for (const char* key : {keys::kHamiAllocated, keys::kHamiToAllocate}) {
      annotations[key] = absl::StrReplaceAll(
          annotations[key].get<std::string>(), {{",1000,", ",60000,"}});
    }
  });
  expect_refused("tampered", "is forged");

  // The agent counts the refusals by verdict.
  std::smatch port;
  const std::string log = rig_->Log();
  ASSERT_TRUE(std::regex_search(
      log, port, std::regex("metrics serving address=[^ ]*:([0-9]+)")));
  httplib::Client metrics("127.0.0.1", std::stoi(port[1].str()));
  auto scraped = metrics.Get("/metrics");
  ASSERT_TRUE(scraped);
  EXPECT_THAT(scraped->body,
              ::testing::ContainsRegex(
                  "deviceshare_agent_refusals_total\\{[^}]*reason=\"forged_"
                  "record\"[^}]*\\} 3"));
  EXPECT_THAT(scraped->body,
              ::testing::ContainsRegex(
                  "deviceshare_agent_refusals_total\\{[^}]*reason=\"unsigned_"
                  "record\"[^}]*\\} 1"));
}

TEST_F(SignedRecordsE2eTest, RotatedKeysServeOldAndNewSignatures) {
  // The agent already knows the new key; serve signs with the old one,
  // then, restarted with the rotated file, with the new one.
  ASSERT_NO_FATAL_FAILURE(
      StartAgent(KeyLine("2026-11", 'n') + KeyLine("2026-05", 'o')));
  ASSERT_NO_FATAL_FAILURE(StartScheduler(KeyLine("2026-05", 'o')));
  ASSERT_NO_FATAL_FAILURE(Schedule("before", 1000));
  ASSERT_NO_FATAL_FAILURE(
      StartScheduler(KeyLine("2026-11", 'n') + KeyLine("2026-05", 'o')));
  ASSERT_NO_FATAL_FAILURE(Schedule("after", 1000));
  EXPECT_THAT(Annotations("before").value(trust::kRecordSignature, ""),
              ::testing::StartsWith("v1.2026-05."));
  EXPECT_THAT(Annotations("after").value(trust::kRecordSignature, ""),
              ::testing::StartsWith("v1.2026-11."));
  absl::SleepFor(absl::Milliseconds(300));
  for (const char* pod : {"before", "after"}) {
    absl::StatusOr<testing::AdmittedContainer> admitted = Admit(pod);
    EXPECT_TRUE(admitted.ok()) << pod << ": " << admitted.status();
  }
}

TEST_F(SignedRecordsE2eTest, AcceptUnsignedServesUnsignedButNeverForged) {
  ASSERT_NO_FATAL_FAILURE(
      StartAgent(KeyLine("k1", 'a'), {"--accept-unsigned-records"}));
  PlantPod("unsigned", json::object());
  absl::SleepFor(absl::Milliseconds(300));
  absl::StatusOr<testing::AdmittedContainer> served = Admit("unsigned");
  ASSERT_TRUE(served.ok()) << served.status() << rig_->Log();
  PlantPod("forged",
           {{trust::kRecordSignature, "v1.k1.AAAAAAAAAAAAAAAAAAAAAA"}});
  absl::SleepFor(absl::Milliseconds(300));
  absl::StatusOr<testing::AdmittedContainer> refused = Admit("forged");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("is forged"));
  EXPECT_THAT(rig_->Log(), HasSubstr("--accept-unsigned-records"));
}

}  // namespace
}  // namespace deviceshare
