// End to end: the real `deviceshare-scheduler serve` process against an
// in-memory API server (testing/fake_api_server.h), called over HTTP the
// way kube-scheduler calls an extender.
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "deviceshare/codec/annotation_keys.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "testing/fake_api_server.h"
#include "testing/kube_objects.h"
#include "testing/server_process.h"
#include "testing/test_pki.h"
#include "testing/wait_for.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::FakeApiServer;
using ::deviceshare::testing::HamiNodeObject;
using ::deviceshare::testing::HamiPodObject;
using ::deviceshare::testing::PodSpec;
using ::deviceshare::testing::ReadyClient;
using ::deviceshare::testing::SchedulerProcess;
using ::deviceshare::testing::VolcanoNodeObject;
using ::deviceshare::testing::VolcanoPodObject;
using ::deviceshare::testing::WaitFor;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class ExtenderE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           absl::StrCat(
               "deviceshare-e2e-", getpid(), "-",
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    kubeconfig_ = api_.WriteKubeconfig(dir_.string());
  }

  void TearDown() override {
    scheduler_.reset();
    std::filesystem::remove_all(dir_);
  }

  void StartScheduler(std::vector<std::string> extra_flags = {}) {
    std::vector<std::string> flags = {"--kubeconfig", kubeconfig_, "--address",
                                      "127.0.0.1:0"};
    flags.insert(flags.end(), extra_flags.begin(), extra_flags.end());
    scheduler_ = std::make_unique<SchedulerProcess>(DEVICESHARE_SCHEDULER_BIN,
                                                    std::move(flags));
    ASSERT_TRUE(scheduler_->Start().ok()) << scheduler_->Log();
    absl::StatusOr<std::unique_ptr<httplib::Client>> client =
        ReadyClient(*scheduler_);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }

  nlohmann::json Post(const std::string& verb, const nlohmann::json& body,
                      int want_status = 200) {
    auto result = client_->Post(verb, body.dump(), "application/json");
    EXPECT_TRUE(result) << verb << ": no answer; log:\n" << scheduler_->Log();
    if (!result) return nullptr;
    EXPECT_EQ(result->status, want_status) << result->body;
    return nlohmann::json::parse(result->body, nullptr, false);
  }

  nlohmann::json Args(const std::string& pod,
                      const std::vector<std::string>& nodes) {
    return {{"Pod", *api_.GetPod("default", pod)}, {"NodeNames", nodes}};
  }

  // Filter, prioritize, then bind to the node kube-scheduler would pick
  // (the highest priority). Returns the bind error, or the filter's when
  // nothing fits.
  std::string Schedule(const std::string& pod,
                       const std::vector<std::string>& nodes) {
    nlohmann::json filtered = Post("/filter", Args(pod, nodes));
    if (!filtered.is_object()) return "no filter answer";
    if (!filtered["Error"].get<std::string>().empty()) {
      return filtered["Error"];
    }
    std::vector<std::string> passing = filtered["NodeNames"];
    if (passing.empty()) {
      std::string reasons;
      for (auto& [node, reason] : filtered["FailedNodes"].items()) {
        absl::StrAppend(&reasons, node, ": ", reason.get<std::string>(), "; ");
      }
      for (auto& [node, reason] :
           filtered["FailedAndUnresolvableNodes"].items()) {
        absl::StrAppend(&reasons, node, ": ", reason.get<std::string>(), "; ");
      }
      return reasons.empty() ? "no node" : reasons;
    }
    nlohmann::json priorities = Post("/prioritize", Args(pod, passing));
    std::string best;
    int64_t best_score = -1;
    for (const nlohmann::json& entry : priorities) {
      if (entry["Score"].get<int64_t>() > best_score) {
        best_score = entry["Score"];
        best = entry["Host"];
      }
    }
    nlohmann::json pod_object = *api_.GetPod("default", pod);
    nlohmann::json bound =
        Post("/bind", {{"PodName", pod},
                       {"PodNamespace", "default"},
                       {"PodUID", pod_object["metadata"]["uid"]},
                       {"Node", best}});
    return bound.is_object() ? bound["Error"].get<std::string>()
                             : "no bind answer";
  }

  nlohmann::json Annotations(const std::string& pod) {
    return (*api_.GetPod("default", pod))["metadata"]["annotations"];
  }

  FakeApiServer api_;
  std::filesystem::path dir_;
  std::string kubeconfig_;
  std::unique_ptr<SchedulerProcess> scheduler_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(ExtenderE2eTest, BindWritesTheDialectsRecordsAndTheBinding) {
  api_.UpsertNode(HamiNodeObject({.name = "hami-node", .gpus = 2}));
  api_.UpsertNode(VolcanoNodeObject({.name = "volcano-node", .gpus = 2}));
  api_.UpsertPod(HamiPodObject({.name = "h", .memory_mib = 3000, .cores = 30}));
  api_.UpsertPod(
      VolcanoPodObject({.name = "v", .memory_mib = 2000, .cores = 20}));
  StartScheduler();

  ASSERT_EQ(Schedule("h", {"hami-node"}), "");
  nlohmann::json hami = Annotations("h");
  EXPECT_THAT(hami[keys::kHamiAllocated].get<std::string>(),
              ::testing::MatchesRegex("GPU-hami-node-[01],NVIDIA,3000,30:;"));
  EXPECT_EQ(hami[keys::kHamiToAllocate], hami[keys::kHamiAllocated]);
  EXPECT_EQ(hami[keys::kHamiNode], "hami-node");
  EXPECT_EQ(hami[keys::kHamiBindPhase], "allocating");
  EXPECT_TRUE(hami.contains(keys::kHamiTime));
  EXPECT_TRUE(hami.contains(keys::kHamiBindTime));
  EXPECT_EQ((*api_.GetPod("default", "h"))["spec"]["nodeName"], "hami-node");

  ASSERT_EQ(Schedule("v", {"volcano-node"}), "");
  nlohmann::json volcano = Annotations("v");
  EXPECT_THAT(volcano[keys::kVolcanoAllocation].get<std::string>(),
              ::testing::MatchesRegex("GPU-volcano-node-[01],NVIDIA,2000,20:"));
  EXPECT_EQ(volcano[keys::kVolcanoNode], "volcano-node");
  EXPECT_EQ(volcano[keys::kVolcanoBindPhase], "allocating");
  EXPECT_FALSE(volcano.contains(keys::kHamiAllocated));

  std::vector<nlohmann::json> bindings = api_.Bindings();
  ASSERT_EQ(bindings.size(), 2u);
  EXPECT_EQ(bindings[0]["target"]["name"], "hami-node");
  EXPECT_EQ(bindings[1]["target"]["name"], "volcano-node");
}

