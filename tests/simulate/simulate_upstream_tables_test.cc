// HAMi's and Volcano's own unit-test suites, restated as data fed to
// `simulate` (issue 22; inventory in docs/reference/upstream-cases.md): one
// table per upstream suite, each row naming the upstream test it restates
// (file:line at the inventory's commits, and the case). Nothing here is
// upstream code: the scenarios are our pods, nodes and records, and the
// expectations are what upstream's assertions say, observed through the
// report (placements, summary, pending reasons).
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simulate_fixtures.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::Docs;
using ::deviceshare::testing::Gpus;
using ::deviceshare::testing::PlacementOf;
using ::deviceshare::testing::ShortCluster;
using ::deviceshare::testing::ShortNode;
using ::deviceshare::testing::SimulateJson;
using ::deviceshare::testing::UnschedulableOf;
using ::testing::HasSubstr;
using Json = nlohmann::ordered_json;
using Annotations = std::vector<std::pair<std::string, std::string>>;

constexpr char kHamiRecord[] = "hami.io/vgpu-devices-allocated";
constexpr char kVolcanoRecord[] = "volcano.sh/vgpu-ids-new";

// One container of a pod; `limits` and `requests` are YAML flow-mapping
// bodies, "" for none.
struct Container {
  std::string name;
  std::string limits;
  std::string requests = "";
  bool init = false;
};

// A pod "default/<name>" with `annotations` (values single-quoted) and
// `containers`, bound to `node` unless it is empty: bound with a record,
// simulate charges it before it places the others.
std::string Pod(const std::string& name, const Annotations& annotations,
                const std::vector<Container>& containers,
                const std::string& node = "") {
  std::string out =
      absl::StrCat("apiVersion: v1\nkind: Pod\nmetadata:\n  name: ", name,
                   "\n  namespace: default\n");
  if (!annotations.empty()) {
    absl::StrAppend(&out, "  annotations:\n");
    for (const auto& [key, value] : annotations) {
      absl::StrAppend(&out, "    ", key, ": '", value, "'\n");
    }
  }
  absl::StrAppend(&out, "spec:\n");
  if (!node.empty()) absl::StrAppend(&out, "  nodeName: ", node, "\n");
  for (bool init : {true, false}) {
    bool any = false;
    for (const Container& c : containers) {
      if (c.init != init) continue;
      if (!any) {
        absl::StrAppend(&out, init ? "  initContainers:\n" : "  containers:\n");
        any = true;
      }
      absl::StrAppend(&out, "  - name: ", c.name, "\n    image: x\n");
      if (c.limits.empty() && c.requests.empty()) continue;
      absl::StrAppend(&out, "    resources:\n");
      if (!c.limits.empty()) {
        absl::StrAppend(&out, "      limits: {", c.limits, "}\n");
      }
      if (!c.requests.empty()) {
        absl::StrAppend(&out, "      requests: {", c.requests, "}\n");
      }
    }
  }
  return out;
}

// A pod bound to node n with the HAMi record `record` and one container
// asking `limits`.
std::string HamiBound(const std::string& name, const std::string& record,
                      const std::string& limits) {
  return Pod(name, {{kHamiRecord, record}}, {{"main", limits}}, "n");
}

// HAMi limits for one GPU with `memory_mib` and `cores`.
std::string HamiAsk(int memory_mib, int cores) {
  return absl::StrCat("nvidia.com/gpu: 1, nvidia.com/gpumem: ", memory_mib,
                      ", nvidia.com/gpucores: ", cores);
}

// The first device of `pod`'s first container, or null.
Json DeviceOf(const Json& report, const std::string& pod) {
  const Json placement = PlacementOf(report, pod);
  if (placement.is_null()) return nullptr;
  return placement["containers"][0]["devices"][0];
}

// What the running pods hold on a node: memory and cores from the report's
// summary, slots as the probes (1 MiB, 0 cores each) that no longer fit.
struct Usage {
  int64_t memory_mib = -1;
  int64_t cores = -1;
  int slots = -1;
};

