// `simulate` on DRA inputs: clusters whose nodes publish ResourceSlices
// (`dra: true` in the short form, or ResourceSlice and DeviceClass objects)
// and pods that use ResourceClaims and ResourceClaimTemplates. Expected
// placements are worked out by hand from binpack (node and device level:
// the fuller after the placement wins) and the request policies the node
// agent publishes (memory by the MiB, cores by the percent, one share).
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/codec/yaml_json.h"
#include "deviceshare/dra/device_class.h"
#include "deviceshare/simulate/dra_workload.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "simulate_fixtures.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::PlacementOf;
using ::deviceshare::testing::SimulateJson;
using ::deviceshare::testing::StatusIs;
using ::deviceshare::testing::UnschedulableOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;
using Json = nlohmann::ordered_json;

// `name` is under examples/, or under deploy/ when it starts with "deploy/".
std::string ReadExample(const std::string& name) {
  const std::string path =
      name.starts_with("deploy/")
          ? std::string(DEVICESHARE_DEPLOY_DIR) + name.substr(6)
          : std::string(DEVICESHARE_EXAMPLES_DIR) + "/" + name;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "missing example " << name;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The results of claim `claim` of pod `pod` as the report prints them.
Json ResultsOf(const Json& report, const std::string& pod,
               const std::string& claim) {
  Json placement = PlacementOf(report, pod);
  if (placement.is_null() || !placement.contains("claims")) return nullptr;
  for (const Json& entry : placement["claims"]) {
    if (entry["name"] == claim) return entry["results"];
  }
  return nullptr;
}

Json Result(const std::string& request, const std::string& pool,
            const std::string& device, const std::string& cores,
            const std::string& memory, int share) {
  Json out;
  out["request"] = request;
  out["driver"] = "gpu.deviceshare.io";
  out["pool"] = pool;
  out["device"] = device;
  out["consumedCapacity"] = {
      {"cores", cores}, {"memory", memory}, {"shares", "1"}};
  out["shareID"] = simulate::SimulatedShareId(share);
  return out;
}

TEST(SimulateDraTest, ExampleClusterGolden) {
  auto report = SimulateJson(ReadExample("dra-cluster.yaml"),
                             ReadExample("dra-workload.yaml"));
  ASSERT_OK(report);
  // h100-trainer first: only the H100s match its selector; a 2-GPU node
  // is fuller after a share than a 4-GPU one, so binpack then keeps the
  // template replicas beside it on the same GPU (best fit).
  EXPECT_EQ(ResultsOf(*report, "ml/h100-trainer", "gpu"),
            Json::array({Result("gpu", "h100-dra", "gpu-0", "50", "40Gi", 1)}));
  EXPECT_EQ(ResultsOf(*report, "ml/infer-1", "gpu"),
            Json::array({Result("gpu", "h100-dra", "gpu-0", "25", "8Gi", 2)}));
  EXPECT_EQ(ResultsOf(*report, "ml/infer-2", "gpu"),
            Json::array({Result("gpu", "h100-dra", "gpu-0", "25", "8Gi", 3)}));
  // gpu-0 of the H100 node has no cores left, so b's 60 % needs gpu-1 and
  // a's 30 % would only fit gpu-1 too -- which distinctAttribute forbids:
  // the claim goes to the A100 node, on two GPUs.
  EXPECT_EQ(ResultsOf(*report, "ml/two-gpus", "gpus"),
            Json::array({Result("a", "a100-dra", "gpu-0", "30", "4Gi", 4),
                         Result("b", "a100-dra", "gpu-1", "60", "8Gi", 5)}));
  Json claims = PlacementOf(*report, "ml/infer-1")["claims"];
  ASSERT_THAT(claims, SizeIs(1));
  EXPECT_EQ(claims[0]["claim"], "ml/infer-1-gpu");  // made from the template
  // The device plugin pod on the annotated node of the same cluster.
  Json notebook = PlacementOf(*report, "ml/notebook");
  ASSERT_FALSE(notebook.is_null());
  EXPECT_EQ(notebook["node"], "a30-1");
  EXPECT_FALSE(notebook.contains("claims"));
  // Reasons per node for the claim no GPU can hold.
  Json too_big = UnschedulableOf(*report, "ml/too-big");
  ASSERT_FALSE(too_big.is_null());
  EXPECT_EQ(too_big["reason_counts"],
            Json::parse(R"({"DevicesUnavailable": 2, "NoDraDevices": 1})"));
  EXPECT_THAT(too_big["reasons"]["a100-dra"].get<std::string>(),
              HasSubstr("above the maximum"));
  EXPECT_THAT(too_big["reasons"]["a30-1"].get<std::string>(),
              HasSubstr("publishes no DRA device"));
  const Json& summary = (*report)["summary"];
  EXPECT_EQ(summary["placed"], 5);
  EXPECT_EQ(summary["gpus"], 8);  // 6 published + 2 annotated
  // 50+25+25+30+60 of the DRA GPUs and 20 % of an A30, of 800.
  EXPECT_EQ(summary["gpu_cores_allocated"], 210);
}

TEST(SimulateDraTest, ObjectFormSlicesClassesAndAnAllocatedClaim) {
  const std::string cluster = R"(
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: any-gpu}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
---
apiVersion: v1
kind: List
items:
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: n1-gpus}
  spec:
    driver: gpu.example.com
    nodeName: n1
    pool: {name: n1, generation: 1, resourceSliceCount: 1}
    devices:
    - name: gpu-0
      allowMultipleAllocations: true
      capacity:
        memory: {value: 16Gi, requestPolicy: {default: 16Gi, validRange: {min: 1Gi, step: 1Gi}}}
    - name: gpu-1
      capacity: {memory: {value: 16Gi}}
)";
  const std::string pods = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: half, namespace: default}
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: any-gpu, capacity: {requests: {memory: 7500Mi}}}}
---
apiVersion: v1
kind: Pod
metadata: {name: p1}
spec:
  resourceClaims: [{name: gpu, resourceClaimName: half}]
  containers: [{name: main, image: x}]
