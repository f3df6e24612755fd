// End to end: two `deviceshare-scheduler serve --leader-elect` replicas
// against the in-memory API server's Lease. Only the leader answers; the
// leader is killed with SIGKILL in the middle of a burst of binds; the
// other takes over, and afterwards no GPU is overcommitted and every bound
// pod's record is on its node.
#include <signal.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/codec/hami_codec.h"
#include "deviceshare/k8s/pod_annotations.h"
#include "deviceshare/trust/record_signature.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "testing/fake_api_server.h"
#include "testing/kube_objects.h"
#include "testing/server_process.h"
#include "testing/temp_folder.h"
#include "testing/wait_for.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::FakeApiServer;
using ::deviceshare::testing::HamiNodeObject;
using ::deviceshare::testing::HamiPodObject;
using ::deviceshare::testing::SchedulerProcess;
using ::deviceshare::testing::TempFolder;
using ::testing::HasSubstr;
using json = nlohmann::json;

constexpr int kNodes = 4;
constexpr int kGpusPerNode = 2;
constexpr int64_t kGpuMemoryMib = 81920;
// Four pods fill a GPU (memory 80,000 of 81,920 MiB, cores 100 %): 32 fit.
constexpr int64_t kPodMemoryMib = 20000;
constexpr int kPodCores = 25;
constexpr int kPods = 40;
constexpr int kFitting = kNodes * kGpusPerNode * 4;
const absl::Duration kLeaseDuration = absl::Seconds(4);
// `k1: ` and base64 of 32 zero bytes.
constexpr char kKeyLine[] =
    "k1: AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n";
const absl::Duration kRetryPeriod = absl::Milliseconds(500);

// One replica and an HTTP client to it (no readiness wait: a follower is
// never ready).
struct Replica {
  std::unique_ptr<SchedulerProcess> process;
  std::unique_ptr<httplib::Client> client;
  std::atomic<bool> killed{false};
};