TEST_F(ExtenderE2eTest, AFailedBindingIsRolledBack) {
  api_.UpsertNode(
      HamiNodeObject({.name = "n", .gpus = 1, .memory_mib = 10000}));
  api_.UpsertPod(HamiPodObject({.name = "p", .memory_mib = 9000}));
  StartScheduler();
  api_.FailNextBindings(1, 500);
  EXPECT_THAT(Schedule("p", {"n"}), HasSubstr("Binding"));
  nlohmann::json annotations = Annotations("p");
  EXPECT_FALSE(annotations.contains(keys::kHamiAllocated));
  EXPECT_FALSE(annotations.contains(keys::kHamiNode));
  EXPECT_EQ(annotations[keys::kHamiBindPhase], "failed");
  EXPECT_FALSE((*api_.GetPod("default", "p"))["spec"].contains("nodeName"));
  ASSERT_TRUE(WaitFor([&] {
    for (const nlohmann::json& event : api_.Events()) {
      if (event["reason"] == "BindingFailed") return true;
    }
    return false;
  }));
  // The room was given back: kube-scheduler's retry succeeds.
  EXPECT_EQ(Schedule("p", {"n"}), "");
  EXPECT_EQ((*api_.GetPod("default", "p"))["spec"]["nodeName"], "n");
}

