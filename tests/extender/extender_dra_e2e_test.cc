// End to end, DRA: the real `deviceshare-scheduler serve` process allocating
// ResourceClaims against an in-memory API server (testing/fake_api_server.h)
// that serves DeviceClasses, ResourceSlices and ResourceClaims, called over
// HTTP the way a kube-scheduler whose profile disables DynamicResources
// calls it.
#include <atomic>
#include <filesystem>
#include <map>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "deviceshare/dra/allocated_claim.h"
#include "deviceshare/dra/allocation_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "testing/dra_builders.h"
#include "testing/fake_api_server.h"
#include "testing/kube_objects_dra.h"
#include "testing/server_process.h"
#include "testing/wait_for.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::ClaimPodObject;
using ::deviceshare::testing::FakeApiServer;
using ::deviceshare::testing::GpuClassObject;
using ::deviceshare::testing::GpuSliceObject;
using ::deviceshare::testing::kDraDriver;
using ::deviceshare::testing::kDraGiB;
using ::deviceshare::testing::ReadyClient;
using ::deviceshare::testing::SchedulerProcess;
using ::deviceshare::testing::ShareClaimObject;
using ::deviceshare::testing::WaitFor;
using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Filter, prioritize, then bind to the node kube-scheduler would pick (the
// highest priority), through `client`. Returns the bind's error, the
// filter's, or the rejected nodes' reasons when nothing fits; "" when bound.
std::string Schedule(httplib::Client& client, const json& pod,
                     const std::vector<std::string>& nodes) {
  auto post = [&](const char* verb, const json& body) -> json {
    auto answer = client.Post(verb, body.dump(), "application/json");
    if (!answer || answer->status != 200) return nullptr;
    return json::parse(answer->body, nullptr, false);
  };
  json filtered = post("/filter", {{"Pod", pod}, {"NodeNames", nodes}});
  if (!filtered.is_object()) return "no filter answer";
  if (!filtered["Error"].get<std::string>().empty()) return filtered["Error"];
  std::vector<std::string> passing = filtered["NodeNames"];
  if (passing.empty()) {
    std::string reasons;
    for (const char* field : {"FailedNodes", "FailedAndUnresolvableNodes"}) {
      for (auto& [node, reason] : filtered[field].items()) {
        absl::StrAppend(&reasons, node, ": ", reason.get<std::string>(), "; ");
      }
    }
    return reasons.empty() ? "no node" : reasons;
  }
  json priorities = post("/prioritize", {{"Pod", pod}, {"NodeNames", passing}});
  if (!priorities.is_array()) return "no prioritize answer";
  std::string best;
  int64_t best_score = -1;
  for (const json& entry : priorities) {
    if (entry["Score"].get<int64_t>() > best_score) {
      best_score = entry["Score"];
      best = entry["Host"];
    }
  }
  json bound = post("/bind", {{"PodName", pod["metadata"]["name"]},
                              {"PodNamespace", pod["metadata"]["namespace"]},
                              {"PodUID", pod["metadata"]["uid"]},
                              {"Node", best}});
  return bound.is_object() ? bound["Error"].get<std::string>()
                           : "no bind answer";
}

// The pods status.reservedFor names, by uid.
std::vector<std::string> ReservedFor(const json& claim) {
  std::vector<std::string> uids;
  const json status = claim.value("status", json::object());
  for (const json& entry : status.value("reservedFor", json::array())) {
    uids.push_back(entry.value("uid", ""));
  }
  return uids;
}

bool Allocated(const json& claim) {
  return claim.contains("status") && claim["status"].contains("allocation");
}

class ExtenderDraE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           absl::StrCat(
               "deviceshare-dra-e2e-", getpid(), "-",
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    kubeconfig_ = api_.WriteKubeconfig(dir_.string());
    api_.UpsertDeviceClass(GpuClassObject());
  }

  void TearDown() override {
    scheduler_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Starts serve and waits for /readyz (the first list of every watched
  // collection): objects put in the API before this are known to it.
  void StartScheduler() {
    scheduler_ = std::make_unique<SchedulerProcess>(
        DEVICESHARE_SCHEDULER_BIN,
        std::vector<std::string>{"--kubeconfig", kubeconfig_, "--address",
                                 "127.0.0.1:0", "--log-level", "debug"});
    ASSERT_TRUE(scheduler_->Start().ok()) << scheduler_->Log();
    absl::StatusOr<std::unique_ptr<httplib::Client>> client =
        ReadyClient(*scheduler_);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }

  // A pod named `name` using claim `claim`, put in the API.
  json AddPod(const std::string& name, std::vector<std::string> claims) {
    return api_.UpsertPod(ClaimPodObject({.name = name, .claims = claims}));
  }

  std::string Schedule(const std::string& pod,
                       const std::vector<std::string>& nodes) {
    return deviceshare::Schedule(*client_, *api_.GetPod("default", pod), nodes);
  }

  json Claim(const std::string& name) {
    return api_.GetResourceClaim("default", name).value_or(json());
  }

  std::string BoundNode(const std::string& pod) {
    json object = *api_.GetPod("default", pod);
    return object["spec"].value("nodeName", "");
  }

  FakeApiServer api_;
  std::filesystem::path dir_;
  std::string kubeconfig_;
  std::unique_ptr<SchedulerProcess> scheduler_;
  std::unique_ptr<httplib::Client> client_;
};

// (b) What /bind writes is a resource.k8s.io/v1 status: the allocation a
// DRA driver decodes, pinned to the node, and the pod in reservedFor.
TEST_F(ExtenderDraE2eTest, BindWritesAV1AllocationAndReservedFor) {
  api_.UpsertResourceSlice(GpuSliceObject("n", 1));
  api_.UpsertResourceClaim(ShareClaimObject("default", "c", 8, 10));
  AddPod("p", {"c"});
  ASSERT_NO_FATAL_FAILURE(StartScheduler());

  ASSERT_EQ(Schedule("p", {"n"}), "") << scheduler_->Log();
  EXPECT_EQ(BoundNode("p"), "n");
  const json claim = Claim("c");
  absl::StatusOr<dra::AllocatedClaim> decoded =
      dra::DecodeAllocatedClaim(claim);
  ASSERT_TRUE(decoded.ok()) << decoded.status() << "\n" << claim.dump(2);
  EXPECT_EQ(decoded->ns, "default");
  EXPECT_EQ(decoded->name, "c");
  ASSERT_EQ(decoded->results.size(), 1u) << claim.dump(2);
  const dra::AllocatedDevice& device = decoded->results[0];
  EXPECT_EQ(device.request, "gpu");
  EXPECT_EQ(device.driver, kDraDriver);
  EXPECT_EQ(device.pool, "n");
  EXPECT_EQ(device.device, "gpu-0");
  EXPECT_FALSE(device.share_id.empty());
  EXPECT_EQ(device.consumed.at("memory"), 8 * kDraGiB);
  EXPECT_EQ(device.consumed.at("cores"), 10);
  EXPECT_FALSE(device.admin_access);
  const json& allocation = claim["status"]["allocation"];
  EXPECT_EQ(allocation["nodeSelector"],
            json::parse(R"({"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In",
                 "values": ["n"]}]}]})"));
  EXPECT_EQ(claim["status"]["reservedFor"],
            json::parse(R"([{"resource": "pods", "name": "p",
                             "uid": "uid-p"}])"));
  // Written through the status subresource, once.
  EXPECT_EQ(api_.request_counts().claim_status_updates, 1);
  ASSERT_EQ(api_.Bindings().size(), 1u);
}

