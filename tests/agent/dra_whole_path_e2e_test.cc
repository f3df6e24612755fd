// The whole DRA path with deviceshare's own parts only, through real
// processes: `deviceshare-node-agent serve --dra` on fake NVML publishes
// its GPUs as ResourceSlices to the in-memory API server;
// `deviceshare-scheduler serve`, called over HTTP the way kube-scheduler
// calls an extender, allocates a ResourceClaim on them (/filter, /bind);
// and the agent, called over gRPC the way kubelet calls a DRA driver,
// prepares that allocation into a CDI spec that gives the container its
// share. Nothing but the objects in the API server passes between the two
// processes, so this shows that what the scheduler writes is what the agent
// reads.
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "deviceshare/dra/allocated_claim.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "testing/agent_rig.h"
#include "testing/dra_builders.h"
#include "testing/kube_objects_dra.h"
#include "testing/server_process.h"
#include "testing/status_matchers.h"
#include "testing/temp_folder.h"
#include "testing/test_dra_kubelet.h"
#include "testing/wait_for.h"

namespace deviceshare::testing {
namespace {

using nlohmann::json;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using ::testing::StartsWith;

constexpr char kNamespace[] = "ml";
constexpr char kNode[] = "gpu-node";  // AgentRigOptions' default node

// The body of serve's answer to `verb`, or null when there was none.
json Post(httplib::Client& client, const std::string& verb, const json& body) {
  auto answer = client.Post(verb, body.dump(), "application/json");
  if (!answer || answer->status != 200) return nullptr;
  return json::parse(answer->body, nullptr, /*allow_exceptions=*/false);
}

// ExtenderArgs of `pod` with `nodes` as candidates (nodeCacheCapable), as
// kube-scheduler sends them.
json FilterBody(const json& pod, const std::vector<std::string>& nodes) {
  return {{"Pod", pod}, {"NodeNames", nodes}};
}

// ExtenderBindingArgs of `pod` to `node`.
json BindBody(const json& pod, const std::string& node) {
  return {{"PodName", pod["metadata"]["name"]},
          {"PodNamespace", pod["metadata"]["namespace"]},
          {"PodUID", pod["metadata"]["uid"]},
          {"Node", node}};
}

// The reasons /filter gave for rejecting nodes, "node: reason; ...".
std::string Rejections(const json& filtered) {
  std::string reasons;
  for (const char* field : {"FailedNodes", "FailedAndUnresolvableNodes"}) {
    if (!filtered.contains(field) || !filtered[field].is_object()) continue;
    for (const auto& [node, reason] : filtered[field].items()) {
      absl::StrAppend(&reasons, node, ": ", reason.get<std::string>(), "; ");
    }
  }
  return reasons;
}

// The names of the devices the agent published, over all its slices.
std::set<std::string> PublishedDevices(const std::vector<json>& slices) {
  std::set<std::string> names;
  for (const json& slice : slices) {
    // A slice of counter sets has no devices list.
    for (const json& device : slice["spec"].value("devices", json::array())) {
      names.insert(device["name"].get<std::string>());
    }
  }
  return names;
}

// One node of `gpus` fake H100s whose agent serves DRA, then serve against
// the same API server. serve answers from what its watches delivered, and
// is ready once it has listed every collection: so the agent's slices, the
// class, the claims and the pods go into the API server before serve
// starts, and /filter never races a watch event.
class DraWholePathE2eTest : public ::testing::Test {
 protected:
  void StartNode(int gpus, std::vector<std::string> agent_flags = {}) {
    absl::StatusOr<std::unique_ptr<AgentRig>> rig = AgentRig::Create(
        {.gpus = gpus, .extra_args = std::move(agent_flags), .dra = true});
    ASSERT_THAT(rig.status(), IsOk());
    rig_ = *std::move(rig);
    ASSERT_THAT(rig_->StartAgent(), IsOk()) << rig_->Log();
    kubelet_ = std::make_unique<TestDraKubelet>(rig_->DraDir("dra-registry"));
    ASSERT_THAT(kubelet_->WaitForPlugin(kDraDriver).status(), IsOk())
        << rig_->Log();
    ASSERT_TRUE(WaitFor(
        [&] {
          return PublishedDevices(api().ResourceSlices()).size() ==
                 static_cast<size_t>(gpus);
        },
        absl::Seconds(20)))
        << rig_->Log();
    // The shipped class that selects every device of the driver.
    api().UpsertDeviceClass(GpuClassObject());
  }