// A bind names its pod by UID: a wrong one (a client guessing, or a pod
// deleted and created again under the same name) binds nothing, with or
// without a reservation from /filter.
TEST_F(ExtenderE2eTest, ABindWithAnotherPodsUidBindsNothing) {
  api_.UpsertNode(HamiNodeObject({.name = "n", .gpus = 1}));
  api_.UpsertPod(HamiPodObject({.name = "p", .memory_mib = 3000}));
  StartScheduler();
  for (bool filtered : {false, true}) {
    SCOPED_TRACE(filtered ? "after /filter" : "without /filter");
    if (filtered) Post("/filter", Args("p", {"n"}));
    nlohmann::json bound = Post("/bind", {{"PodName", "p"},
                                          {"PodNamespace", "default"},
                                          {"PodUID", "not-the-uid"},
                                          {"Node", "n"}});
    ASSERT_TRUE(bound.is_object());
    EXPECT_THAT(bound["Error"].get<std::string>(),
                AllOf(HasSubstr("not-the-uid"), HasSubstr("is not the pod's")));
    EXPECT_FALSE((*api_.GetPod("default", "p"))["spec"].contains("nodeName"));
    EXPECT_TRUE(api_.Bindings().empty());
  }
  EXPECT_EQ(Schedule("p", {"n"}), "");
}

// A name with a newline cannot forge a log line: control characters in
// logged names and messages are escaped.
TEST_F(ExtenderE2eTest, ANewlineInANameCannotForgeALogLine) {
  api_.UpsertNode(HamiNodeObject({.name = "n", .gpus = 1}));
  StartScheduler();
  nlohmann::json bound =
      Post("/bind", {{"PodName", "ghost\n[error] forged line"},
                     {"PodNamespace", "default"},
                     {"PodUID", "u"},
                     {"Node", "n"}});
  ASSERT_TRUE(bound.is_object());
  EXPECT_FALSE(bound["Error"].get<std::string>().empty());
  // The line is written after the answer: wait for it.
  EXPECT_TRUE(WaitFor([&] {
    return absl::StrContains(scheduler_->Log(), "ghost\\n[error] forged line");
  })) << scheduler_->Log();
  const std::string log = scheduler_->Log();
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    EXPECT_FALSE(absl::StartsWith(line, "[error] forged")) << line;
  }
}

// Losing the API server is logged when it starts and when it ends, and
// /readyz says which watch is failing meanwhile (the view may be stale).
TEST_F(ExtenderE2eTest, AFailingWatchIsLoggedAndShownInReadyz) {
  api_.UpsertNode(HamiNodeObject({.name = "n", .gpus = 1}));
  StartScheduler();
  api_.FailNextListsAndWatches(40, 503);
  api_.CloseWatches();
  bool noted = false;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto ready = client_->Get("/readyz");
        noted = noted || (ready && ready->status == 200 &&
                          absl::StartsWith(ready->body, "ok; the watch of "));
        return noted && absl::StrContains(scheduler_->Log(), " failing: ");
      },
      absl::Seconds(30)))
      << scheduler_->Log();
  ASSERT_TRUE(WaitFor(
      [&] { return absl::StrContains(scheduler_->Log(), " recovered"); },
      absl::Seconds(60)))
      << scheduler_->Log();
  std::string body;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto ready = client_->Get("/readyz");
        body = ready ? ready->body : "no answer";
        return ready && ready->status == 200 && ready->body == "ok\n";
      },
      absl::Seconds(60)))
      << body;
}