Usage UsageOf(const std::string& cluster, const std::vector<std::string>& pods,
              int free_slots_when_idle) {
  std::vector<std::string> docs = pods;
  for (int i = 0; i < free_slots_when_idle; ++i) {
    docs.push_back(Pod(absl::StrCat("probe", i), {},
                       {{"main",
                         "nvidia.com/gpu: 1, nvidia.com/gpumem: 1, "
                         "nvidia.com/gpucores: 0"}}));
  }
  Usage usage;
  auto report = SimulateJson(cluster, Docs(docs));
  EXPECT_OK(report);
  if (!report.ok()) return usage;
  const int placed = static_cast<int>((*report)["placements"].size());
  usage.memory_mib =
      (*report)["summary"]["gpu_memory_allocated_mib"].get<int64_t>() - placed;
  usage.cores = (*report)["summary"]["gpu_cores_allocated"].get<int64_t>();
  usage.slots = free_slots_when_idle - placed;
  return usage;
}

// HAMi's pkg/scheduler/scheduler_test.go (getNodesUsage, onAddPod) and the
// record rules of pkg/device/devices.go DecodeContainerDevices and
// initContainer.go CollapseInitContainerUsage, restated (inventory rows E*):
// a node n with GPUs GPU0 and GPU1 (102400 MiB, split 10) and running pods
// whose records HAMi charges; what the node then holds.
//
// Not ported, because simulate refuses such a running pod as an input error
// for the whole run, where HAMi skips the entry or the pod and schedules
// the rest (the C API's bind refuses the pod alone and charges nothing,
// which agrees): E4 (:175 Test_getNodesUsage_StalePodDeviceAllocation
// StaleOnly / MixedStaleAndValid / MultipleDevices, a record naming a GPU
// the node lacks) and E5 (:2936 Test_onAddPod_BadDeviceAnnotation, an
// entry of 3 fields).
TEST(SimulateUpstreamTableTest, HamiSchedulerNodesUsage) {
  struct Row {
    const char* upstream;
    std::vector<std::string> running;
    Usage want;
  };
  const std::string gpu = HamiAsk(1000, 10);
  const Row rows[] = {
      {"scheduler_test.go:56 Test_getNodesUsage: two pods of 100 MiB, 10 "
       "cores on GPU0",
       {HamiBound("test1", "GPU0,NVIDIA,100,10:;", HamiAsk(100, 10)),
        HamiBound("test2", "GPU0,NVIDIA,100,10:;", HamiAsk(100, 10))},
       {200, 20, 2}},
      {"E1 scheduler_test.go:2859 Test_getNodesUsage_WithInitContainers: "
       "init and app on GPU0 hold the peak, not the sum",
       {Pod(
           "initpod",
           {{kHamiRecord, "GPU0,NVIDIA,20000,10:;GPU0,NVIDIA,10000,5:;"}},
           {{"init", HamiAsk(20000, 10), "", true}, {"app", HamiAsk(10000, 5)}},
           "n")},
       {20000, 10, 1}},
      {"E2 scheduler_test.go:2901 "
       "Test_getNodesUsage_WithMultipleAppContainersSharingDevice: two app "
       "containers on GPU0 take two slots",
       {Pod("apppod",
            {{kHamiRecord, "GPU0,NVIDIA,10000,5:;GPU0,NVIDIA,10000,5:;"}},
            {{"app0", HamiAsk(10000, 5)}, {"app1", HamiAsk(10000, 5)}}, "n")},
       {20000, 10, 2}},
      {"E3 initContainer.go:36 CollapseInitContainerUsage: per GPU "
       "max(init, sum of apps): init on GPU0, app on GPU1",
       {Pod(
           "split",
           {{kHamiRecord, "GPU0,NVIDIA,20000,10:;GPU1,NVIDIA,10000,5:;"}},
           {{"init", HamiAsk(20000, 10), "", true}, {"app", HamiAsk(10000, 5)}},
           "n")},
       {30000, 15, 2}},
      {"E4 scheduler_test.go:175 Test_getNodesUsage_StalePodDeviceAllocation "
       "ValidOnly: a record naming a GPU the node has",
       {HamiBound("valid-pod", "GPU0,NVIDIA,200,20:;", HamiAsk(200, 20))},
       {200, 20, 1}},
      {"E6 devices.go:507 DecodeContainerDevices: a fifth field is ignored",
       {HamiBound("p", "GPU0,NVIDIA,1000,10,extra:;", gpu)},
       {1000, 10, 1}},
      {"E7 devices.go:506 DecodeContainerDevices: the type field is not "
       "checked",
       {HamiBound("p", "GPU0,NVIDIA-A100,1000,10:;", gpu)},
       {1000, 10, 1}},
      {"E8 devices.go:500 DecodeContainerDevices: no ':' after the last "
       "device",
       {HamiBound("p", "GPU0,NVIDIA,1000,10;", gpu)},
       {1000, 10, 1}},
      {"E9 devices.go:541 DecodePodDevices: no ';' after the last container",
       {HamiBound("p", "GPU0,NVIDIA,1000,10:", gpu)},
       {1000, 10, 1}},
      {"E10 devices.go:541 DecodePodDevices: an empty entry (';;') for a "
       "container without GPUs",
       {Pod("p", {{kHamiRecord, "GPU0,NVIDIA,1000,10:;;"}},
            {{"gpu", gpu}, {"sidecar", ""}}, "n")},
       {1000, 10, 1}},
      {"E11 devices.go:541 DecodePodDevices: positional, no count check: two "
       "GPU containers, one entry",
       {Pod("p", {{kHamiRecord, "GPU0,NVIDIA,1000,10:;"}},
            {{"a", gpu}, {"b", gpu}}, "n")},
       {1000, 10, 1}},
      {"E12 nvidia/device.go:167: -to-allocate emptied by the device plugin, "
       "-allocated kept",
       {Pod("p",
            {{kHamiRecord, "GPU0,NVIDIA,1000,10:;"},
             {"hami.io/vgpu-devices-to-allocate", ";"}},
            {{"main", gpu}}, "n")},
       {1000, 10, 1}},
  };
  const std::string cluster = ShortCluster({ShortNode(
      "n",
      "  - {model: \"NVIDIA A100-SXM4-80GB\", memory_mib: 102400, uuid: GPU0}\n"
      "  - {model: \"NVIDIA A100-SXM4-80GB\", memory_mib: 102400, uuid: "
      "GPU1}\n")});
  for (const Row& row : rows) {
    SCOPED_TRACE(row.upstream);
    const Usage usage = UsageOf(cluster, row.running, 20);
    EXPECT_EQ(usage.memory_mib, row.want.memory_mib);
    EXPECT_EQ(usage.cores, row.want.cores);
    EXPECT_EQ(usage.slots, row.want.slots);
  }
}