---
apiVersion: v1
kind: Pod
metadata: {name: p2}
spec:
  resourceClaims: [{name: same, resourceClaimName: half}]
  containers: [{name: main, image: x}]
)";
  auto report = SimulateJson(cluster, pods);
  ASSERT_OK(report);
  // 7500Mi rounds up to the 1Gi step: 8Gi of gpu-0 (best fit prefers the
  // shared GPU the request leaves least of; a dedicated one counts whole).
  Json expected = Json::parse(R"([{"request": "gpu",
      "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0",
      "consumedCapacity": {"memory": "8Gi"},
      "shareID": "00000000-0000-4000-8000-000000000001"}])");
  EXPECT_EQ(ResultsOf(*report, "p1", "gpu"), expected);
  // p2 shares the allocated claim: the same devices, nothing new.
  EXPECT_EQ(ResultsOf(*report, "p2", "same"), expected);
  EXPECT_EQ((*report)["summary"]["gpu_memory_allocated_mib"], 8192);
}

TEST(SimulateDraTest, MissingTemplateLeavesThePodWaitingWithANote) {
  const std::string cluster = R"(
nodes:
- name: n1
  dra: true
  gpus: [{model: "NVIDIA A100-SXM4-80GB", memory_mib: 81920}]
)";
  const std::string pods = R"(
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  resourceClaims: [{name: gpu, resourceClaimTemplateName: nowhere}]
  containers: [{name: main, image: x}]
)";
  auto report = SimulateJson(cluster, pods);
  ASSERT_OK(report);
  Json waiting = UnschedulableOf(*report, "ml/p");
  ASSERT_FALSE(waiting.is_null());
  EXPECT_THAT(waiting["reasons"]["n1"].get<std::string>(),
              HasSubstr("ClaimNotReady claim gpu of pod ml/p (template "
                        "nowhere) is not created yet"));
  bool noted = false;
  for (const Json& note : (*report)["notes"]) {
    noted |= note.get<std::string>().find(
                 "ResourceClaimTemplate ml/nowhere is not in the pods "
                 "file") != std::string::npos;
  }
  EXPECT_TRUE(noted);
}