  void StartScheduler(std::vector<std::string> flags = {}) {
    // Inside the rig's folder, which the rig removes.
    const std::string dir = rig_->DraDir("scheduler");
    std::filesystem::create_directories(dir);
    std::vector<std::string> args = {"--kubeconfig", api().WriteKubeconfig(dir),
                                     "--address",    "127.0.0.1:0",
                                     "--log-level",  "debug"};
    args.insert(args.end(), flags.begin(), flags.end());
    scheduler_ = std::make_unique<SchedulerProcess>(DEVICESHARE_SCHEDULER_BIN,
                                                    std::move(args));
    ASSERT_THAT(scheduler_->Start(), IsOk()) << scheduler_->Log();
    absl::StatusOr<std::unique_ptr<httplib::Client>> client =
        ReadyClient(*scheduler_);
    ASSERT_THAT(client, IsOk());
    client_ = *std::move(client);
  }

  void TearDown() override {
    // serve first: it watches the rig's API server.
    client_.reset();
    scheduler_.reset();
    kubelet_.reset();
    rig_.reset();
  }

  FakeApiServer& api() { return rig_->api(); }

  // Claim `name` asking one share of `memory_gib` GiB and `cores` percent,
  // and pod `name` using it, both in the API server; returns the pod.
  json AddClaimAndPod(const std::string& name, int64_t memory_gib, int cores) {
    api().UpsertResourceClaim(
        ShareClaimObject(kNamespace, name, memory_gib, cores));
    return api().UpsertPod(ClaimPodObject(
        {.namespace_name = kNamespace, .name = name, .claims = {name}}));
  }

  json Filter(const json& pod) {
    return Post(*client_, "/filter", FilterBody(pod, {kNode}));
  }

  // /bind's Error ("" when bound), or why there was no answer.
  std::string Bind(const json& pod) {
    const json bound = Post(*client_, "/bind", BindBody(pod, kNode));
    if (!bound.is_object()) return "no bind answer";
    return bound.value("Error", "");
  }

  json Claim(const std::string& name) {
    return api().GetResourceClaim(kNamespace, name).value_or(json());
  }

  std::string BoundNode(const std::string& pod) {
    const json object = api().GetPod(kNamespace, pod).value_or(json());
    return object.is_object() ? object["spec"].value("nodeName", "") : "";
  }

  std::string CdiPath(const std::string& uid) const {
    return absl::StrCat(rig_->DraDir("cdi"), "/", kDraDriver, "-claim-", uid,
                        ".json");
  }

  // The CDI spec the agent wrote for claim `uid`; null when there is none.
  json CdiSpec(const std::string& uid) const {
    std::ifstream in(CdiPath(uid));
    std::stringstream text;
    text << in.rdbuf();
    const json spec =
        json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
    return spec.is_discarded() ? json() : spec;
  }

  std::string Logs() const {
    return absl::StrCat("--- agent ---\n", rig_ ? rig_->Log() : "",
                        "\n--- scheduler ---\n",
                        scheduler_ ? scheduler_->Log() : "");
  }