// A node n with `count` GPUs GPU-n-<i> of 11264 MiB (split 10), the card of
// HAMi's device_test.go; `extra` adds short-form keys to each.
std::string CardNode(int count, const std::string& extra = "") {
  return ShortCluster({ShortNode(
      "n", Gpus("n", count, 11264, "NVIDIA A100-SXM4-80GB", extra))});
}

// Node n with one 11264 MiB GPU on NUMA node 0 and one on NUMA node 1: a
// two-GPU pod bound to one NUMA node fits nowhere.
std::string TwoNumaNode() {
  return ShortCluster({ShortNode(
      "n", absl::StrCat(
               Gpus("n", 1, 11264, "NVIDIA A100-SXM4-80GB", "numa: 0"),
               Gpus("n", 1, 11264, "NVIDIA A100-SXM4-80GB", "numa: 1", 1)))});
}

// A pod "p" with one container asking `limits` and `requests`, and
// `annotations`.
std::string AskPod(const std::string& limits, const std::string& requests = "",
                   const Annotations& annotations = {}) {
  return Pod("p", annotations, {{"main", limits, requests}});
}

// HAMi's pkg/device/nvidia/device_test.go request and webhook cases
// (TestGenerateResourceRequests*, TestMutateAdmission*,
// TestMutateAdmissionDefaultsExclusiveCore), restated as what the pod gets
// on the test's card once HAMi's webhook and scheduler have both run
// (inventory rows A*): deviceshare has no webhook, so the raw pod must come
// out as HAMi's system places it. -1 = not checked.
//
// Not ported: A20 (:1962/:1974 byte-scale gpumem "16Gi"), a deliberate
// difference: HAMi drops the GPU request and runs the container without a
// limit, deviceshare keeps the pod pending (tested in simulate_upstream_test.cc
// DeliberateDifferencesKeepTheSafeBooking; docs/compatibility.md). The "1Gi
// rejected" half of A21 is the same rule. A27 (runtimeClassName) and A28
// (overwriteEnv) are not in this table's brief.
struct WebhookRow {
  std::string upstream;
  std::string cluster;
  std::string config;
  std::vector<std::string> running;
  std::string pod;
  int devices;  // GPUs the container gets; 0 = pending
  int64_t memory_mib;
  int64_t cores;
  std::string env_key;  // "" = no env check
  std::string env_value;
  std::string pending_code;  // when devices == 0
};