// (a) Many pods with claims, filtered and bound in parallel: what the API
// server ends up holding never overcommits a device.
TEST_F(ExtenderDraE2eTest, ConcurrentPodsWithClaimsNeverOvercommit) {
  constexpr int kPods = 60;
  constexpr int kThreads = 12;
  for (const char* node : {"n0", "n1"}) {
    api_.UpsertResourceSlice(GpuSliceObject(node, 2, /*memory_gib=*/80,
                                            /*shares=*/10));
  }
  for (int i = 0; i < kPods; ++i) {
    const std::string name = absl::StrCat("p", i);
    api_.UpsertResourceClaim(
        ShareClaimObject("default", absl::StrCat("c", i), 8, 10));
    AddPod(name, {absl::StrCat("c", i)});
  }
  ASSERT_NO_FATAL_FAILURE(StartScheduler());

  std::atomic<int> bound{0};
  std::atomic<int> refused{0};
  absl::Mutex mu;
  std::vector<std::string> unexplained;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      httplib::Client client("127.0.0.1", scheduler_->port());
      client.set_read_timeout(20, 0);
      for (int i = t; i < kPods; i += kThreads) {
        const std::string name = absl::StrCat("p", i);
        const std::string error = deviceshare::Schedule(
            client, *api_.GetPod("default", name), {"n0", "n1"});
        if (error.empty()) {
          ++bound;
        } else if (absl::StrContains(error, "DevicesUnavailable") ||
                   absl::StrContains(error, "does not fit")) {
          ++refused;  // every device was full, or taken meanwhile
        } else {
          absl::MutexLock lock(&mu);
          unexplained.push_back(absl::StrCat(name, ": ", error));
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_THAT(unexplained, IsEmpty());
  // 2 nodes x 2 GPUs x 10 shares of 8 GiB and 10 cores.
  EXPECT_EQ(bound.load(), 40);
  EXPECT_EQ(refused.load(), kPods - 40);
  EXPECT_EQ(api_.Bindings().size(), 40u);

  std::map<std::string, int64_t> memory, cores, shares;
  for (int i = 0; i < kPods; ++i) {
    const json claim = Claim(absl::StrCat("c", i));
    const std::string node = BoundNode(absl::StrCat("p", i));
    if (node.empty()) {
      EXPECT_FALSE(Allocated(claim)) << claim.dump();
      continue;
    }
    absl::StatusOr<dra::AllocatedClaim> decoded =
        dra::DecodeAllocatedClaim(claim);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    ASSERT_EQ(decoded->results.size(), 1u);
    const dra::AllocatedDevice& device = decoded->results[0];
    EXPECT_EQ(device.pool, node) << "the claim is on the pod's node";
    EXPECT_THAT(ReservedFor(claim), ElementsAre(absl::StrCat("uid-p", i)));
    const std::string key = absl::StrCat(device.pool, "/", device.device);
    memory[key] += device.consumed.at("memory");
    cores[key] += device.consumed.at("cores");
    ++shares[key];
  }
  EXPECT_EQ(shares.size(), 4u);
  for (const auto& [device, count] : shares) {
    EXPECT_LE(memory[device], 80 * kDraGiB) << device;
    EXPECT_LE(cores[device], 100) << device;
    EXPECT_LE(count, 10) << device;
  }
}

// (c) A bind whose Binding fails takes back what it wrote to the claim,
// and the room it held goes to the next pod.
TEST_F(ExtenderDraE2eTest, AFailedBindLeavesTheClaimUnallocated) {
  // One GPU that takes one share: whoever holds it blocks everyone else.
  api_.UpsertResourceSlice(GpuSliceObject("n", 1, 80, /*shares=*/1));
  api_.UpsertResourceClaim(ShareClaimObject("default", "cp", 8, 10));
  api_.UpsertResourceClaim(ShareClaimObject("default", "cq", 8, 10));
  AddPod("p", {"cp"});
  AddPod("q", {"cq"});
  ASSERT_NO_FATAL_FAILURE(StartScheduler());

  api_.FailNextBindings(1, 500);
  EXPECT_THAT(Schedule("p", {"n"}), HasSubstr("Binding"));
  EXPECT_EQ(BoundNode("p"), "");
  const json claim = Claim("cp");
  EXPECT_FALSE(Allocated(claim)) << claim.dump(2);
  EXPECT_THAT(ReservedFor(claim), IsEmpty()) << claim.dump(2);
  EXPECT_TRUE(WaitFor([&] {
    for (const json& event : api_.Events()) {
      if (event["reason"] == "BindingFailed") return true;
    }
    return false;
  }));

  // The room is free at once (the undo is in the scheduler's state before
  // the watch shows it): q takes it, and then p no longer fits.
  EXPECT_EQ(Schedule("q", {"n"}), "") << scheduler_->Log();
  EXPECT_TRUE(Allocated(Claim("cq")));
  EXPECT_THAT(Schedule("p", {"n"}), HasSubstr("DevicesUnavailable"));
  EXPECT_FALSE(Allocated(Claim("cp")));
}

// Conflicting writes of a claim (its resourceVersion moved) are read again
// and retried; a claim that keeps conflicting fails the bind, undone.
TEST_F(ExtenderDraE2eTest, ConflictsAreRetriedAndThenGivenUp) {
  api_.UpsertResourceSlice(GpuSliceObject("n", 1));
  api_.UpsertResourceClaim(ShareClaimObject("default", "ca", 8, 10));
  api_.UpsertResourceClaim(ShareClaimObject("default", "cb", 8, 10));
  AddPod("a", {"ca"});
  AddPod("b", {"cb"});
  ASSERT_NO_FATAL_FAILURE(StartScheduler());

  api_.FailNextClaimStatusWrites(2, 409);
  EXPECT_EQ(Schedule("a", {"n"}), "") << scheduler_->Log();
  EXPECT_TRUE(Allocated(Claim("ca")));
  EXPECT_THAT(ReservedFor(Claim("ca")), ElementsAre("uid-a"));

  api_.FailNextClaimStatusWrites(1000, 409);
  EXPECT_THAT(Schedule("b", {"n"}), HasSubstr("still conflicting"));
  api_.FailNextClaimStatusWrites(0, 0);
  EXPECT_FALSE(Allocated(Claim("cb")));
  EXPECT_EQ(BoundNode("b"), "");
  // kube-scheduler's retry goes through.
  EXPECT_EQ(Schedule("b", {"n"}), "") << scheduler_->Log();
  EXPECT_THAT(ReservedFor(Claim("cb")), ElementsAre("uid-b"));
}

// A status.allocation as planted by another scheduler: one device of n2,
// 8 GiB and 10 cores of a share.
json PlantedAllocation() {
  dra::DeviceResult result;
  result.request = "gpu";
  result.driver = kDraDriver;
  result.pool = "n2";
  result.device = "gpu-0";
  result.share_id = "2a4c8e3f-0000-4000-8000-000000000001";
  result.consumed["memory"] = {8 * kDraGiB, dra::QuantityFormat::kBinary};
  result.consumed["cores"] = {10, dra::QuantityFormat::kDecimal};
  result.consumed["shares"] = {1, dra::QuantityFormat::kDecimal};
  dra::AllocationResult allocation;
  allocation.results.push_back(result);
  allocation.node_name = "n2";
  return dra::AllocationResultToJson(allocation);
}

// (d) An allocated claim -- ours, or anyone's -- pins every pod that uses
// it to its node; the second pod is only added to reservedFor.
TEST_F(ExtenderDraE2eTest, AnAllocatedClaimPinsTheNextPodToItsNode) {
  for (const char* node : {"n1", "n2"}) {
    api_.UpsertResourceSlice(GpuSliceObject(node, 1));
  }
  api_.UpsertResourceClaim(ShareClaimObject("default", "shared", 8, 10));
  json planted = ShareClaimObject("default", "planted", 8, 10);
  planted["status"]["allocation"] = PlantedAllocation();
  planted["status"]["reservedFor"] = json::parse(
      R"([{"resource": "pods", "name": "elsewhere", "uid": "uid-else"}])");
  api_.UpsertResourceClaim(planted);
  AddPod("a", {"shared"});
  AddPod("b", {"shared"});
  AddPod("c", {"planted"});
  ASSERT_NO_FATAL_FAILURE(StartScheduler());

  // Ours: a allocates the claim; b follows it.
  ASSERT_EQ(Schedule("a", {"n1", "n2"}), "") << scheduler_->Log();
  const std::string node = BoundNode("a");
  const json first = Claim("shared");
  json filtered =
      json::parse(client_
                      ->Post("/filter",
                             json({{"Pod", *api_.GetPod("default", "b")},
                                   {"NodeNames", {"n1", "n2"}}})
                                 .dump(),
                             "application/json")
                      ->body);
  EXPECT_EQ(filtered["NodeNames"], json::array({node})) << filtered.dump(2);
  ASSERT_EQ(Schedule("b", {"n1", "n2"}), "") << scheduler_->Log();
  EXPECT_EQ(BoundNode("b"), node);
  const json second = Claim("shared");
  EXPECT_EQ(second["status"]["allocation"], first["status"]["allocation"]);
  EXPECT_THAT(ReservedFor(second), ElementsAre("uid-a", "uid-b"));

  // Anyone's: the planted allocation on n2 is honoured as it is.
  ASSERT_EQ(Schedule("c", {"n1", "n2"}), "") << scheduler_->Log();
  EXPECT_EQ(BoundNode("c"), "n2");
  const json planted_now = Claim("planted");
  EXPECT_EQ(planted_now["status"]["allocation"], PlantedAllocation());
  EXPECT_THAT(ReservedFor(planted_now), ElementsAre("uid-else", "uid-c"));
}

// A failed bind of a pod that shares an allocated claim takes back only its
// own reservedFor entry: the allocation is the other pod's too.
TEST_F(ExtenderDraE2eTest, AFailedBindOfASharedClaimKeepsItsAllocation) {
  api_.UpsertResourceSlice(GpuSliceObject("n", 1));
  api_.UpsertResourceClaim(ShareClaimObject("default", "shared", 8, 10));
  AddPod("a", {"shared"});
  AddPod("b", {"shared"});
  ASSERT_NO_FATAL_FAILURE(StartScheduler());

  ASSERT_EQ(Schedule("a", {"n"}), "") << scheduler_->Log();
  const json allocated = Claim("shared")["status"]["allocation"];
  api_.FailNextBindings(1, 500);
  EXPECT_THAT(Schedule("b", {"n"}), HasSubstr("Binding"));
  const json claim = Claim("shared");
  EXPECT_EQ(claim["status"]["allocation"], allocated);
  EXPECT_THAT(ReservedFor(claim), ElementsAre("uid-a"));
  EXPECT_EQ(Schedule("b", {"n"}), "") << scheduler_->Log();
  EXPECT_THAT(ReservedFor(Claim("shared")), ElementsAre("uid-a", "uid-b"));
}

// A claim that another scheduler allocated elsewhere between our filter and
// our bind fails the bind, and nothing of ours is left on it.
TEST_F(ExtenderDraE2eTest, AClaimAllocatedElsewhereMeanwhileFailsTheBind) {
  for (const char* node : {"n1", "n2"}) {
    api_.UpsertResourceSlice(GpuSliceObject(node, 1));
  }
  api_.UpsertResourceClaim(ShareClaimObject("default", "c", 8, 10));
  const json pod = AddPod("p", {"c"});
  ASSERT_NO_FATAL_FAILURE(StartScheduler());

  json filtered = json::parse(
      client_
          ->Post("/filter", json({{"Pod", pod}, {"NodeNames", {"n1"}}}).dump(),
                 "application/json")
          ->body);
  ASSERT_EQ(filtered["NodeNames"], json::array({"n1"})) << filtered.dump(2);
  json claim = Claim("c");
  claim["status"]["allocation"] = PlantedAllocation();  // on n2
  api_.UpsertResourceClaim(claim);
  json bound = json::parse(client_
                               ->Post("/bind",
                                      json({{"PodName", "p"},
                                            {"PodNamespace", "default"},
                                            {"PodUID", "uid-p"},
                                            {"Node", "n1"}})
                                          .dump(),
                                      "application/json")
                               ->body);
  EXPECT_THAT(bound["Error"].get<std::string>(),
              HasSubstr("allocated on node n2"));
  EXPECT_EQ(BoundNode("p"), "");
  const json after = Claim("c");
  EXPECT_EQ(after["status"]["allocation"], PlantedAllocation());
  EXPECT_THAT(ReservedFor(after), IsEmpty());
  // The retry follows the claim to n2.
  EXPECT_EQ(Schedule("p", {"n1", "n2"}), "") << scheduler_->Log();
  EXPECT_EQ(BoundNode("p"), "n2");
}

// A claim allocated before serve started is charged: its share's room is
// not handed out again.
TEST_F(ExtenderDraE2eTest, AnAllocatedClaimIsCharged) {
  api_.UpsertResourceSlice(GpuSliceObject("n2", 1, 80, /*shares=*/2));
  json planted = ShareClaimObject("default", "planted", 8, 10);
  planted["status"]["allocation"] = PlantedAllocation();
  api_.UpsertResourceClaim(planted);
  api_.UpsertResourceClaim(ShareClaimObject("default", "big", 76, 10));
  api_.UpsertResourceClaim(ShareClaimObject("default", "fits", 72, 10));
  AddPod("big", {"big"});
  AddPod("fits", {"fits"});
  ASSERT_NO_FATAL_FAILURE(StartScheduler());

  EXPECT_THAT(Schedule("big", {"n2"}), HasSubstr("DevicesUnavailable"));
  EXPECT_EQ(Schedule("fits", {"n2"}), "") << scheduler_->Log();
}

// Objects the scheduler cannot read are logged with their kind, name and
// field, and everything else is served.
TEST_F(ExtenderDraE2eTest, BadObjectsAreLoggedAndTheRestServed) {
  json bad_slice = GpuSliceObject("bad", 1);
  bad_slice["metadata"]["name"] = "bad-gpus";
  bad_slice["spec"]["devices"][0]["capacity"]["memory"]["value"] = "lots";
  api_.UpsertResourceSlice(bad_slice);
  json network = GpuSliceObject("net", 1);
  network["metadata"]["name"] = "network-gpus";
  network["spec"].erase("nodeName");
  network["spec"]["allNodes"] = true;
  api_.UpsertResourceSlice(network);
  json bad_class = GpuClassObject();
  bad_class["metadata"]["name"] = "bad-class";
  bad_class["spec"]["selectors"][0]["cel"]["expression"] = 3;
  api_.UpsertDeviceClass(bad_class);
  json bad_claim = ShareClaimObject("default", "bad-claim", 8, 10);
  bad_claim["spec"]["devices"]["requests"][0]["name"] = "GPU";
  api_.UpsertResourceClaim(bad_claim);
  api_.UpsertResourceSlice(GpuSliceObject("n", 1));
  api_.UpsertResourceClaim(ShareClaimObject("default", "c", 8, 10));
  AddPod("p", {"c"});
  AddPod("q", {"bad-claim"});
  ASSERT_NO_FATAL_FAILURE(StartScheduler());

  EXPECT_EQ(Schedule("p", {"n"}), "") << scheduler_->Log();
  // The pod of the unreadable claim waits for it, with a reason.
  EXPECT_THAT(Schedule("q", {"n"}), HasSubstr("ClaimNotReady"));
  // Each object named with its kind and the field at fault.
  const std::vector<std::string> lines = {
      "spec.devices[0].capacity[memory].value",
      "kind=ResourceSlice object=bad-gpus",
      "spec.selectors[0].cel.expression",
      "kind=DeviceClass object=bad-class",
      "spec.devices.requests[0].name",
      "kind=ResourceClaim object=default/bad-claim",
      "kind=ResourceSlice object=network-gpus"};
  EXPECT_TRUE(WaitFor([&] {
    const std::string log = scheduler_->Log();
    for (const std::string& line : lines) {
      if (!absl::StrContains(log, line)) return false;
    }
    return true;
  })) << scheduler_->Log();
  // Still serving.
  auto health = client_->Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

}  // namespace
}  // namespace deviceshare