  std::unique_ptr<AgentRig> rig_;
  std::unique_ptr<TestDraKubelet> kubelet_;
  std::unique_ptr<SchedulerProcess> scheduler_;
  std::unique_ptr<httplib::Client> client_;
};

// What /bind wrote to `claim` for `pod`: one share of 4 GiB and 30 cores on
// one of `devices` (the agent's) in the node's pool, pinned to the node and
// reserved for the pod. Returns the allocated device.
dra::AllocatedDevice ExpectAllocatedForPod(
    const json& claim, const json& pod, const std::set<std::string>& devices) {
  absl::StatusOr<dra::AllocatedClaim> decoded =
      dra::DecodeAllocatedClaim(claim);
  EXPECT_TRUE(decoded.ok()) << decoded.status() << "\n" << claim.dump(2);
  if (!decoded.ok() || decoded->results.size() != 1) {
    ADD_FAILURE() << "want one allocated device:\n" << claim.dump(2);
    return {};
  }
  const dra::AllocatedDevice& device = decoded->results[0];
  EXPECT_EQ(device.request, "gpu");
  EXPECT_EQ(device.driver, kDraDriver);
  EXPECT_EQ(device.pool, kNode) << "the agent's pool is its node";
  EXPECT_THAT(devices, Contains(device.device));
  EXPECT_FALSE(device.share_id.empty()) << claim.dump(2);
  EXPECT_EQ(device.consumed.at("memory"), 4 * kDraGiB);
  EXPECT_EQ(device.consumed.at("cores"), 30);
  // Pinned to the node, as kubelet's admission of the pod requires.
  EXPECT_EQ(claim["status"]["allocation"]["nodeSelector"],
            json::parse(R"({"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In",
                 "values": ["gpu-node"]}]}]})"));
  EXPECT_EQ(claim["status"]["reservedFor"],
            json::array({{{"resource", "pods"},
                          {"name", pod["metadata"]["name"]},
                          {"uid", pod["metadata"]["uid"]}}}));
  return device;
}

// A share asked in a claim: serve allocates it on a device the agent
// published and binds the pod; the agent prepares exactly that allocation
// into a CDI spec with the GPU and the share's limits, and unprepares it.
TEST_F(DraWholePathE2eTest, ClaimAllocatedByTheSchedulerIsPreparedByTheAgent) {
  ASSERT_NO_FATAL_FAILURE(StartNode(/*gpus=*/2));
  const std::set<std::string> devices =
      PublishedDevices(api().ResourceSlices());
  const json pod = AddClaimAndPod("train", /*memory_gib=*/4, /*cores=*/30);
  ASSERT_NO_FATAL_FAILURE(StartScheduler());

  // kube-scheduler's part, by hand.
  const json filtered = Filter(pod);
  ASSERT_TRUE(filtered.is_object()) << Logs();
  EXPECT_EQ(filtered.value("Error", ""), "");
  ASSERT_EQ(filtered["NodeNames"], json::array({kNode}))
      << Rejections(filtered) << Logs();
  ASSERT_EQ(Bind(pod), "") << Logs();
  EXPECT_EQ(BoundNode("train"), kNode);
  ASSERT_THAT(api().Bindings(), SizeIs(1));
  const json claim = Claim("train");
  const dra::AllocatedDevice allocated =
      ExpectAllocatedForPod(claim, pod, devices);
  ASSERT_THAT(allocated.device, StartsWith("gpu-"));

  // kubelet's part: the pod is on the node, its claim is prepared.
  const agent::ClaimRef ref{kNamespace, claim["metadata"]["uid"], "train"};
  auto prepared = kubelet_->Prepare("v1", {ref});
  ASSERT_THAT(prepared.status(), IsOk());
  const agent::ClaimPrepareResult& result = prepared->at(ref.uid);
  ASSERT_EQ(result.error, "") << Logs();
  ASSERT_THAT(result.devices, SizeIs(1));
  EXPECT_THAT(result.devices[0].request_names, ElementsAre("gpu"));
  EXPECT_EQ(result.devices[0].pool, allocated.pool);
  EXPECT_EQ(result.devices[0].device, allocated.device);
  EXPECT_EQ(result.devices[0].share_id, allocated.share_id);
  ASSERT_THAT(result.devices[0].cdi_device_ids, SizeIs(1));

  // The CDI spec kubelet hands the runtime: the allocated GPU's device
  // node, and the share as HAMi-core's limits.
  const json spec = CdiSpec(ref.uid);
  ASSERT_TRUE(spec.is_object()) << "no CDI spec at " << CdiPath(ref.uid);
  const std::string index = allocated.device.substr(std::string("gpu-").size());
  ASSERT_THAT(spec["devices"], SizeIs(1)) << spec.dump(2);
  const json& cdi_device = spec["devices"][0];
  EXPECT_EQ(absl::StrCat(spec["kind"].get<std::string>(), "=",
                         cdi_device["name"].get<std::string>()),
            result.devices[0].cdi_device_ids[0]);
  EXPECT_EQ(cdi_device["containerEdits"]["deviceNodes"][0]["path"],
            absl::StrCat("/dev/nvidia", index))
      << spec.dump(2);
  const std::vector<std::string> env = spec["containerEdits"]["env"];
  EXPECT_THAT(env, Contains("CUDA_DEVICE_MEMORY_LIMIT_0=4096m"));
  // One GPU in the container: HAMi-core's one SM limit, unindexed (the
  // indexed CUDA_DEVICE_SM_LIMIT_<i> only when shares differ in cores).
  EXPECT_THAT(env, Contains("CUDA_DEVICE_SM_LIMIT=30"));
  EXPECT_THAT(env, Contains(absl::StrCat("NVIDIA_VISIBLE_DEVICES=",
                                         AgentRig::Uuid(std::stoi(index)))));

  // The pod is gone: kubelet unprepares, and the spec goes with it.
  auto unprepared = kubelet_->Unprepare("v1", {ref});
  ASSERT_THAT(unprepared.status(), IsOk());
  EXPECT_EQ(unprepared->at(ref.uid), "");
  EXPECT_FALSE(std::filesystem::exists(CdiPath(ref.uid)));
}