// A namespace's GPU ResourceQuota, read through the watch, keeps a pod
// past it pending with the figures.
TEST_F(ExtenderE2eTest, ANamespaceGpuQuotaFromTheApiHolds) {
  api_.UpsertNode(HamiNodeObject({.name = "n", .gpus = 1}));
  api_.UpsertPod(HamiPodObject({.name = "small", .memory_mib = 1000}));
  api_.UpsertPod(HamiPodObject({.name = "big", .memory_mib = 3000}));
  api_.UpsertResourceQuota(nlohmann::json::parse(R"({
    "apiVersion": "v1", "kind": "ResourceQuota",
    "metadata": {"name": "gpu", "namespace": "default"},
    "spec": {"hard": {"limits.nvidia.com/gpumem": "2000"}}})"));
  StartScheduler();
  EXPECT_EQ(Schedule("small", {"n"}), "");
  EXPECT_THAT(Schedule("big", {"n"}), HasSubstr("QuotaExceeded"));
}

TEST_F(ExtenderE2eTest, ARestartMidStreamLosesNothing) {
  api_.UpsertNode(
      HamiNodeObject({.name = "n", .gpus = 1, .memory_mib = 10000}));
  for (const char* name : {"a", "b", "c", "d"}) {
    api_.UpsertPod(HamiPodObject({.name = name, .memory_mib = 4000}));
  }
  StartScheduler();
  ASSERT_EQ(Schedule("a", {"n"}), "");
  ASSERT_EQ(Schedule("b", {"n"}), "");
  EXPECT_THAT(Schedule("c", {"n"}), HasSubstr("InsufficientMemory"));

  // Killed outright, watches open; the cluster moves on meanwhile.
  scheduler_->Kill(SIGKILL);
  api_.DeletePod("default", "a");
  StartScheduler();
  // b still holds its 4000 MiB, a's were freed: c fits, d then does not.
  EXPECT_EQ(Schedule("c", {"n"}), "");
  EXPECT_THAT(Schedule("d", {"n"}), HasSubstr("InsufficientMemory"));

  // Graceful stop, and a relist forced by a compacted history.
  EXPECT_EQ(WEXITSTATUS(scheduler_->Kill(SIGTERM)), 0);
  api_.SetPodPhase("default", "b", "Succeeded");
  StartScheduler();
  api_.CompactHistory();
  api_.CloseWatches();
  api_.UpsertNode(HamiNodeObject({.name = "m", .gpus = 1, .memory_mib = 5000}));
  ASSERT_TRUE(WaitFor([&] {
    auto result = client_->Get("/metrics");
    return result && result->body.find("node=\"m\"") != std::string::npos;
  })) << scheduler_->Log();
  EXPECT_EQ(Schedule("d", {"n"}), "");  // b finished: room on n again
}