class ExtenderFailoverE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kubeconfig_ = api_.WriteKubeconfig(temp_.path());
    // Both replicas sign with one key: every record must hold it.
    keys_ = temp_.File("keys");
    std::ofstream(keys_) << kKeyLine;
    for (int n = 0; n < kNodes; ++n) {
      api_.UpsertNode(HamiNodeObject({.name = absl::StrCat("node-", n),
                                      .gpus = kGpusPerNode,
                                      .memory_mib = kGpuMemoryMib}));
      nodes_.push_back(absl::StrCat("node-", n));
    }
  }

  void Start(Replica& replica, const std::string& identity) {
    replica.process = std::make_unique<SchedulerProcess>(
        DEVICESHARE_SCHEDULER_BIN,
        std::vector<std::string>{"--kubeconfig", kubeconfig_, "--address",
                                 "127.0.0.1:0", "--in-flight-timeout", "0s",
                                 "--leader-elect", "--leader-elect-identity",
                                 identity, "--leader-elect-resource-namespace",
                                 "default", "--leader-elect-lease-duration",
                                 absl::FormatDuration(kLeaseDuration),
                                 "--leader-elect-renew-deadline", "3s",
                                 "--leader-elect-retry-period",
                                 absl::FormatDuration(kRetryPeriod),
                                 "--record-key-file", keys_});
    ASSERT_TRUE(replica.process->Start().ok()) << replica.process->Log();
    replica.client =
        std::make_unique<httplib::Client>("127.0.0.1", replica.process->port());
    replica.client->set_read_timeout(20, 0);
  }

  static int ReadyStatus(Replica& replica) {
    if (replica.killed.load()) return -1;
    auto answer = replica.client->Get("/readyz");
    return answer ? answer->status : -1;
  }

  // Waits until `replica` answers /readyz with 200; the time it took.
  static absl::StatusOr<absl::Duration> WaitReady(Replica& replica,
                                                  absl::Duration limit) {
    const absl::Time start = absl::Now();
    while (absl::Now() - start < limit) {
      if (ReadyStatus(replica) == 200) return absl::Now() - start;
      absl::SleepFor(absl::Milliseconds(20));
    }
    return absl::DeadlineExceededError("never ready");
  }

  json Args(const std::string& pod, const std::vector<std::string>& nodes) {
    return {{"Pod", *api_.GetPod("default", pod)}, {"NodeNames", nodes}};
  }

  // One scheduling cycle through `replica`, as kube-scheduler runs it:
  // "" when bound, "unschedulable" when no node fits, "retry" when the
  // replica does not lead or is gone.
  std::string Cycle(Replica& replica, const std::string& pod) {
    if (replica.killed.load()) return "retry";
    auto filtered = replica.client->Post("/filter", Args(pod, nodes_).dump(),
                                         "application/json");
    if (!filtered || filtered->status != 200) return "retry";
    json filter = json::parse(filtered->body, nullptr, false);
    const std::string error = filter.value("Error", "");
    if (!error.empty()) return absl::StrCat("retry: filter: ", error);
    std::vector<std::string> passing = filter.value("NodeNames", json::array());
    if (passing.empty()) return "unschedulable";
    auto prioritized = replica.client->Post(
        "/prioritize", Args(pod, passing).dump(), "application/json");
    if (!prioritized || prioritized->status != 200) return "retry";
    std::string best;
    int64_t best_score = -1;
    for (const json& entry : json::parse(prioritized->body, nullptr, false)) {
      if (entry["Score"].get<int64_t>() > best_score) {
        best_score = entry["Score"];
        best = entry["Host"];
      }
    }
    const json pod_object = *api_.GetPod("default", pod);
    auto bound =
        replica.client->Post("/bind",
                             json{{"PodName", pod},
                                  {"PodNamespace", "default"},
                                  {"PodUID", pod_object["metadata"]["uid"]},
                                  {"Node", best}}
                                 .dump(),
                             "application/json");
    if (!bound || bound->status != 200) return "retry";
    const std::string bind_error =
        json::parse(bound->body, nullptr, false).value("Error", "?");
    return bind_error.empty() ? "" : absl::StrCat("retry: bind: ", bind_error);
  }

  // Schedules `pod` through whichever replica leads, retrying (as the
  // scheduling queue does) until it binds or fits nowhere.
  std::string Schedule(const std::string& pod, Replica& a, Replica& b) {
    const absl::Time deadline = absl::Now() + absl::Seconds(40);
    int unschedulable = 0;
    std::string last_refusal;
    while (absl::Now() < deadline) {
      for (Replica* replica : {&a, &b}) {
        // A bind whose answer was lost with the killed leader may have
        // bound the pod; kube-scheduler learns that from its watch.
        if (!(*api_.GetPod("default", pod))["spec"]
                 .value("nodeName", "")
                 .empty()) {
          return "";
        }
        const std::string outcome = Cycle(*replica, pod);
        if (outcome.empty()) return "";
        if (outcome != "retry") last_refusal = outcome;
        // A stale reservation of the dead leader may hold room for a
        // while; only repeated answers count.
        if (outcome == "unschedulable" && ++unschedulable >= 20) {
          return outcome;
        }
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
    return absl::StrCat("timeout; last refusal: ", last_refusal);
  }

  FakeApiServer api_;
  TempFolder temp_;
  std::string kubeconfig_;
  std::string keys_;
  std::vector<std::string> nodes_;
};

// Every GPU's charge from the bound pods' records, checked against its
// capacity; every bound pod has a record on its own node, signed with the
// replicas' key.
void ExpectRecordsValidAndWithinCapacity(FakeApiServer& api, int pods) {
  absl::StatusOr<trust::RecordKeys> keys =
      trust::RecordKeys::Parse(kKeyLine, "keys");
  ASSERT_TRUE(keys.ok()) << keys.status();
  std::map<std::string, int64_t> memory;
  std::map<std::string, int64_t> cores;
  int bound = 0;
  for (int i = 0; i < pods; ++i) {
    const json pod = *api.GetPod("default", absl::StrCat("p", i));
    const std::string node = pod["spec"].value("nodeName", "");
    if (node.empty()) continue;
    ++bound;
    const json& annotations = pod["metadata"]["annotations"];
    ASSERT_TRUE(annotations.contains(keys::kHamiAllocated)) << pod.dump();
    EXPECT_EQ(annotations.value(keys::kHamiNode, ""), node) << pod.dump();
    EXPECT_EQ(
        trust::CheckRecord(*keys, PodAnnotationMap(pod),
                           pod["metadata"]["uid"].get<std::string>(), node)
            .verdict,
        trust::RecordVerdict::kValid)
        << pod.dump();
    absl::StatusOr<std::vector<std::vector<DeviceGrant>>> grants =
        DecodeHamiAllocation(
            annotations[keys::kHamiAllocated].get<std::string>());
    ASSERT_TRUE(grants.ok()) << grants.status();
    for (const auto& container : *grants) {
      for (const DeviceGrant& grant : container) {
        EXPECT_TRUE(absl::StartsWith(grant.uuid, absl::StrCat("GPU-", node)))
            << pod.dump();
        memory[grant.uuid] += grant.memory_mib;
        cores[grant.uuid] += grant.cores;
      }
    }
  }
  for (const auto& [uuid, mib] : memory) {
    EXPECT_LE(mib, kGpuMemoryMib) << uuid;
    EXPECT_LE(cores[uuid], 100) << uuid;
  }
  EXPECT_EQ(bound, kFitting);
}

TEST_F(ExtenderFailoverE2eTest, FollowerTakesOverAKilledLeaderMidBurst) {
  Replica a;
  Replica b;
  ASSERT_NO_FATAL_FAILURE(Start(a, "replica-a"));
  ASSERT_TRUE(WaitReady(a, absl::Seconds(10)).ok()) << a.process->Log();
  ASSERT_NO_FATAL_FAILURE(Start(b, "replica-b"));
  // b keeps its watches but neither is ready nor answers the verbs.
  ASSERT_TRUE(testing::WaitFor([&] {
    auto answer = b.client->Get("/readyz");
    return answer && answer->status == 503 &&
           absl::StrContains(answer->body, "lease held by replica-a");
  })) << b.process->Log();
  for (int i = 0; i < kPods; ++i) {
    api_.UpsertPod(HamiPodObject({.name = absl::StrCat("p", i),
                                  .memory_mib = kPodMemoryMib,
                                  .cores = kPodCores}));
  }
  auto refused =
      b.client->Post("/filter", Args("p0", nodes_).dump(), "application/json");
  ASSERT_TRUE(refused);
  EXPECT_THAT(refused->body, HasSubstr("not the leader"));
  auto unscored = b.client->Post("/prioritize", Args("p0", nodes_).dump(),
                                 "application/json");
  ASSERT_TRUE(unscored);
  EXPECT_EQ(unscored->status, 503);

  // Two scheduling threads (kube-scheduler's binding cycles run in
  // parallel); a killer that strikes after the first binds.
  std::atomic<int> next{0};
  absl::Mutex mu;
  std::map<std::string, std::string> outcomes;
  auto worker = [&] {
    for (int i = next++; i < kPods; i = next++) {
      const std::string pod = absl::StrCat("p", i);
      const std::string outcome = Schedule(pod, a, b);
      absl::MutexLock lock(&mu);
      outcomes[pod] = outcome;
    }
  };
  absl::Time killed_at;
  std::thread killer([&] {
    testing::WaitFor([&] { return api_.Bindings().size() >= 10; },
                     absl::Seconds(30));
    a.killed.store(true);
    killed_at = absl::Now();
    a.process->Kill(SIGKILL);
  });
  std::thread w1(worker);
  std::thread w2(worker);
  killer.join();
  absl::StatusOr<absl::Duration> takeover =
      WaitReady(b, kLeaseDuration + 4 * kRetryPeriod + absl::Seconds(5));
  ASSERT_TRUE(takeover.ok()) << b.process->Log();
  const absl::Duration since_kill = absl::Now() - killed_at;
  w1.join();
  w2.join();

  // The follower saw the last renewal at most a retry period before the
  // kill, and takes the lease a lease duration after it first saw it.
  EXPECT_LE(since_kill, kLeaseDuration + 2 * kRetryPeriod + absl::Seconds(1))
      << "took over " << absl::FormatDuration(since_kill) << " after the kill";
  std::cout << "failover: replica-b ready " << absl::FormatDuration(since_kill)
            << " after SIGKILL of "
            << "replica-a (lease " << absl::FormatDuration(kLeaseDuration)
            << ", retry " << absl::FormatDuration(kRetryPeriod) << ")\n";
  int bound = 0;
  for (const auto& [pod, outcome] : outcomes) {
    EXPECT_THAT(outcome, ::testing::AnyOf("", "unschedulable")) << pod;
    if (outcome.empty()) ++bound;
  }
  EXPECT_EQ(bound, kFitting) << b.process->Log();
  EXPECT_EQ(api_.GetLease("default", "deviceshare-scheduler")
                .value()["spec"]["holderIdentity"],
            "replica-b");
  ExpectRecordsValidAndWithinCapacity(api_, kPods);
}

TEST_F(ExtenderFailoverE2eTest, GracefulStopHandsTheLeaseOverAtOnce) {
  Replica a;
  Replica b;
  ASSERT_NO_FATAL_FAILURE(Start(a, "replica-a"));
  ASSERT_TRUE(WaitReady(a, absl::Seconds(10)).ok()) << a.process->Log();
  ASSERT_NO_FATAL_FAILURE(Start(b, "replica-b"));
  absl::SleepFor(2 * kRetryPeriod);
  EXPECT_NE(ReadyStatus(b), 200);
  const absl::Time stopped = absl::Now();
  a.killed.store(true);
  EXPECT_EQ(a.process->Kill(SIGTERM), 0) << a.process->Log();
  ASSERT_TRUE(WaitReady(b, kLeaseDuration).ok()) << b.process->Log();
  // Released, not expired: well within a lease duration.
  EXPECT_LT(absl::Now() - stopped, kLeaseDuration);
}

}  // namespace
}  // namespace deviceshare