// Two shares that together would overcommit the node's one GPU: the
// scheduler counts the first, allocated claim against the device the agent
// published and turns the second pod away from the node, writing nothing.
TEST_F(DraWholePathE2eTest, ShareThatWouldOvercommitTheGpuIsFilteredOut) {
  ASSERT_NO_FATAL_FAILURE(StartNode(/*gpus=*/1));
  // An H100 has 100 cores: 60 + 50 do not fit (nor 48 + 40 GiB in 79.6).
  const json first = AddClaimAndPod("first", /*memory_gib=*/48, /*cores=*/60);
  const json second = AddClaimAndPod("second", /*memory_gib=*/40,
                                     /*cores=*/50);
  ASSERT_NO_FATAL_FAILURE(StartScheduler());

  // /filter reserves what it found for the pod until its bind (or a TTL),
  // so the pods go one at a time, as kube-scheduler's cycle takes them.
  json filtered = Filter(first);
  ASSERT_TRUE(filtered.is_object()) << Logs();
  ASSERT_EQ(filtered["NodeNames"], json::array({kNode}))
      << Rejections(filtered) << Logs();
  ASSERT_EQ(Bind(first), "") << Logs();
  ASSERT_TRUE(Claim("first")["status"].contains("allocation"));

  filtered = Filter(second);
  ASSERT_TRUE(filtered.is_object()) << Logs();
  EXPECT_EQ(filtered.value("Error", ""), "");
  EXPECT_THAT(filtered["NodeNames"], IsEmpty());
  // Refused for what the first share left of the agent's device.
  const std::string reasons = Rejections(filtered);
  EXPECT_THAT(reasons, HasSubstr(absl::StrCat(kNode, ": DevicesUnavailable")))
      << filtered.dump(2);
  EXPECT_THAT(reasons, HasSubstr("cores: 50 needed, 40 left"));
  const json claim = Claim("second");
  EXPECT_FALSE(claim.contains("status") &&
               claim["status"].contains("allocation"))
      << claim.dump(2);
  EXPECT_EQ(BoundNode("second"), "");
  EXPECT_THAT(api().Bindings(), SizeIs(1));
}