TEST(SimulateDraTest, BadDraObjectsNameTheFileDocumentAndField) {
  const std::string cluster = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    capacity: {memory: {value: lots}}
)";
  EXPECT_THAT(
      SimulateJson(cluster,
                   "apiVersion: v1\nkind: Pod\n"
                   "metadata: {name: p}\nspec: {}\n")
          .status(),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("cluster.yaml"), HasSubstr("ResourceSlice: "),
                     HasSubstr("\"lots\" is not a quantity"))));
  const std::string claim = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests: [{name: GPU, exactly: {deviceClassName: x}}]
)";
  EXPECT_THAT(
      SimulateJson("nodes: [{name: n1, dra: true}]\n", claim).status(),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("pods.yaml"), HasSubstr("ResourceClaim: "),
                     HasSubstr("\"GPU\" is not a DNS label"))));
}

TEST(SimulateDraTest, DraFlagTurnsGpuRequestsIntoClaims) {
  const std::string cluster = R"(
nodes:
- name: n1
  gpus: [{model: "NVIDIA A100-SXM4-80GB", memory_mib: 81920, count: 2}]
)";
  const std::string pods = testing::Docs(
      {testing::PodYaml("share",
                        "nvidia.com/gpu: 1, nvidia.com/gpumem: "
                        "10240, nvidia.com/gpucores: 30"),
       testing::PodYaml("pair", "nvidia.com/gpu: 2, nvidia.com/gpumem: 1024"),
       testing::PodYaml("whole",
                        "nvidia.com/gpu: 1, nvidia.com/gpucores: "
                        "100")});
  simulate::SimulateOptions options;
  options.dra = true;
  auto report = SimulateJson(cluster, pods, "", options);
  ASSERT_OK(report);
  EXPECT_EQ(ResultsOf(*report, "share", "main"),
            Json::array({Result("gpu", "n1", "gpu-0", "30", "10Gi", 1)}));
  // Two GPUs: distinct devices; 0 cores asks the 1 % minimum.
  Json pair = ResultsOf(*report, "pair", "main");
  ASSERT_THAT(pair, SizeIs(2));
  EXPECT_NE(pair[0]["device"], pair[1]["device"]);
  EXPECT_EQ(pair[0]["consumedCapacity"]["cores"], "1");
  // No GPU has all its memory and cores left after the pair: whole waits.
  Json whole = UnschedulableOf(*report, "whole");
  ASSERT_FALSE(whole.is_null());
  EXPECT_EQ(whole["reason_counts"],
            Json::parse(R"({"DevicesUnavailable": 1})"));
  EXPECT_EQ(PlacementOf(*report, "share")["containers"][0]["devices"],
            Json::array());

  const std::string percent =
      testing::PodYaml("half",
                       "nvidia.com/gpu: 1, "
                       "nvidia.com/gpumem-percentage: 50");
  EXPECT_THAT(SimulateJson(cluster, percent, "", options).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--dra: pod default/half container main "
                                 "asks 50% of a GPU's memory")));
}

TEST(SimulateDraTest, DefaultClassesAreTheDeployExamplesClasses) {
  // simulate's defaults must stay what deploy/dra installs.
  std::vector<dra::DeviceClass> deployed;
  auto documents =
      ParseYamlDocuments(ReadExample("deploy/dra/deviceclasses.yaml"));
  ASSERT_OK(documents);
  for (const nlohmann::json& document : *documents) {
    auto decoded = dra::DecodeDeviceClass(document);
    ASSERT_OK(decoded);
    deployed.push_back(*decoded);
  }
  EXPECT_EQ(simulate::DefaultDeviceClasses(), deployed);
}

}  // namespace
}  // namespace deviceshare