void CheckWebhookRows(const std::vector<WebhookRow>& rows) {
  for (const WebhookRow& row : rows) {
    SCOPED_TRACE(row.upstream);
    std::vector<std::string> docs = row.running;
    docs.push_back(row.pod);
    auto report = SimulateJson(row.cluster, Docs(docs), row.config);
    ASSERT_OK(report);
    const Json placement = PlacementOf(*report, "p");
    if (row.devices == 0) {
      EXPECT_TRUE(placement.is_null()) << report->dump(1);
      EXPECT_THAT(UnschedulableOf(*report, "p")["reason_counts"].dump(),
                  HasSubstr(row.pending_code));
      continue;
    }
    ASSERT_FALSE(placement.is_null()) << report->dump(1);
    const Json container = placement["containers"][0];
    ASSERT_EQ(container["devices"].size(), row.devices) << report->dump(1);
    for (const Json& device : container["devices"]) {
      if (row.memory_mib >= 0) {
        EXPECT_EQ(device["memory_mib"], row.memory_mib);
      }
      if (row.cores >= 0) {
        EXPECT_EQ(device["cores"], row.cores);
      }
    }
    if (!row.env_key.empty()) {
      EXPECT_EQ(container["env"][row.env_key], row.env_value)
          << container["env"].dump();
    }
  }
}

TEST(SimulateUpstreamTableTest, HamiWebhookRequestsPart1) {
  const std::string card = CardNode(1);
  const std::vector<WebhookRow> rows = {
      {"A1 device_test.go:1738 TestGenerateResourceRequests \"gpu count only\""
       " / :248 TestMutateAdmissionDefaultsExclusiveCore \"no memory fields\"",
       card,
       "",
       {},
       AskPod("nvidia.com/gpu: 1"),
       1,
       11264,
       100},
      {"A2 :1755 \"gpu count + explicit memory\" / :276 \"memory size present "
       "treated as shareable\"",
       CardNode(2),
       "",
       {},
       AskPod("nvidia.com/gpu: 2, nvidia.com/gpumem: 4096"),
       2,
       4096,
       0},
      {"A3 :1773 \"gpu count + memory percentage\" / :239 \"non-exclusive "
       "percentage\"",
       card,
       "",
       {},
       AskPod("nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 50"),
       1,
       5632,
       0},
      {"A4 :219 \"exclusive via percentage\"",
       card,
       "",
       {},
       AskPod("nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 100"),
       1,
       11264,
       100},
      {"A5 :229 \"exclusive via percentage in requests only\"",
       card,
       "",
       {},
       AskPod("", "nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 100"),
       1,
       11264,
       100},
      {"A6 :1889 \"memory percentage of 0 — treated as unset\" / :2055 "
       "TestZeroMemoryPercentageIsAccountedAsWholeCard: whole card, and the "
       "webhook adds no cores (a percentage other than 100 is present)",
       card,
       "",
       {},
       AskPod("nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 0"),
       1,
       11264,
       0},
      {"A7 :1907 \"memory percentage of 0 in Requests\"",
       card,
       "",
       {},
       AskPod("", "nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 0"),
       1,
       11264,
       0},
      {"A8 :2055 TestZeroMemoryPercentageIsAccountedAsWholeCard, almost full "
       "card: CardInsufficientMemory",
       card,
       "",
       {HamiBound("old", "GPU-n-0,NVIDIA,11260,0:;",
                  "nvidia.com/gpu: 1, nvidia.com/gpumem: 11260")},
       AskPod("nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 0"),
       0,
       -1,
       -1,
       "",
       "",
       "InsufficientMemory"},
      {"A9 :1943 \"memory percentage of 0 + explicit memory — explicit "
       "memory wins\"",
       card,
       "",
       {},
       AskPod("nvidia.com/gpu: 1, nvidia.com/gpumem: 2000, "
              "nvidia.com/gpumem-percentage: 0"),
       1,
       2000,
       0},
      {"A10 :2020 TestGenerateResourceRequests_DefaultMemory: defaultMemory "
       "512, and the webhook still adds all cores",
       card,
       "nvidia: {defaultMemory: 512}\n",
       {},
       AskPod("nvidia.com/gpu: 1"),
       1,
       512,
       100},
      {"A11 :2020 TestGenerateResourceRequests_DefaultMemory, percentage 0",
       card,
       "nvidia: {defaultMemory: 512}\n",
       {},
       AskPod("nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 0"),
       1,
       512,
       0},
      {"A11 :2020 TestGenerateResourceRequests_DefaultMemory, gpumem 0",
       card,
       "nvidia: {defaultMemory: 512}\n",
       {},
       AskPod("nvidia.com/gpu: 1, nvidia.com/gpumem: 0"),
       1,
       512,
       0},
      {"A12 :257 \"explicit cores remains unchanged\"",
       card,
       "",
       {},
       AskPod("nvidia.com/gpu: 1, nvidia.com/gpucores: 70"),
       1,
       11264,
       70},
      {"A12 :267 \"explicit cores in requests remains unchanged\"",
       card,
       "",
       {},
       AskPod("", "nvidia.com/gpu: 1, nvidia.com/gpucores: 55"),
       1,
       11264,
       55},
  };
  CheckWebhookRows(rows);
}