// Signed allocations (--record-key-file on both sides): the claim serve
// allocated carries its signature and is prepared; a claim whose
// allocation nobody with the key wrote (unsigned), whose signature was
// copied from another claim (replayed) or made up (forged), or whose
// allocation was changed after signing (tampered) is refused with the reason
// and an Event on its pod.
TEST_F(DraWholePathE2eTest, OnlySignedAllocationsArePrepared) {
  TempFolder keys_folder;
  const std::string keys = keys_folder.File("keys");
  std::ofstream(keys) << "k1: " << std::string(43, 'A') << "=\n";
  ASSERT_NO_FATAL_FAILURE(StartNode(/*gpus=*/2, {"--record-key-file", keys}));
  const json pod = AddClaimAndPod("train", /*memory_gib=*/4, /*cores=*/30);
  const json tampered_pod = AddClaimAndPod("tampered", 2, 10);
  ASSERT_NO_FATAL_FAILURE(StartScheduler({"--record-key-file", keys}));
  for (const json* p : {&pod, &tampered_pod}) {
    ASSERT_EQ(Filter(*p)["NodeNames"], json::array({kNode})) << Logs();
    ASSERT_EQ(Bind(*p), "") << Logs();
  }
  const json claim = Claim("train");
  ASSERT_THAT(claim["metadata"]["annotations"].value(
                  "deviceshare.io/allocation-signature", ""),
              StartsWith("v1.k1."))
      << claim.dump(2);
  const agent::ClaimRef ref{kNamespace, claim["metadata"]["uid"], "train"};
  auto prepared = kubelet_->Prepare("v1", {ref});
  ASSERT_THAT(prepared.status(), IsOk());
  EXPECT_EQ(prepared->at(ref.uid).error, "") << Logs();

  // Unsigned and replayed: train's allocation (and, for the replay, its
  // signature) on claims of their own, reserved for pods of their own.
  for (const char* name : {"unsigned", "replayed", "forged"}) {
    json copy = Claim("train");
    copy["metadata"] = {{"name", name}, {"namespace", kNamespace}};
    if (std::string(name) == "replayed") {
      copy["metadata"]["annotations"] = claim["metadata"]["annotations"];
    }
    if (std::string(name) == "forged") {  // a signature made up
      copy["metadata"]["annotations"] = {
          {"deviceshare.io/allocation-signature", "v1.k1.AAAAAAAAAAAAAAAA"}};
    }
    copy["status"]["reservedFor"] =
        json::array({{{"resource", "pods"}, {"name", name}, {"uid", name}}});
    api().UpsertResourceClaim(copy);
  }
  // Tampered: its allocation asks more memory than serve signed.
  json tampered = Claim("tampered");
  tampered["status"]["allocation"]["devices"]["results"][0]["consumedCapacity"]
          ["memory"] = "70Gi";
  api().UpsertResourceClaim(tampered);

  for (const auto& [name, verdict] :
       std::vector<std::pair<std::string, std::string>>{
           {"unsigned", "is unsigned"},
           {"replayed", "is forged"},
           {"forged", "is forged"},
           {"tampered", "is forged"}}) {
    const json object = Claim(name);
    const agent::ClaimRef refused_ref{kNamespace, object["metadata"]["uid"],
                                      name};
    auto refused = kubelet_->Prepare("v1", {refused_ref});
    ASSERT_THAT(refused.status(), IsOk());
    EXPECT_THAT(refused->at(refused_ref.uid).error, HasSubstr(verdict))
        << name << Logs();
    EXPECT_FALSE(std::filesystem::exists(CdiPath(refused_ref.uid))) << name;
    const std::string consumer =
        object["status"]["reservedFor"][0]["name"].get<std::string>();
    EXPECT_TRUE(WaitFor([&] {
      for (const json& event : api().Events()) {
        if (event["involvedObject"].value("name", "") == consumer &&
            event.value("reason", "") == "AllocationRecordRefused") {
          return true;
        }
      }
      return false;
    })) << name
        << ": no AllocationRecordRefused event for pod " << consumer;
  }
}

}  // namespace
}  // namespace deviceshare::testing