TEST_F(ExtenderE2eTest, BadRequestsGetAClearAnswer) {
  api_.UpsertNode(HamiNodeObject({.name = "n"}));
  StartScheduler();
  auto not_json = client_->Post("/filter", "{\"Pod\": ", "application/json");
  ASSERT_TRUE(not_json);
  EXPECT_EQ(not_json->status, 400);
  EXPECT_THAT(not_json->body, HasSubstr("ExtenderArgs"));
  auto no_pod =
      client_->Post("/filter", R"({"NodeNames":["n"]})", "application/json");
  ASSERT_TRUE(no_pod);
  EXPECT_EQ(no_pod->status, 400);
  EXPECT_THAT(no_pod->body, HasSubstr("Pod"));
  auto bad_bind =
      client_->Post("/bind", R"({"PodName":"p","Node":7})", "application/json");
  ASSERT_TRUE(bad_bind);
  EXPECT_EQ(bad_bind->status, 400);
  auto huge =
      client_->Post("/filter", std::string(17 << 20, ' '), "application/json");
  ASSERT_TRUE(huge);
  EXPECT_EQ(huge->status, 413);
  // Still serving.
  auto health = client_->Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

TEST_F(ExtenderE2eTest, MetricsCoverVerbsReasonsAndGpus) {
  api_.UpsertNode(
      HamiNodeObject({.name = "n", .gpus = 1, .memory_mib = 10000}));
  api_.UpsertPod(HamiPodObject({.name = "p", .memory_mib = 6000}));
  api_.UpsertPod(HamiPodObject({.name = "q", .memory_mib = 6000}));
  StartScheduler();
  ASSERT_EQ(Schedule("p", {"n"}), "");
  EXPECT_THAT(Schedule("q", {"n"}), HasSubstr("InsufficientMemory"));
  auto metrics = client_->Get("/metrics");
  ASSERT_TRUE(metrics);
  const std::string& text = metrics->body;
  EXPECT_THAT(text, HasSubstr("deviceshare_extender_request_seconds_bucket{"
                              "verb=\"filter\""));
  EXPECT_THAT(text, HasSubstr("deviceshare_extender_request_seconds_count{"
                              "verb=\"bind\"} 1"));
  EXPECT_THAT(text, HasSubstr("deviceshare_extender_rejections_total{reason="
                              "\"InsufficientMemory\"} 1"));
  EXPECT_THAT(text, HasSubstr("deviceshare_gpu_memory_allocated_mib{node="
                              "\"n\",gpu=\"GPU-n-0\""));
  EXPECT_THAT(text, HasSubstr("deviceshare_extender_reservations_in_flight 0"));
  EXPECT_THAT(text, HasSubstr("deviceshare_extender_binds_total 1"));
}

TEST_F(ExtenderE2eTest, ServesHttpsWithTheGivenCertificate) {
  api_.UpsertNode(HamiNodeObject({.name = "n"}));
  const ::deviceshare::testing::TestPki pki =
      ::deviceshare::testing::MakeTestPki("deviceshare-e2e-ca");
  const std::string cert = (dir_ / "tls.crt").string();
  const std::string key = (dir_ / "tls.key").string();
  for (const auto& [path, text] : {std::pair{cert, pki.server.cert_pem},
                                   std::pair{key, pki.server.key_pem}}) {
    std::ofstream(path) << text;
  }
  scheduler_ = std::make_unique<SchedulerProcess>(
      DEVICESHARE_SCHEDULER_BIN,
      std::vector<std::string>{"--kubeconfig", kubeconfig_, "--address",
                               "127.0.0.1:0", "--tls-cert", cert, "--tls-key",
                               key});
  ASSERT_TRUE(scheduler_->Start().ok()) << scheduler_->Log();
  httplib::SSLClient tls("127.0.0.1", scheduler_->port());
  tls.set_ca_cert_store(::deviceshare::testing::NewStoreWith(pki.ca));
  tls.enable_server_certificate_verification(true);
  ASSERT_TRUE(WaitFor([&] {
    auto ready = tls.Get("/readyz");
    return ready && ready->status == 200;
  })) << scheduler_->Log();
  // Plain HTTP gets no answer from a TLS port.
  httplib::Client plain("127.0.0.1", scheduler_->port());
  plain.set_read_timeout(2, 0);
  auto answer = plain.Get("/healthz");
  EXPECT_TRUE(!answer || answer->status != 200);
  // A key that is not one is refused at start, naming the flags.
  SchedulerProcess broken(
      DEVICESHARE_SCHEDULER_BIN,
      {"--kubeconfig", kubeconfig_, "--address", "127.0.0.1:0", "--tls-cert",
       cert, "--tls-key", cert});
  EXPECT_FALSE(broken.Start(absl::Seconds(3)).ok());
  EXPECT_THAT(broken.Log(), HasSubstr("--tls-cert"));
}

// Acceptance: 200 pods each asking a tenth of a GPU, filtered and bound in
// parallel over HTTP against one 8-GPU node.
TEST_F(ExtenderE2eTest, TwoHundredPodsInParallelNeverOvercommit) {
  api_.UpsertNode(
      HamiNodeObject({.name = "n", .gpus = 8, .memory_mib = 81920}));
  constexpr int kPods = 200;
  for (int i = 0; i < kPods; ++i) {
    api_.UpsertPod(HamiPodObject(
        {.name = absl::StrCat("p", i), .memory_mib = 8192, .cores = 10}));
  }
  // No node agent reports back here: pods on different GPUs would wait for
  // each other (the in-flight rule, tested in extender_inflight_test.cc).
  StartScheduler({"--in-flight-timeout", "0s"});
  std::atomic<int> bound{0};
  std::atomic<int> explained{0};
  absl::Mutex mu;
  std::vector<std::string> unexplained;  // what the test saw instead
  auto note = [&](std::string what) {
    absl::MutexLock lock(&mu);
    unexplained.push_back(std::move(what));
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      httplib::Client client("127.0.0.1", scheduler_->port());
      client.set_read_timeout(20, 0);
      for (int i = t; i < kPods; i += 16) {
        const std::string name = absl::StrCat("p", i);
        nlohmann::json pod = *api_.GetPod("default", name);
        auto filtered = client.Post(
            "/filter",
            nlohmann::json({{"Pod", pod}, {"NodeNames", {"n"}}}).dump(),
            "application/json");
        if (!filtered || filtered->status != 200) {
          note(absl::StrCat(name, ": filter HTTP ",
                            filtered ? filtered->status : -1));
          continue;
        }
        nlohmann::json result = nlohmann::json::parse(filtered->body);
        if (result["NodeNames"].empty()) {
          if (result["FailedNodes"].contains("n")) {
            ++explained;
          } else {
            note(absl::StrCat(name, ": filter ", filtered->body));
          }
          continue;
        }
        auto bind =
            client.Post("/bind",
                        nlohmann::json({{"PodName", name},
                                        {"PodNamespace", "default"},
                                        {"PodUID", pod["metadata"]["uid"]},
                                        {"Node", "n"}})
                            .dump(),
                        "application/json");
        if (!bind) {
          note(absl::StrCat(name, ": bind: no answer"));
          continue;
        }
        const std::string error = nlohmann::json::parse(bind->body)["Error"];
        if (error.empty()) {
          ++bound;
        } else if (error.find("does not fit") != std::string::npos) {
          ++explained;  // the room went to another pod meanwhile
        } else {
          note(absl::StrCat(name, ": bind: ", error));
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(bound.load(), 80);
  EXPECT_EQ(explained.load(), 120);  // every other pod got a reason
  EXPECT_THAT(unexplained, IsEmpty());
  EXPECT_EQ(api_.Bindings().size(), 80u);
  // What the API server holds: per GPU at most 10 tenants, 81920 MiB and
  // 100% of the cores.
  std::map<std::string, int64_t> memory, cores, tenants;
  for (int i = 0; i < kPods; ++i) {
    nlohmann::json pod = *api_.GetPod("default", absl::StrCat("p", i));
    if (!pod["spec"].contains("nodeName")) continue;
    const std::string record =
        pod["metadata"]["annotations"][keys::kHamiAllocated];
    const std::vector<std::string> fields = absl::StrSplit(record, ',');
    ASSERT_GE(fields.size(), 4u) << record;
    memory[fields[0]] += std::stoll(fields[2]);
    cores[fields[0]] += std::stoll(fields[3]);
    ++tenants[fields[0]];
  }
  EXPECT_EQ(tenants.size(), 8u);
  for (const auto& [gpu, mib] : memory) {
    EXPECT_LE(mib, 81920) << gpu;
    EXPECT_LE(cores[gpu], 100) << gpu;
    EXPECT_LE(tenants[gpu], 10) << gpu;
  }
}

}  // namespace
}  // namespace deviceshare