TEST(SimulateUpstreamTableTest, HamiWebhookRequestsPart2) {
  const std::string card = CardNode(1);
  const std::string gpu1 = "nvidia.com/gpu: 1";
  const std::vector<WebhookRow> rows = {
      {"A13 nvidia/device.go:579 GenerateResourceRequests: defaultCores 30 for "
       "a container naming memory",
       card,
       "nvidia: {defaultCores: 30}\n",
       {},
       AskPod("nvidia.com/gpu: 1, nvidia.com/gpumem: 1000"),
       1,
       1000,
       30},
      {"A14 same, count only: the webhook's 100 cores come first",
       card,
       "nvidia: {defaultCores: 30}\n",
       {},
       AskPod(gpu1),
       1,
       11264,
       100},
      {"A15 :285 \"memory name empty treated as exclusive\"",
       card,
       "nvidia: {resourceMemoryName: \"\"}\n",
       {},
       AskPod(gpu1),
       1,
       11264,
       100},
      {"A16 :300 \"custom resource names\"",
       card,
       "nvidia: {resourceCountName: hami.io/gpu, resourceMemoryName: "
       "hami.io/gpumem, resourceMemoryPercentageName: "
       "hami.io/gpumem-percentage, resourceCoreName: hami.io/gpucores}\n",
       {},
       AskPod("hami.io/gpu: 1, hami.io/gpumem-percentage: 100"),
       1,
       11264,
       100},
      {"A17 :64 Test_MutateAdmission, cores only: defaultGPUNum GPUs added",
       card,
       "",
       {},
       AskPod("nvidia.com/gpucores: 1"),
       1,
       11264,
       1},
      {"A17 :76 Test_MutateAdmission, memory only",
       card,
       "",
       {},
       AskPod("nvidia.com/gpumem: 1"),
       1,
       1,
       0},
      {"A17 :88 Test_MutateAdmission, percentage only",
       card,
       "",
       {},
       AskPod("nvidia.com/gpumem-percentage: 1"),
       1,
       112,
       0},
      {"A18 :1827 \"memory percentage equal to sentinel 101 — clamped to "
       "100\" (the webhook, :156, would deny it)",
       card,
       "",
       {},
       AskPod("nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 101"),
       1,
       11264,
       -1},
      {"A18 :1791 \"memory percentage above 100 — clamped to 100\"",
       card,
       "",
       {},
       AskPod("nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 150"),
       1,
       11264,
       -1},
      {"A18 :1809 \"memory percentage beyond int32 range — clamped\"",
       card,
       "",
       {},
       AskPod("nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 4294967346"),
       1,
       11264,
       -1},
      {"A19 :1925 \"negative memory percentage — treated as unset\"",
       card,
       "",
       {},
       AskPod("nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: -1"),
       1,
       11264,
       -1},
      {"A21 :1995 TestGenerateResourceRequests_MemoryFactor: memoryFactor 2",
       card,
       "nvidia: {memoryFactor: 2}\n",
       {},
       AskPod("nvidia.com/gpu: 1, nvidia.com/gpumem: 1024"),
       1,
       2048,
       -1},
      {"A22 :984 TestDevices_Fit \"fit success: but core limit can't exceed "
       "100\" (the inventory says :1984)",
       card,
       "",
       {},
       AskPod("nvidia.com/gpu: 1, nvidia.com/gpumem: 512, "
              "nvidia.com/gpucores: 120"),
       1,
       512,
       100},
      {"A23 :1590 TestAssertNuma \"NumaBind invalid value\": ignored, so two "
       "GPUs across NUMA nodes fit",
       TwoNumaNode(),
       "",
       {},
       AskPod("nvidia.com/gpu: 2, nvidia.com/gpumem: 1000", "",
              {{"nvidia.com/numa-bind", "notabool"}}),
       2,
       1000,
       -1},
      {"A23 same, \"yes\" is not a Go bool",
       TwoNumaNode(),
       "",
       {},
       AskPod("nvidia.com/gpu: 2, nvidia.com/gpumem: 1000", "",
              {{"nvidia.com/numa-bind", "yes"}}),
       2,
       1000,
       -1},
      {"A23 :1585 TestAssertNuma \"NumaBind=false does not enforce\"",
       TwoNumaNode(),
       "",
       {},
       AskPod("nvidia.com/gpu: 2, nvidia.com/gpumem: 1000", "",
              {{"nvidia.com/numa-bind", "false"}}),
       2,
       1000,
       -1},
  };
  CheckWebhookRows(rows);
}

TEST(SimulateUpstreamTableTest, HamiWebhookRequestsPart3) {
  const std::string card = CardNode(1);
  const std::string two = "nvidia.com/gpu: 2, nvidia.com/gpumem: 1000";
  std::vector<WebhookRow> rows;
  // A24: nvidia/device.go:485 assertNuma parses with strconv.ParseBool.
  for (const char* truth : {"1", "t", "TRUE", "true"}) {
    rows.push_back(
        {absl::StrCat("A24 device.go:485 assertNuma: strconv.ParseBool(\"",
                      truth, "\") is true"),
         TwoNumaNode(),
         "",
         {},
         AskPod(two, "", {{"nvidia.com/numa-bind", truth}}),
         0,
         -1,
         -1,
         "",
         "",
         "NumaNotFit"});
  }
  rows.push_back({"A25 :2289 TestMutateAdmission_Priority",
                  card,
                  "",
                  {},
                  AskPod("nvidia.com/gpu: 1, nvidia.com/gpumem: 1000, "
                         "nvidia.com/priority: 5"),
                  1,
                  1000,
                  -1,
                  "CUDA_TASK_PRIORITY",
                  "5"});
  rows.push_back({"A26 :2321 TestMutateAdmission_CorePolicy",
                  card,
                  "nvidia: {gpuCorePolicy: force}\n",
                  {},
                  AskPod("nvidia.com/gpu: 1, nvidia.com/gpumem: 1000"),
                  1,
                  1000,
                  -1,
                  "GPU_CORE_UTILIZATION_POLICY",
                  "force"});
  rows.push_back(
      {"A29 upstream-hami.md §2.4 (#2862): gpumem as a pod annotation is not "
       "a resource",
       card,
       "",
       {},
       AskPod("nvidia.com/gpu: 1", "", {{"nvidia.com/gpumem", "1000"}}),
       1,
       11264,
       100});
  CheckWebhookRows(rows);
}

}  // namespace
}  // namespace deviceshare
