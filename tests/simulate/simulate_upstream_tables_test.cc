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
#include "absl/strings/str_replace.h"
#include "deviceshare/simulate/table_report.h"
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
// whose records HAMi charges; what the node then holds. A running pod
// whose record HAMi cannot charge (E4, E5) holds nothing and the others
// are still served: simulate lists it as unaccounted and goes on.
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
      {"E4 scheduler_test.go:225 Test_getNodesUsage_StalePodDeviceAllocation "
       "ValidOnly: a record naming a GPU the node has",
       {HamiBound("valid-pod", "GPU0,NVIDIA,200,20:;", HamiAsk(200, 20))},
       {200, 20, 1}},
      {"E4 scheduler_test.go:176 Test_getNodesUsage_StalePodDeviceAllocation "
       "StaleOnly: a record naming only a GPU the node lacks holds nothing",
       {HamiBound("stale", "GPU-A,NVIDIA,100,10:;", HamiAsk(100, 10))},
       {0, 0, 0}},
      {"E4 :272 ...MixedStaleAndValid: a stale pod beside a valid one; only "
       "the valid one is charged",
       {HamiBound("stale", "GPU-A,NVIDIA,100,10:;", HamiAsk(100, 10)),
        HamiBound("valid", "GPU0,NVIDIA,200,20:;", HamiAsk(200, 20))},
       {200, 20, 1}},
      {"E4 :334 ...MultipleDevices: a stale record poisons neither GPU",
       {HamiBound("stale", "GPU-Z,NVIDIA,100,10:;", HamiAsk(100, 10))},
       {0, 0, 0}},
      {"E5 :2936 Test_onAddPod_BadDeviceAnnotation: an entry of 3 fields; "
       "the pod is not added",
       {HamiBound("bad", "GPU0,NVIDIA,100:;", HamiAsk(100, 10))},
       {0, 0, 0}},
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
  // The pod left out is named with its reason, beside the one charged.
  auto report = SimulateJson(
      cluster,
      Docs({HamiBound("bad", "GPU0,NVIDIA,100:;", HamiAsk(100, 10)),
            HamiBound("valid", "GPU0,NVIDIA,200,20:;", HamiAsk(200, 20))}));
  ASSERT_OK(report);
  ASSERT_EQ((*report)["unaccounted"].size(), 1) << report->dump(1);
  EXPECT_EQ((*report)["unaccounted"][0]["pod"], "default/bad");
  EXPECT_EQ((*report)["unaccounted"][0]["node"], "n");
  EXPECT_THAT((*report)["unaccounted"][0]["reason"].get<std::string>(),
              HasSubstr("GPU0,NVIDIA,100"));
  EXPECT_EQ((*report)["summary"]["gpu_memory_allocated_mib"], 200);

  // The table output names it above the summary, details or not.
  simulate::SimulateOptions options;
  options.cluster_path =
      ::deviceshare::testing::WriteTempFile("c.yaml", cluster);
  options.pods_path = ::deviceshare::testing::WriteTempFile(
      "p.yaml", HamiBound("bad", "GPU0,NVIDIA,100:;", HamiAsk(100, 10)));
  auto run = simulate::Simulate(options);
  ASSERT_OK(run);
  const std::string table =
      simulate::ReportTable(*run, simulate::TableOptions{.details = false});
  EXPECT_THAT(table, HasSubstr("Running pods not charged (1)\n  default/bad "
                               "on n: "));

  // A pod bound to a node the cluster file lacks is listed too, not
  // dropped in silence under a note that says it is charged.
  auto ghost = SimulateJson(
      cluster, Docs({absl::StrReplaceAll(
                   HamiBound("ghost", "GPU0,NVIDIA,200,20:;", HamiAsk(200, 20)),
                   {{"nodeName: n", "nodeName: gone"}})}));
  ASSERT_OK(ghost);
  ASSERT_EQ((*ghost)["unaccounted"].size(), 1) << ghost->dump(1);
  EXPECT_EQ((*ghost)["unaccounted"][0]["node"], "gone");
  EXPECT_THAT((*ghost)["unaccounted"][0]["reason"].get<std::string>(),
              HasSubstr("node gone is not in the cluster"));
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
// out as HAMi's system places it.
//
// Not ported: A20 (:1962/:1974 byte-scale gpumem "16Gi"), a deliberate
// difference: HAMi drops the GPU request and runs the container without a
// limit, deviceshare keeps the pod pending (tested in
// simulate_upstream_test.cc DeliberateDifferencesKeepTheSafeBooking;
// docs/compatibility.md). The "1Gi rejected" half of A21 is the same rule.
// A27 (runtimeClassName: deviceshare does not mutate pods) and A28
// (overwriteEnv, tested in simulate_upstream_test.cc) are not in this
// table.
struct WebhookRow {
  std::string upstream;
  std::string pod;
  int devices = 1;          // GPUs the container gets; 0 = pending
  int64_t memory_mib = -1;  // each GPU's; -1 = not checked
  int64_t cores = -1;
  std::string config = "";
  std::string cluster = CardNode(1);
  std::vector<std::string> running = {};
  std::string env_key = "";  // "" = no env check
  std::string env_value = "";
  std::string pending_code = "";  // when devices == 0
};

// A row whose pod gets `devices` GPUs of `memory_mib` and `cores` each.
WebhookRow Gets(std::string upstream, std::string pod, int devices,
                int64_t memory_mib, int64_t cores, std::string config = "") {
  WebhookRow row;
  row.upstream = std::move(upstream);
  row.pod = std::move(pod);
  row.devices = devices;
  row.memory_mib = memory_mib;
  row.cores = cores;
  row.config = std::move(config);
  return row;
}

// `row` on `cluster` beside the running pods `running`.
WebhookRow On(WebhookRow row, std::string cluster,
              std::vector<std::string> running = {}) {
  row.cluster = std::move(cluster);
  row.running = std::move(running);
  return row;
}

// `row` whose container env must hold `key`=`value`.
WebhookRow WithEnv(WebhookRow row, std::string key, std::string value) {
  row.env_key = std::move(key);
  row.env_value = std::move(value);
  return row;
}

// A row whose pod stays pending with `code`.
WebhookRow Pending(std::string upstream, std::string pod, std::string code) {
  WebhookRow row;
  row.upstream = std::move(upstream);
  row.pod = std::move(pod);
  row.devices = 0;
  row.pending_code = std::move(code);
  return row;
}

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
  const std::string gpu1 = "nvidia.com/gpu: 1";
  const std::string pct0 = "nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 0";
  const std::string default_memory = "nvidia: {defaultMemory: 512}\n";
  const std::vector<WebhookRow> rows = {
      Gets("A1 device_test.go:1738 TestGenerateResourceRequests \"gpu count "
           "only\" / :248 TestMutateAdmissionDefaultsExclusiveCore \"no "
           "memory fields defaults to exclusive\"",
           AskPod(gpu1), 1, 11264, 100),
      On(Gets("A2 :1755 \"gpu count + explicit memory\" / :276 \"memory size "
              "present treated as shareable\"",
              AskPod("nvidia.com/gpu: 2, nvidia.com/gpumem: 4096"), 2, 4096, 0),
         CardNode(2)),
      Gets("A3 :1773 \"gpu count + memory percentage\" / :239 "
           "\"non-exclusive percentage\"",
           AskPod("nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 50"), 1,
           5632, 0),
      Gets("A4 :219 \"exclusive via percentage\"",
           AskPod("nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 100"), 1,
           11264, 100),
      Gets("A5 :229 \"exclusive via percentage in requests only\"",
           AskPod("", "nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 100"),
           1, 11264, 100),
      Gets("A6 :1889 \"memory percentage of 0 — treated as unset\" / :2055 "
           "TestZeroMemoryPercentageIsAccountedAsWholeCard: whole card, and "
           "the webhook adds no cores (a percentage other than 100 is there)",
           AskPod(pct0), 1, 11264, 0),
      Gets("A7 :1907 \"memory percentage of 0 in Requests\"", AskPod("", pct0),
           1, 11264, 0),
      On(Pending("A8 :2055 TestZeroMemoryPercentageIsAccountedAsWholeCard, "
                 "almost full card: CardInsufficientMemory",
                 AskPod(pct0), "InsufficientMemory"),
         CardNode(1),
         {HamiBound("old", "GPU-n-0,NVIDIA,11260,0:;",
                    "nvidia.com/gpu: 1, nvidia.com/gpumem: 11260")}),
      Gets("A9 :1943 \"memory percentage of 0 + explicit memory — explicit "
           "memory wins\"",
           AskPod("nvidia.com/gpu: 1, nvidia.com/gpumem: 2000, "
                  "nvidia.com/gpumem-percentage: 0"),
           1, 2000, 0),
      Gets("A10 :2020 TestGenerateResourceRequests_DefaultMemory: "
           "defaultMemory 512, and the webhook still adds all cores",
           AskPod(gpu1), 1, 512, 100, default_memory),
      Gets("A11 :2020 TestGenerateResourceRequests_DefaultMemory, percentage "
           "0",
           AskPod(pct0), 1, 512, 0, default_memory),
      Gets("A11 :2020 TestGenerateResourceRequests_DefaultMemory, gpumem 0",
           AskPod("nvidia.com/gpu: 1, nvidia.com/gpumem: 0"), 1, 512, 0,
           default_memory),
      Gets("A12 :257 \"explicit cores remains unchanged\"",
           AskPod("nvidia.com/gpu: 1, nvidia.com/gpucores: 70"), 1, 11264, 70),
      Gets("A12 :267 \"explicit cores in requests remains unchanged\"",
           AskPod("", "nvidia.com/gpu: 1, nvidia.com/gpucores: 55"), 1, 11264,
           55),
      Gets("device_test.go:1845 \"gpu count + explicit cores\"",
           AskPod("nvidia.com/gpu: 1, nvidia.com/gpucores: 50"), 1, 11264, 50),
      Gets("device_test.go:1872 \"gpu in Requests (not Limits)\" / :52 "
           "Test_MutateAdmission \"having ResourceName\"",
           AskPod("", gpu1), 1, 11264, 100),
  };
  CheckWebhookRows(rows);
}

TEST(SimulateUpstreamTableTest, HamiWebhookRequestsPart2) {
  const std::string gpu1 = "nvidia.com/gpu: 1";
  const std::string default_cores = "nvidia: {defaultCores: 30}\n";
  auto pct = [](const std::string& value) {
    return AskPod(absl::StrCat(
        "nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: ", value));
  };
  const std::vector<WebhookRow> rows = {
      Gets("A13 nvidia/device.go:579 GenerateResourceRequests: defaultCores "
           "30 for a container naming memory",
           AskPod("nvidia.com/gpu: 1, nvidia.com/gpumem: 1000"), 1, 1000, 30,
           default_cores),
      Gets("A14 same, count only: the webhook's 100 cores come first",
           AskPod(gpu1), 1, 11264, 100, default_cores),
      Gets("A15 :285 \"memory name empty treated as exclusive\"", AskPod(gpu1),
           1, 11264, 100, "nvidia: {resourceMemoryName: \"\"}\n"),
      Gets("A16 :300 \"custom resource names\"",
           AskPod("hami.io/gpu: 1, hami.io/gpumem-percentage: 100"), 1, 11264,
           100,
           "nvidia: {resourceCountName: hami.io/gpu, resourceMemoryName: "
           "hami.io/gpumem, resourceMemoryPercentageName: "
           "hami.io/gpumem-percentage, resourceCoreName: hami.io/gpucores}\n"),
      Gets("A17 :64 Test_MutateAdmission, cores only: defaultGPUNum GPUs "
           "added",
           AskPod("nvidia.com/gpucores: 1"), 1, 11264, 1),
      Gets("A17 :76 Test_MutateAdmission, memory only",
           AskPod("nvidia.com/gpumem: 1"), 1, 1, 0),
      Gets("A17 :88 Test_MutateAdmission, percentage only",
           AskPod("nvidia.com/gpumem-percentage: 1"), 1, 112, 0),
      // A18/A19: HAMi's webhook denies these (:156/:161); the scheduler
      // side, restated here, clamps or ignores them.
      Gets("A18 :1827 \"memory percentage equal to sentinel 101 — clamped "
           "to 100\"",
           pct("101"), 1, 11264, -1),
      Gets("A18 :1791 \"memory percentage above 100 — clamped to 100\"",
           pct("150"), 1, 11264, -1),
      Gets("A18 :1809 \"memory percentage beyond int32 range — clamped\"",
           pct("4294967346"), 1, 11264, -1),
      Gets("A19 :1925 \"negative memory percentage — treated as unset\"",
           pct("-1"), 1, 11264, -1),
      Gets("A21 :1995 TestGenerateResourceRequests_MemoryFactor: "
           "memoryFactor 2",
           AskPod("nvidia.com/gpu: 1, nvidia.com/gpumem: 1024"), 1, 2048, -1,
           "nvidia: {memoryFactor: 2}\n"),
      Gets("A22 :984 TestDevices_Fit \"fit success: but core limit can't "
           "exceed 100\" (the inventory says :1984)",
           AskPod("nvidia.com/gpu: 1, nvidia.com/gpumem: 512, "
                  "nvidia.com/gpucores: 120"),
           1, 512, 100),
      WithEnv(Gets("A25 :2289 TestMutateAdmission_Priority",
                   AskPod("nvidia.com/gpu: 1, nvidia.com/gpumem: 1000, "
                          "nvidia.com/priority: 5"),
                   1, 1000, -1),
              "CUDA_TASK_PRIORITY", "5"),
      WithEnv(Gets("A26 :2321 TestMutateAdmission_CorePolicy",
                   AskPod("nvidia.com/gpu: 1, nvidia.com/gpumem: 1000"), 1,
                   1000, -1, "nvidia: {gpuCorePolicy: force}\n"),
              "GPU_CORE_UTILIZATION_POLICY", "force"),
      Gets("A29 upstream-hami.md §2.4 (#2862): gpumem as a pod annotation is "
           "not a resource",
           AskPod(gpu1, "", {{"nvidia.com/gpumem", "1000"}}), 1, 11264, 100),
  };
  CheckWebhookRows(rows);
}

// The NUMA rows of the same suite (A23, A24): numa-bind is read with Go's
// strconv.ParseBool (nvidia/device.go:485 assertNuma); a value that is not
// a bool is false. On a node with one GPU per NUMA node, a bound two-GPU
// pod stays pending with NumaNotFit and an unbound one gets both GPUs.
TEST(SimulateUpstreamTableTest, HamiWebhookRequestsPart3) {
  auto numa_bind = [](const std::string& value) {
    return AskPod("nvidia.com/gpu: 2, nvidia.com/gpumem: 1000", "",
                  {{"nvidia.com/numa-bind", value}});
  };
  std::vector<WebhookRow> rows = {
      On(Gets("A23 :1590 TestAssertNuma \"NumaBind invalid value\"",
              numa_bind("notabool"), 2, 1000, -1),
         TwoNumaNode()),
      On(Gets("A23 same, \"yes\" is not a Go bool", numa_bind("yes"), 2, 1000,
              -1),
         TwoNumaNode()),
      On(Gets("A23 :1585 TestAssertNuma \"NumaBind=false does not enforce\"",
              numa_bind("false"), 2, 1000, -1),
         TwoNumaNode()),
  };
  for (const char* truth : {"1", "t", "TRUE", "true"}) {
    rows.push_back(On(Pending(absl::StrCat("A24 device.go:485 assertNuma: "
                                           "strconv.ParseBool(\"",
                                           truth, "\") is true"),
                              numa_bind(truth), "NumaNotFit"),
                      TwoNumaNode()));
  }
  CheckWebhookRows(rows);
}

// A node of the node-policy rows: one 16384 MiB GPU GPU-<name>-0, and when
// `memory_mib` > 0 a running pod holding that much and `cores` of it.
struct PolicyNode {
  std::string name;
  int memory_mib;
  int cores;
};

// HAMi's pkg/scheduler/policy/node_policy_test.go, restated. Its
// qualitative rule (TestLess: the node list is sorted, the last taken):
// binpack takes the node with the highest usage score, the busiest; spread
// the lowest, the emptiest; whichever order the nodes come in. The policy
// comes from the config (scheduler.nodePolicy) or the pod
// (hami.io/node-scheduler-policy), as in HAMi.
//
// Not ported, by design (docs/reference/upstream-hami.md §4.3; inventory
// F11 for Volcano's equivalent): TestComputeDefaultScore's figures (25 for
// its two devices): HAMi scores a node 10 x (slot + core + memory
// fractions) summed over all its devices before the pod is placed,
// deviceshare the mean of the fractions as a percent after the tentative
// placement; the two rank nodes of equal capacity alike (below) but can
// part ways across unequal ones (an idle 16 GiB node and an 80 GiB node
// with 10 GiB used, an 8 GiB pod: HAMi's binpack takes the 80 GiB node,
// deviceshare's the 16 GiB node that the pod fills more). Its zero-capacity and
// no-device cases (score 0, no panic) are not a node a GPU pod can go to, so
// there is nothing to observe. TestOverrideScore is about MetaX and Hygon DCU
// backends, which deviceshare does not schedule. TestNodeScoreListLen,
// TestNodeSwap and TestSnapshotDevice test container mechanics, not
// scenarios.
TEST(SimulateUpstreamTableTest, HamiNodePolicy) {
  struct Row {
    const char* upstream;
    const char* policy;
    bool per_pod;  // hami.io/node-scheduler-policy instead of the config
    std::vector<PolicyNode> nodes;
    const char* want_node;
  };
  const PolicyNode idle_a = {"a", 0, 0};
  const PolicyNode busy_b = {"b", 8000, 50};
  const PolicyNode idle_b = {"b", 0, 0};
  const PolicyNode busy_a = {"a", 8000, 50};
  const PolicyNode half_c = {"c", 4000, 20};
  const Row rows[] = {
      {"node_policy_test.go:129 TestLess \"Spread strategy, i score higher\"",
       "spread",
       false,
       {busy_a, idle_b},
       "b"},
      {":142 TestLess \"Spread strategy,j score higher\"",
       "spread",
       false,
       {idle_a, busy_b},
       "a"},
      {":155 TestLess \"Default strategy (Binpack), i score lower\"",
       "binpack",
       false,
       {idle_a, busy_b},
       "b"},
      {":168 TestLess \"Default strategy (Binpack), j score lower\"",
       "binpack",
       false,
       {busy_a, idle_b},
       "a"},
      {"TestLess, spread from the pod's hami.io/node-scheduler-policy",
       "spread",
       true,
       {busy_a, idle_b},
       "b"},
      {"TestLess, binpack from the pod's hami.io/node-scheduler-policy",
       "binpack",
       true,
       {idle_a, busy_b},
       "b"},
      {"TestLess, three nodes, binpack: the busiest",
       "binpack",
       false,
       {idle_a, busy_b, half_c},
       "b"},
      {"TestLess, three nodes, spread: the emptiest",
       "spread",
       false,
       {busy_a, half_c, {"b", 0, 0}},
       "b"},
      {"TestLess, three nodes, spread, none idle: the least used",
       "spread",
       false,
       {busy_a, half_c, {"b", 6000, 40}},
       "c"},
  };
  const std::string ask = HamiAsk(1000, 10);
  for (const Row& row : rows) {
    SCOPED_TRACE(row.upstream);
    std::vector<std::string> nodes;
    std::vector<std::string> docs;
    for (const PolicyNode& node : row.nodes) {
      nodes.push_back(ShortNode(node.name, Gpus(node.name, 1, 16384)));
      if (node.memory_mib > 0) {
        docs.push_back(
            Pod(absl::StrCat("on-", node.name),
                {{kHamiRecord,
                  absl::StrCat("GPU-", node.name, "-0,NVIDIA,", node.memory_mib,
                               ",", node.cores, ":;")}},
                {{"main", HamiAsk(node.memory_mib, node.cores)}}, node.name));
      }
    }
    Annotations annotations;
    std::string config;
    if (row.per_pod) {
      annotations.push_back({"hami.io/node-scheduler-policy", row.policy});
      // The config says the opposite, so the pod's word must win.
      config = absl::StrCat(
          "scheduler: {nodePolicy: ",
          std::string(row.policy) == "spread" ? "binpack" : "spread", "}\n");
    } else {
      config = absl::StrCat("scheduler: {nodePolicy: ", row.policy, "}\n");
    }
    docs.push_back(Pod("p", annotations, {{"main", ask}}));
    auto report = SimulateJson(ShortCluster(nodes), Docs(docs), config);
    ASSERT_OK(report);
    const Json placement = PlacementOf(*report, "p");
    ASSERT_FALSE(placement.is_null()) << report->dump(1);
    EXPECT_EQ(placement["node"], row.want_node);
  }
}

// A node n registered in Volcano's dialect with `count` hami-core T4s
// GPU-0000A, GPU-0000B, ... of 16384 MiB shared 4 ways: the GPUs of
// Volcano's vgpu tests (makeGPUDevices).
std::string VolcanoNode(int count) {
  std::string entries;
  for (int i = 0; i < count; ++i) {
    absl::StrAppend(&entries, "GPU-0000", std::string(1, 'A' + i),
                    ",4,16384,NVIDIA-Tesla T4,true,hami-core:");
  }
  return absl::StrCat(
      "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  annotations:\n"
      "    volcano.sh/node-vgpu-register: '",
      entries, "'\n");
}

// Volcano limits for one GPU with `memory` and `cores` (makeVGPUPod).
std::string VolcanoAsk(int memory, int cores = 25) {
  return absl::StrCat("volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: ",
                      memory, ", volcano.sh/vgpu-cores: ", cores);
}

// A pod bound to node n with Volcano's record `record`, asking `limits`,
// with `annotations` besides.
std::string VolcanoBound(const std::string& name, const std::string& record,
                         const std::string& limits,
                         Annotations annotations = {}) {
  annotations.push_back({kVolcanoRecord, record});
  return Pod(name, annotations, {{"main", limits}}, "n");
}

constexpr char kBinpack[] =
    "scheduler: {nodePolicy: binpack, gpuPolicy: binpack}\n";
constexpr char kK8sGroup[] = "scheduling.k8s.io/group-name";
constexpr char kVolcanoGroup[] = "scheduling.volcano.sh/group-name";
constexpr char kGroupPolicy[] = "volcano.sh/vgpu-podgroup-policy";

// Volcano's pkg/scheduler/api/devices/nvidia/vgpu/utils_test.go, podgroup
// half, restated (inventory F6, F7): one GPU holding pod `a` (4096 MiB, 25
// cores, or the row's record) of some podgroup; a new pod asking the
// podgroup spread rule either shares it or stays pending with GroupOnGpu.
// The key is namespace/name from scheduling.k8s.io/group-name, else
// scheduling.volcano.sh/group-name (getPodGroupKey); a GPU blocks only if
// a pod of the key uses it (deviceHasPodFromSameGroup). TestGetPodGroupKey
// "nil pod" has no pod to restate.
TEST(SimulateUpstreamTableTest, VolcanoUtilsPart1) {
  struct Row {
    const char* upstream;
    Annotations a;           // pod a's, beside its record
    const char* a_record;    // "" = no pod a
    Annotations b;           // the new pod's, beside the spread rule
    const char* namespace_;  // the new pod's
    bool shares;             // placed on the GPU; else pending
  };
  const char* const kUsed = "GPU-0000A,NVIDIA,4096,25:";
  const Row rows[] = {
      {"F6 utils_test.go:287 TestGetPodGroupKey "
       "\"scheduling.k8s.io/group-name\"",
       {{kK8sGroup, "my-pg"}},
       kUsed,
       {{kK8sGroup, "my-pg"}},
       "default",
       false},
      {"F6 :287 same: the namespace is part of the key",
       {{kK8sGroup, "my-pg"}},
       kUsed,
       {{kK8sGroup, "my-pg"}},
       "ns1",
       true},
      {"F6 :299 \"scheduling.volcano.sh/group-name (Volcano API)\"",
       {{kVolcanoGroup, "job-pg"}},
       kUsed,
       {{kVolcanoGroup, "job-pg"}},
       "default",
       false},
      {"F6 :311 \"k8s annotation takes precedence over volcano\": same "
       "Volcano name, other k8s name",
       {{kK8sGroup, "k8s-pg"}, {kVolcanoGroup, "volcano-pg"}},
       kUsed,
       {{kK8sGroup, "other-pg"}, {kVolcanoGroup, "volcano-pg"}},
       "default",
       true},
      {"F6 :311 same: same k8s name, other Volcano name",
       {{kK8sGroup, "k8s-pg"}, {kVolcanoGroup, "volcano-pg"}},
       kUsed,
       {{kK8sGroup, "k8s-pg"}, {kVolcanoGroup, "other-pg"}},
       "default",
       false},
      {"F6 :280 \"nil annotations\": no key, no group",
       {},
       kUsed,
       {},
       "default",
       true},
      {"F7 :341 TestDeviceHasPodFromSameGroup \"empty currentKey\"",
       {{kK8sGroup, "pg"}},
       kUsed,
       {},
       "default",
       true},
      {"F7 :347 \"no pod from same group\"",
       {{kK8sGroup, "other"}},
       kUsed,
       {{kK8sGroup, "my-pg"}},
       "default",
       true},
      {"F7 :353 \"same group with non-zero usage\"",
       {{kK8sGroup, "my-pg"}},
       "GPU-0000A,NVIDIA,1000,50:",
       {{kK8sGroup, "my-pg"}},
       "default",
       false},
      {"F7 :359 \"same group but zero usage (released)\"",
       {{kK8sGroup, "my-pg"}},
       "GPU-0000A,NVIDIA,0,0:",
       {{kK8sGroup, "my-pg"}},
       "default",
       true},
      {"F7 :365 \"empty PodMap\"",
       {},
       "",
       {{kK8sGroup, "pg"}},
       "default",
       true},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.upstream);
    std::vector<std::string> docs;
    if (*row.a_record != '\0') {
      docs.push_back(VolcanoBound("a", row.a_record, VolcanoAsk(4096), row.a));
    }
    Annotations b = row.b;
    b.push_back({kGroupPolicy, "spread"});
    docs.push_back(absl::StrReplaceAll(
        Pod("b", b, {{"main", VolcanoAsk(4096)}}),
        {{"namespace: default", absl::StrCat("namespace: ", row.namespace_)}}));
    auto report = SimulateJson(VolcanoNode(1), Docs(docs), kBinpack);
    ASSERT_OK(report);
    const std::string b_name = absl::StrCat(row.namespace_, "/b");
    if (row.shares) {
      EXPECT_FALSE(PlacementOf(*report, b_name).is_null()) << report->dump(1);
    } else {
      EXPECT_TRUE(PlacementOf(*report, b_name).is_null());
      EXPECT_THAT(UnschedulableOf(*report, b_name)["reason_counts"].dump(),
                  HasSubstr("GroupOnGpu"));
    }
  }
}

// Volcano's utils_test.go, device half: which GPU the predicate picks by
// scheduler.gpuPolicy (TestSortedDeviceIndicesByPolicy_PicksExpectedDevice,
// TestBinpackStacksSequentialPods; inventory F8, F9), and what a record
// charges (TestDecodeContainerDevicesRejectsInvalidUsage, F16-F18: a bad
// device entry is skipped, the good ones kept).
//
// Not ported: F10 (:412 "unset policy preserves legacy descending-index
// order"): deviceshare has no unset GPU policy, its default (binpack) takes
// index 0 where Volcano's legacy order takes the highest index; a known
// low-priority difference. TestGPUScore (:437, F11) scores a node by
// Volcano's formula, which deviceshare's node score differs from by design
// (docs/reference/upstream-volcano.md §4).
TEST(SimulateUpstreamTableTest, VolcanoUtilsPart2) {
  struct ChoiceRow {
    const char* upstream;
    const char* policy;
    int gpus;
    const char* running;  // record of a running 4096 MiB pod; "" = none
    int pods;             // new pods of 4096 MiB, in order
    std::vector<std::string> want;  // their GPUs
  };
  const ChoiceRow choices[] = {
      {"F8 utils_test.go:392 \"binpack picks busier device\"",
       "binpack",
       2,
       "GPU-0000A,NVIDIA,4096,25:",
       1,
       {"GPU-0000A"}},
      {"F9 :402 \"spread picks idle device over shared one\"",
       "spread",
       2,
       "GPU-0000A,NVIDIA,4096,25:",
       1,
       {"GPU-0000B"}},
      {"F8 :464 TestBinpackStacksSequentialPods: three pods, one GPU",
       "binpack",
       3,
       "",
       3,
       {"GPU-0000A", "GPU-0000A", "GPU-0000A"}},
  };
  for (const ChoiceRow& row : choices) {
    SCOPED_TRACE(row.upstream);
    std::vector<std::string> docs;
    if (*row.running != '\0') {
      docs.push_back(VolcanoBound("a", row.running, VolcanoAsk(4096)));
    }
    for (int i = 0; i < row.pods; ++i) {
      docs.push_back(
          Pod(absl::StrCat("worker", i), {}, {{"main", VolcanoAsk(4096)}}));
    }
    auto report = SimulateJson(
        VolcanoNode(row.gpus), Docs(docs),
        absl::StrCat("scheduler: {nodePolicy: binpack, gpuPolicy: ", row.policy,
                     "}\n"));
    ASSERT_OK(report);
    std::vector<std::string> got;
    for (int i = 0; i < row.pods; ++i) {
      const Json device = DeviceOf(*report, absl::StrCat("worker", i));
      got.push_back(device.is_null() ? "pending"
                                     : device["uuid"].get<std::string>());
    }
    EXPECT_EQ(got, row.want) << report->dump(1);
  }

  struct DecodeRow {
    const char* upstream;
    const char* record;
    Usage want;
  };
  const DecodeRow decodes[] = {
      {"F16 :490 \"valid entry\"", "GPU-0000A,NVIDIA,4096,30:", {4096, 30, 1}},
      {"F17 :495 \"negative memory is skipped\"",
       "GPU-0000A,NVIDIA,-5,30:",
       {0, 0, 0}},
      {"F17 :500 \"negative cores is skipped\"",
       "GPU-0000A,NVIDIA,4096,-1:",
       {0, 0, 0}},
      {"F17 :505 \"non-numeric usage is skipped\"",
       "GPU-0000A,NVIDIA,abc,30:",
       {0, 0, 0}},
      {"F17 :510 \"entry with missing fields is skipped\"",
       "GPU-0000A,NVIDIA:",
       {0, 0, 0}},
      {"F18 :515 \"valid entry kept when mixed with invalid\"",
       "GPU-0000A,NVIDIA,-5,30:GPU-0000B,NVIDIA,2048,10:",
       {2048, 10, 1}},
  };
  for (const DecodeRow& row : decodes) {
    SCOPED_TRACE(row.upstream);
    const Usage usage =
        UsageOf(VolcanoNode(2),
                {VolcanoBound("a", row.record, VolcanoAsk(4096, 30))}, 8);
    EXPECT_EQ(usage.memory_mib, row.want.memory_mib);
    EXPECT_EQ(usage.cores, row.want.cores);
    EXPECT_EQ(usage.slots, row.want.slots);
  }
}

// Volcano's device_info_test.go, restated (inventory F14, F15): what
// addResource counts for a pod bound to the node, and what resourcereqs
// reads.
TEST(SimulateUpstreamTableTest, VolcanoDeviceInfo) {
  // F14 device_info_test.go:87 TestAddResource "Pod assigned to known GPU
  // UUID": a record with no ':' or ';' at the end is counted.
  {
    SCOPED_TRACE("F14 device_info_test.go:87 TestAddResource known GPU UUID");
    const Usage usage = UsageOf(
        VolcanoNode(1),
        {VolcanoBound("test-pod", "GPU-0000A,NVIDIA,16384,0",
                      "volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: "
                      "16384")},
        4);
    // The record fills the card, so no probe fits: slots are not told.
    EXPECT_EQ(usage.memory_mib, 16384);
    EXPECT_EQ(usage.cores, 0);
  }
  // F15 :87 TestAddResource "Pod assigned to unknown GPU UUID" and "Pod
  // without AssignedIDsAnnotations": neither is counted (all 4 probes fit
  // the one GPU), and neither is placed again.
  {
    SCOPED_TRACE(
        "F15 device_info_test.go:87 TestAddResource unknown UUID, "
        "no record");
    const std::vector<std::string> pods = {
        VolcanoBound("unknown",
                     "GPU-UNKNOWN,NVIDIA,4096,25:", VolcanoAsk(4096)),
        Pod("unrecorded", {}, {{"main", VolcanoAsk(4096)}}, "n")};
    const Usage usage = UsageOf(VolcanoNode(1), pods, 4);
    EXPECT_EQ(usage.memory_mib, 0);
    EXPECT_EQ(usage.cores, 0);
    EXPECT_EQ(usage.slots, 0);
  }
  // :170 TestAddResourceSetsPodGroupKey: the counted pod keeps its podgroup
  // (default/my-job-pg), so a spread pod of that group finds the GPU taken.
  {
    SCOPED_TRACE(":170 TestAddResourceSetsPodGroupKey");
    auto report = SimulateJson(
        VolcanoNode(1),
        Docs({VolcanoBound("grouped", "GPU-0000A,NVIDIA,4096,0",
                           VolcanoAsk(4096, 0), {{kK8sGroup, "my-job-pg"}}),
              Pod("b", {{kK8sGroup, "my-job-pg"}, {kGroupPolicy, "spread"}},
                  {{"main", VolcanoAsk(4096)}})}),
        kBinpack);
    ASSERT_OK(report);
    EXPECT_THAT(UnschedulableOf(*report, "b")["reason_counts"].dump(),
                HasSubstr("GroupOnGpu"));
  }
  // :33 TestGetGPUMemoryOfPod "GPUs required only in Containers": each
  // container's own count and memory (1 x 3000, 3 x 5000).
  {
    SCOPED_TRACE(":33 TestGetGPUMemoryOfPod");
    auto report = SimulateJson(
        VolcanoNode(4),
        Pod("p", {},
            {{"one", "volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 3000"},
             {"three",
              "volcano.sh/vgpu-number: 3, volcano.sh/vgpu-memory: 5000"}}),
        kBinpack);
    ASSERT_OK(report);
    const Json containers = PlacementOf(*report, "p")["containers"];
    ASSERT_EQ(containers.size(), 2) << report->dump(1);
    ASSERT_EQ(containers[0]["devices"].size(), 1);
    EXPECT_EQ(containers[0]["devices"][0]["memory_mib"], 3000);
    ASSERT_EQ(containers[1]["devices"].size(), 3);
    for (const Json& device : containers[1]["devices"]) {
      EXPECT_EQ(device["memory_mib"], 5000);
    }
  }
}

// Volcano's hamicore_test.go (TestHAMICoreFactory_AddPod*), restated
// (inventory F22): a GPU (16384 MiB, shared 4 ways) holding pods of 1000
// MiB and 25 cores.
//
// Not ported: the idempotent half (:50, :60 TestHAMICoreFactory_AddPod
// "duplicate add is a no-op", "add after Allocate's TryAddPod ... does not
// double-count"): simulate refuses the same pod listed twice, and two pods
// sharing a metadata.uid, as input errors, so a pod cannot be added twice.
TEST(SimulateUpstreamTableTest, VolcanoHamiCore) {
  struct Row {
    const char* upstream;
    int pods;  // distinct running pods (distinct uids)
    Usage want;
  };
  const Row rows[] = {
      {"F22 hamicore_test.go:43 TestHAMICoreFactory_AddPod \"fresh add "
       "increments counters\"",
       1,
       {1000, 25, 1}},
      {"F22 :89 TestHAMICoreFactory_AddPodDistinctUIDsAccumulate",
       3,
       {3000, 75, 3}},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.upstream);
    std::vector<std::string> running;
    for (int i = 0; i < row.pods; ++i) {
      running.push_back(absl::StrReplaceAll(
          VolcanoBound(absl::StrCat("pod-", i),
                       "GPU-0000A,NVIDIA,1000,25:", VolcanoAsk(1000)),
          {{"namespace: default\n",
            absl::StrCat("namespace: default\n  uid: uid-", i, "\n")}}));
    }
    const Usage usage = UsageOf(VolcanoNode(1), running, 4);
    EXPECT_EQ(usage.memory_mib, row.want.memory_mib);
    EXPECT_EQ(usage.cores, row.want.cores);
    EXPECT_EQ(usage.slots, row.want.slots);
  }
}

// HAMi's pkg/util/util_test.go, restated: which pods hold their GPUs
// (Test_IsPodInTerminatedState, Test_IsPodTerminating, as the scheduler's
// onAddPod uses them) and which GPU policy a pod gets
// (TestGetGPUSchedulerPolicyByPod, TestPolicyContains). A running pod holds
// the whole card of node n; the probe asks for a whole card.
//
// Not ported: the pending-pod, node-lock, annotation patch and event
// helpers (TestGetPendingPod, TestPatchPod*, TestEmitNodeWarningEvent, ...)
// are API-server mechanics, not scheduling scenarios; serve's own tests
// cover its writes.
TEST(SimulateUpstreamTableTest, HamiUtil) {
  struct PhaseRow {
    const char* upstream;
    const char* phase;  // "" = no status
    bool terminating;   // metadata.deletionTimestamp set
    bool card_freed;
  };
  const PhaseRow phase_rows[] = {
      {"util_test.go:389 Test_IsPodInTerminatedState \"pod in failed state\"",
       "Failed", false, true},
      {"Test_IsPodInTerminatedState \"pod in succeeded state\"", "Succeeded",
       false, true},
      {"Test_IsPodInTerminatedState \"pod in running state\"", "Running", false,
       false},
      {"Test_IsPodInTerminatedState \"pod in pending state\"", "Pending", false,
       false},
      {"Test_IsPodInTerminatedState \"pod in unknown state\"", "Unknown", false,
       false},
      {"Test_IsPodInTerminatedState: no status", "", false, false},
      {":725 Test_IsPodTerminating \"pod with deletion timestamp\": still "
       "holds (scheduler.go onAddPod keeps it)",
       "Running", true, false},
  };
  for (const PhaseRow& row : phase_rows) {
    SCOPED_TRACE(row.upstream);
    std::string holder =
        HamiBound("holder", "GPU-n-0,NVIDIA,11264,100:;", HamiAsk(11264, 100));
    if (row.terminating) {
      holder = absl::StrReplaceAll(
          holder, {{"  namespace: default\n",
                    "  namespace: default\n"
                    "  deletionTimestamp: '2026-11-27T00:00:00Z'\n"}});
    }
    if (*row.phase != '\0') {
      absl::StrAppend(&holder, "status:\n  phase: ", row.phase, "\n");
    }
    auto report =
        SimulateJson(CardNode(1), Docs({holder, AskPod("nvidia.com/gpu: 1")}));
    ASSERT_OK(report);
    EXPECT_EQ(!PlacementOf(*report, "p").is_null(), row.card_freed)
        << report->dump(1);
  }
  // A finished pod that was never placed asks for nothing either.
  {
    SCOPED_TRACE("Test_IsPodInTerminatedState: a finished pending pod");
    auto report = SimulateJson(CardNode(1), AskPod("nvidia.com/gpu: 1") +
                                                "status:\n  phase: Failed\n");
    ASSERT_OK(report);
    EXPECT_TRUE((*report)["placements"].empty()) << report->dump(1);
    EXPECT_TRUE((*report)["unschedulable"].empty());
    EXPECT_EQ((*report)["summary"]["pods"], 0);
  }

  // The pod's own policy, else the scheduler's (binpack here); `b` follows
  // `a` onto its GPU unless spread or mutex keeps it off.
  struct PolicyRow {
    const char* upstream;
    Annotations annotations;
    bool shares_a_gpu;
  };
  constexpr char kPolicy[] = "hami.io/gpu-scheduler-policy";
  const PolicyRow policy_rows[] = {
      {":763 TestGetGPUSchedulerPolicyByPod \"no annotation\"", {}, true},
      {"TestGetGPUSchedulerPolicyByPod \"other annotations\"",
       {{"other-annotation", "value"}},
       true},
      {"TestGetGPUSchedulerPolicyByPod \"with annotation\" spread",
       {{kPolicy, "spread"}},
       false},
      {":790 TestPolicyContains \"comma list match first\" mutex,spread",
       {{kPolicy, "mutex,spread"}},
       false},
      {"TestPolicyContains \"comma list match last\" (binpack,numa,mutex)",
       {{kPolicy, "binpack,numa,mutex"}},
       false},
      {"TestPolicyContains \"comma list no match\" binpack,spread",
       {{kPolicy, "binpack,spread"}},
       true},
      {"TestPolicyContains \"empty policy\": an empty value is a policy "
       "HAMi does not know, so spread (gpu_policy.go Less)",
       {{kPolicy, ""}},
       false},
      {"GetGPUSchedulerPolicyByPod: any value is taken; \"first fit\" is "
       "unknown, so spread",
       {{kPolicy, "first fit"}},
       false},
      {"TestPolicyContains \"comma list with spaces\" (mutex, binpack, numa)",
       {{kPolicy, "mutex, binpack, numa"}},
       false},
  };
  for (const PolicyRow& row : policy_rows) {
    SCOPED_TRACE(row.upstream);
    auto report = SimulateJson(
        CardNode(2),
        Docs({Pod("a", {}, {{"main", HamiAsk(1000, 10)}}),
              Pod("b", row.annotations, {{"main", HamiAsk(1000, 10)}})}),
        "scheduler: {nodePolicy: binpack, gpuPolicy: binpack}\n");
    ASSERT_OK(report);
    const Json a = DeviceOf(*report, "a");
    const Json b = DeviceOf(*report, "b");
    ASSERT_FALSE(a.is_null());
    ASSERT_FALSE(b.is_null()) << report->dump(1);
    EXPECT_EQ(a["uuid"] == b["uuid"], row.shares_a_gpu);
  }
}

// Volcano's mig_test.go, restated: the configmap search (findMatch),
// charging an instance (addMigUsed) and the memory factor
// (TestMIGFactory_*_WithMemoryFactor), on node n with one A100-80GB GPU-a
// registered `mig` in Volcano's dialect. Running pods carry Volcano's
// record (`GPU-a[group-position],NVIDIA,memory,cores:`); the probe asks
// `request` in the factor's units with vgpu-mode mig.
//
// The cores: Volcano adds the request's vgpu-cores to the GPU's UsedCore
// (TryAddPod, 50 in :412); deviceshare charges the instance's own share of
// the SMs (14 for a 1g of seven slices) and writes the request's figure in
// the record as Volcano does (docs/compatibility.md).
//
// Not ported: subMigUsed and TestMIGFactory_SubPod_* (a pod leaving):
// simulate has no departures; the ledger's release tests cover it. The
// "add twice, sub once" bookkeeping of TestAddAndSubMigUsed has no
// scenario: two records cannot name one instance without one of them
// being refused.
TEST(SimulateUpstreamTableTest, VolcanoMig) {
  struct Row {
    const char* upstream;
    const char* groups;  // knownMigGeometries allowedGeometries, YAML
    std::vector<std::string> records;
    int factor;
    int request;  // vgpu-memory, in the factor's units
    int cores;
    const char* want_group;  // "" = the probe stays pending
    int want_position;
    const char* want_profile;
    int64_t want_memory_mib;  // allocated on the GPU after the probe
  };
  const Row rows[] = {
      {"mig_test.go:37 TestFindMatch \"Match 1g.10gb and available\"",
       "- {group: default, geometries: [{name: 1g.10gb, memory: 10240, "
       "count: 2}]}",
       {},
       1,
       10,
       0,
       "default",
       0,
       "1g.10gb",
       10240},
      {":68 TestFindMatch \"No match due to memory too high\"",
       "- {group: default, geometries: [{name: 1g.10gb, memory: 10, count: "
       "1}]}",
       {},
       1,
       20000,
       0,
       "",
       0,
       "",
       0},
      {":99 TestFindMatch \"Empty geometry list\"",
       "- {group: default, geometries: []}",
       {},
       1,
       10,
       0,
       "",
       0,
       "",
       0},
      {":114 TestFindMatch \"No matching MIG template in geometry\": the GPU "
       "is committed to a group whose free instance is too small",
       "- {group: default, geometries: [{name: 1g.10gb, memory: 10, count: "
       "2}]}\n"
       "- {group: other, geometries: [{name: 2g.20gb, memory: 20, count: 1}]}",
       {"GPU-a[default-0],NVIDIA,10,0:"},
       1,
       20,
       0,
       "",
       0,
       "",
       10},
      {":145 TestFindMatch \"MIG instance already in use\"",
       "- {group: default, geometries: [{name: 1g.10gb, memory: 10, count: "
       "1}]}",
       {"GPU-a[default-0],NVIDIA,10,0:"},
       1,
       10,
       0,
       "",
       0,
       "",
       10},
      {":176 TestFindMatch \"Multiple templates, pick first matching and "
       "available\"",
       "- {group: group1, geometries: [{name: 1g.10gb, memory: 10, count: "
       "1}]}\n"
       "- {group: group2, geometries: [{name: 2g.20gb, memory: 24, count: 1}]}",
       {},
       1,
       20,
       0,
       "group2",
       0,
       "2g.20gb",
       24},
      {":210 TestFindMatch \"Request memory smaller than template, still "
       "match\"",
       "- {group: default, geometries: [{name: 1g.10gb, memory: 10, count: "
       "1}]}",
       {},
       1,
       5,
       0,
       "default",
       0,
       "1g.10gb",
       10},
      {":268 TestAddAndSubMigUsed \"Add then Sub with valid position\": the "
       "record holds position 1 and its whole instance",
       "- {group: group-a, geometries: [{name: 1g.10gb, memory: 10240, count: "
       "2}]}",
       {"GPU-a[group-a-1],NVIDIA,10,0:"},
       1,
       10,
       0,
       "group-a",
       0,
       "1g.10gb",
       2 * 10240},
      {":290 TestAddAndSubMigUsed \"Add twice same instance\" (the add)",
       "- {group: group-b, geometries: [{name: 2g.20gb, memory: 20480, count: "
       "3}]}",
       {"GPU-a[group-b-1],NVIDIA,10,0:"},
       1,
       10,
       0,
       "group-b",
       0,
       "2g.20gb",
       2 * 20480},
      {":334 TestAddAndSubMigUsed \"Invalid group name should return 0\", "
       "a deliberate difference (docs/compatibility.md row 13): Volcano "
       "marks no instance used and hands it out again; deviceshare charges "
       "the record (10 MiB) and holds the GPU, so the probe stays pending",
       "- {group: group-d, geometries: [{name: 1g.10gb, memory: 10240, count: "
       "1}]}",
       {"GPU-a[nonexistent-group-0],NVIDIA,10,0:"},
       1,
       10,
       0,
       "",
       0,
       "",
       10},
      {":412 TestMIGFactory_TryAddPod_WithMemoryFactor \"MemoryFactor=1, "
       "request 10MB matches 1g.10gb\"",
       "- {group: group1, geometries: [{name: 1g.10gb, memory: 10240, count: "
       "2}, {name: 2g.20gb, memory: 20480, count: 1}]}",
       {},
       1,
       10,
       50,
       "group1",
       0,
       "1g.10gb",
       10240},
      {":432 ...TryAddPod_WithMemoryFactor \"MemoryFactor=2, request 6GB\": "
       "12288 MiB takes the 2g.20gb",
       "- {group: group1, geometries: [{name: 1g.10gb, memory: 10240, count: "
       "2}, {name: 2g.20gb, memory: 20480, count: 1}]}",
       {},
       2,
       6144,
       50,
       "group1",
       2,
       "2g.20gb",
       20480},
      {":542 TestMIGFactory_AddPod_WithMemoryFactor \"MemoryFactor=1\": the "
       "record holds its 1g.10gb",
       "- {group: group1, geometries: [{name: 1g.10gb, memory: 10240, count: "
       "2}, {name: 2g.20gb, memory: 20480, count: 1}]}",
       {"GPU-a[group1-0],NVIDIA,10,50:"},
       1,
       10,
       0,
       "group1",
       1,
       "1g.10gb",
       2 * 10240},
      {":567 ...AddPod_WithMemoryFactor \"MemoryFactor=2\", a deliberate "
       "difference: the record's 6144 units (12288 MiB) are above the "
       "1g.10gb it names; Volcano charges the instance (5120 units), "
       "deviceshare never less than the record says",
       "- {group: group1, geometries: [{name: 1g.10gb, memory: 10240, count: "
       "2}, {name: 2g.20gb, memory: 20480, count: 1}]}",
       {"GPU-a[group1-0],NVIDIA,6144,50:"},
       2,
       10,
       0,
       "group1",
       1,
       "1g.10gb",
       12288 + 10240},
      {"G7 mig.go pickFromGroup (no mig_test.go case), a deliberate "
       "difference: Volcano re-uses only instance types in use (another "
       "2g.20gb, group2-1); deviceshare takes the smallest that fits",
       "- {group: group2, geometries: [{name: 2g.20gb, memory: 19968, count: "
       "3}, {name: 1g.10gb, memory: 9728, count: 1}]}",
       {"GPU-a[group2-0],NVIDIA,10,0:"},
       1,
       5000,
       0,
       "group2",
       3,
       "1g.10gb",
       19968 + 9728},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.upstream);
    const std::string config = absl::StrCat(
        "scheduler: {modes: [hami-core, mig], migSearch: configmap}\n"
        "nvidia:\n  gpuMemoryFactor: ",
        row.factor,
        "\n  knownMigGeometries:\n  - models: [\"A100-SXM4-80GB\"]\n"
        "    allowedGeometries:\n",
        absl::StrReplaceAll(row.groups, {{"- {", "    - {"}}), "\n");
    const std::string node = absl::StrCat(
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  annotations:\n"
        "    volcano.sh/node-vgpu-register: 'GPU-a,10,",
        81920 / row.factor, ",NVIDIA-NVIDIA A100-SXM4-80GB,true,mig:'\n");
    const std::string mig = "volcano.sh/vgpu-mode";
    std::vector<std::string> docs;
    for (size_t i = 0; i < row.records.size(); ++i) {
      docs.push_back(VolcanoBound(absl::StrCat("running", i), row.records[i],
                                  VolcanoAsk(10, 0), {{mig, "mig"}}));
    }
    docs.push_back(Pod("p", {{mig, "mig"}},
                       {{"main", VolcanoAsk(row.request, row.cores)}}));
    auto report = SimulateJson(node, Docs(docs), config);
    ASSERT_OK(report);
    const Json probe = DeviceOf(*report, "p");
    if (*row.want_group == '\0') {
      EXPECT_TRUE(probe.is_null()) << report->dump(1);
    } else {
      ASSERT_FALSE(probe.is_null()) << report->dump(1);
      EXPECT_EQ(probe["mig_group"], row.want_group);
      EXPECT_EQ(probe["mig_position"], row.want_position);
      EXPECT_EQ(probe["mig_profile"], row.want_profile);
    }
    EXPECT_EQ((*report)["summary"]["gpu_memory_allocated_mib"],
              row.want_memory_mib);
  }
}

// HAMi's pkg/scheduler/policy/gpu_policy_test.go:505 TestComputeScore
// (inventory C11): a registered device with no capacity (count 0, or no
// memory and cores) scores 0 and panics nothing. Restated: a node whose
// registration holds two such devices beside a whole one is served, its
// pods go to the whole one, and the empty ones take none.
TEST(SimulateUpstreamTableTest, HamiGpuPolicyZeroCapacity) {
  const std::string node =
      "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  annotations:\n"
      "    hami.io/node-nvidia-register: '["
      "{\"id\":\"GPU-zero\",\"index\":0,\"count\":0,\"devmem\":0,"
      "\"devcore\":0,\"type\":\"NVIDIA-Tesla T4\",\"numa\":0,"
      "\"mode\":\"hami-core\",\"health\":true},"
      "{\"id\":\"GPU-noslot\",\"index\":1,\"count\":0,\"devmem\":4096,"
      "\"devcore\":8,\"type\":\"NVIDIA-Tesla T4\",\"numa\":0,"
      "\"mode\":\"hami-core\",\"health\":true},"
      "{\"id\":\"GPU-whole\",\"index\":2,\"count\":10,\"devmem\":16384,"
      "\"devcore\":100,\"type\":\"NVIDIA-Tesla T4\",\"numa\":0,"
      "\"mode\":\"hami-core\",\"health\":true}]'\n";
  for (const char* policy : {"binpack", "spread"}) {
    SCOPED_TRACE(policy);
    auto report =
        SimulateJson(node,
                     Docs({Pod("a", {}, {{"main", HamiAsk(1000, 0)}}),
                           Pod("b", {}, {{"main", HamiAsk(1000, 0)}})}),
                     absl::StrCat("scheduler: {gpuPolicy: ", policy, "}\n"));
    ASSERT_OK(report);
    for (const char* pod : {"a", "b"}) {
      const Json device = DeviceOf(*report, pod);
      ASSERT_FALSE(device.is_null()) << report->dump(1);
      EXPECT_EQ(device["uuid"], "GPU-whole");
    }
  }
}

// A ResourceQuota of namespace default limiting GPU memory and cores
// (limits.<resource>; "" leaves that kind unlimited).
std::string GpuQuotaObject(const std::string& memory,
                           const std::string& cores = "",
                           const std::string& name = "gpu") {
  std::string hard;
  if (!memory.empty()) {
    absl::StrAppend(&hard, "limits.nvidia.com/gpumem: \"", memory, "\", ");
  }
  if (!cores.empty()) {
    absl::StrAppend(&hard, "limits.nvidia.com/gpucores: \"", cores, "\", ");
  }
  absl::StrAppend(&hard, "cpu: \"8\"");
  return absl::StrCat(
      "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: ", name,
      ", namespace: default}\nspec:\n  hard: {", hard, "}\n");
}

// HAMi's namespace GPU quota (pkg/device/quota.go; checked in the scheduler's
// Fit, nvidia/device.go fitQuota, and at admission, webhook.go), restated
// from pkg/scheduler/webhook_test.go TestFitResourceQuota*: the namespace
// already holds 1000 MiB and 200 cores (two running pods on node "busy")
// under a quota of 2000 MiB and 400 cores; does the probe still fit on the
// idle node n?
//
// Not ported: TestHandle, TestPodHasNodeName, TestPodHasDifferentScheduler,
// TestSchedulerNameEmptyNoOverwrite, TestNonGPUPodAllowedAdmission and
// TestEmptyContainersDenied are the admission webhook's own rules
// (schedulerName, which pods it mutates); deviceshare runs beside
// kube-scheduler as an extender and has no admission webhook yet. The
// Ascend and Cambricon rows are other vendors' devices. Step 3 of
// TestFitResourceQuota_InitContainerPeakSequence (a pod's usage drops to its
// app containers once its init containers end) is not modelled: a placed
// pod holds its peak until it leaves.
TEST(SimulateUpstreamTableTest, HamiWebhookQuota) {
  struct Row {
    const char* upstream;
    std::vector<Container> containers;
    bool fits;
  };
  const std::string ask100 = "nvidia.com/gpu: 1, nvidia.com/gpumem: 100";
  const Row rows[] = {
      {"webhook_test.go:249 TestFitResourceQuota \"quota passed\"",
       {{"main", ask100}},
       true},
      {"TestFitResourceQuota \"quota exceeded\" (1000 + 1024 > 2000)",
       {{"main", "nvidia.com/gpu: 1, nvidia.com/gpumem: 1024"}},
       false},
      {"TestFitResourceQuota \"request multiple gpus\" (2 x 1024); "
       ":650 TestFitResourceQuotaCountsEveryDevice",
       {{"main", "nvidia.com/gpu: 2, nvidia.com/gpumem: 1024"}},
       false},
      {"TestFitResourceQuota \"request multiple gpus within quota\" (2 x 400)",
       {{"main", "nvidia.com/gpu: 2, nvidia.com/gpumem: 400"}},
       true},
      {"TestFitResourceQuota \"InitContainers run sequentially: max init fits "
       "quota\" (800, 800, then 500)",
       {{"init1", "nvidia.com/gpu: 1, nvidia.com/gpumem: 800", "", true},
        {"init2", "nvidia.com/gpu: 1, nvidia.com/gpumem: 800", "", true},
        {"main", "nvidia.com/gpu: 1, nvidia.com/gpumem: 500"}},
       true},
      {"TestFitResourceQuota \"InitContainer request exceeds quota directly\" "
       "(1500)",
       {{"init", "nvidia.com/gpu: 1, nvidia.com/gpumem: 1500", "", true},
        {"main", ask100}},
       false},
      {"cores: one GPU of 100 cores (200 + 100 <= 400)",
       {{"main",
         "nvidia.com/gpu: 1, nvidia.com/gpumem: 100, "
         "nvidia.com/gpucores: 100"}},
       true},
      {"cores: 3 GPUs of 100 cores each (200 + 300 > 400)",
       {{"main",
         "nvidia.com/gpu: 3, nvidia.com/gpumem: 100, "
         "nvidia.com/gpucores: 100"}},
       false},
  };
  const std::string cluster = ShortCluster(
      {ShortNode("busy", Gpus("busy", 2)), ShortNode("n", Gpus("n", 4))});
  const std::vector<std::string> held = {
      Pod("held0", {{kHamiRecord, "GPU-busy-0,NVIDIA,500,100:;"}},
          {{"main", HamiAsk(500, 100)}}, "busy"),
      Pod("held1", {{kHamiRecord, "GPU-busy-1,NVIDIA,500,100:;"}},
          {{"main", HamiAsk(500, 100)}}, "busy")};
  for (const Row& row : rows) {
    SCOPED_TRACE(row.upstream);
    std::vector<std::string> docs = held;
    docs.push_back(GpuQuotaObject("2000", "400"));
    docs.push_back(Pod("probe", {}, row.containers));
    auto report = SimulateJson(cluster, Docs(docs), kBinpack);
    ASSERT_OK(report);
    const Json probe = PlacementOf(*report, "probe");
    EXPECT_EQ(!probe.is_null(), row.fits) << report->dump(1);
    if (!row.fits) {
      EXPECT_THAT(UnschedulableOf(*report, "probe").dump(),
                  HasSubstr("QuotaExceeded"));
    }
  }
}

// HAMi's quota rules beyond the webhook table (pkg/device/quota_test.go,
// TestFitResourceQuota_InitContainerPeakSequence steps 1-2): pods of one
// namespace add up; a limit of 0 is a limit; memoryFactor scales the limit
// as it scales requests; quotas of another namespace or of other resources
// do not apply; two quotas of a namespace both hold.
TEST(SimulateUpstreamTableTest, HamiQuotaRules) {
  const std::string cluster = ShortCluster({ShortNode("n", Gpus("n", 4))});
  auto placed = [&](const std::vector<std::string>& docs,
                    const std::string& config = kBinpack) {
    std::vector<std::string> names;
    auto report = SimulateJson(cluster, Docs(docs), config);
    EXPECT_OK(report);
    if (!report.ok()) return names;
    for (const Json& placement : (*report)["placements"]) {
      names.push_back(placement["pod"].get<std::string>());
    }
    return names;
  };
  auto peak_pod = [](const std::string& name) {
    return Pod(
        name, {},
        {{"init", "nvidia.com/gpu: 1, nvidia.com/gpumem: 20000", "", true},
         {"main", "nvidia.com/gpu: 1, nvidia.com/gpumem: 10000"}});
  };
  {
    SCOPED_TRACE(
        "TestFitResourceQuota_InitContainerPeakSequence: pod1 (peak 20000) "
        "fits 30000, pod2 does not");
    EXPECT_THAT(
        placed({GpuQuotaObject("30000"), peak_pod("pod1"), peak_pod("pod2")}),
        ::testing::ElementsAre("default/pod1"));
  }
  {
    SCOPED_TRACE("quota.go LimitSet: a limit of 0 blocks every GPU pod");
    EXPECT_THAT(placed({GpuQuotaObject("0"),
                        Pod("p", {}, {{"main", "nvidia.com/gpu: 1"}})}),
                ::testing::IsEmpty());
  }
  {
    SCOPED_TRACE("quota.go FitQuota: memoryFactor 2 doubles the limit");
    const std::string ask = "nvidia.com/gpu: 1, nvidia.com/gpumem: 600";
    EXPECT_THAT(placed({GpuQuotaObject("1000"), Pod("a", {}, {{"main", ask}}),
                        Pod("b", {}, {{"main", ask}})},
                       "scheduler: {gpuPolicy: binpack}\n"
                       "nvidia: {memoryFactor: 2}\n"),
                ::testing::ElementsAre("default/a"));
  }
  {
    SCOPED_TRACE("another namespace's quota, and cpu only, do not apply");
    std::string other = GpuQuotaObject("1");
    other =
        absl::StrReplaceAll(other, {{"namespace: default", "namespace: x"}});
    const std::string cpu_only =
        "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: cpu}\n"
        "spec:\n  hard: {cpu: \"8\", requests.nvidia.com/gpumem: \"1\"}\n";
    EXPECT_THAT(placed({other, cpu_only,
                        Pod("p", {}, {{"main", "nvidia.com/gpu: 1"}})}),
                ::testing::ElementsAre("default/p"));
  }
  {
    SCOPED_TRACE("two quotas of one namespace: the tighter holds");
    EXPECT_THAT(placed({GpuQuotaObject("100000", "", "wide"),
                        GpuQuotaObject("", "50", "narrow"),
                        Pod("a", {},
                            {{"main",
                              "nvidia.com/gpu: 1, "
                              "nvidia.com/gpumem: 100, "
                              "nvidia.com/gpucores: 40"}}),
                        Pod("b", {},
                            {{"main",
                              "nvidia.com/gpu: 1, "
                              "nvidia.com/gpumem: 100, "
                              "nvidia.com/gpucores: 40"}})}),
                ::testing::ElementsAre("default/a"));
  }
}

// Volcano's vgpu/utils.go sizes each card by the memory percentage
// whenever one is given ("if we have mempercentage request, we ignore the
// mem request for every cards"), and its device plugin sets the
// container's limit from the record: a pod giving both is booked the
// percentage of the card, not the MiB. A percentage of 0 is "not given"
// here, where Volcano books 0 MiB (docs/compatibility.md).
TEST(SimulateUpstreamTableTest, VolcanoMemoryPercentageWinsOverMemory) {
  struct Row {
    const char* upstream;
    const char* limits;
    int64_t memory_mib;  // booked on the 16384 MiB T4
  };
  const Row rows[] = {
      {"utils.go checkNodeGPUSharingPredicateAndScore: 50 % of 16384 wins "
       "over 2000 MiB",
       "volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 2000, "
       "volcano.sh/vgpu-memory-percentage: 50",
       8192},
      {"the same with the percentage alone",
       "volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory-percentage: 50",
       8192},
      {"memory alone",
       "volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 2000", 2000},
      {"a difference kept: a 0 percentage is not given (Volcano books 0)",
       "volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 2000, "
       "volcano.sh/vgpu-memory-percentage: 0",
       2000},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.upstream);
    auto report = SimulateJson(VolcanoNode(1),
                               Docs({Pod("p", {}, {{"main", row.limits}})}));
    ASSERT_OK(report);
    const Json placement = PlacementOf(*report, "p");
    ASSERT_FALSE(placement.is_null()) << report->dump(1);
    EXPECT_EQ(placement["containers"][0]["devices"][0]["memory_mib"],
              row.memory_mib);
  }
}

// HAMi's nvidia/device.go Fit locks a GPU for a 100-core ask only when
// the GPU registers exactly 100 cores ("dev.Totalcore == 100 &&
// k.Coresreq == 100 && dev.Used > 0"): under deviceCoreScaling 5 (devcore
// 500) two 100-core pods share one GPU.
TEST(SimulateUpstreamTableTest, HamiExclusiveCoresOnlyAtOneHundred) {
  struct Row {
    const char* upstream;
    int devcore;
    int placed;
  };
  const Row rows[] = {
      {"devcore 100: the first 100-core pod holds the GPU", 100, 1},
      {"devcore 500 (deviceCoreScaling 5): 100 of 500 is a share", 500, 2},
      {"devcore 200 (deviceCoreScaling 2)", 200, 2},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.upstream);
    const std::string node = absl::StrCat(
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  annotations:\n"
        "    hami.io/node-nvidia-register: '[{\"id\":\"GPU-0\",\"count\":10,"
        "\"devmem\":16384,\"devcore\":",
        row.devcore, ",\"type\":\"NVIDIA-Tesla T4\",\"health\":true}]'\n");
    const std::string ask =
        "nvidia.com/gpu: 1, nvidia.com/gpumem: 1000, nvidia.com/gpucores: 100";
    auto report = SimulateJson(node, Docs({Pod("a", {}, {{"main", ask}}),
                                           Pod("b", {}, {{"main", ask}})}));
    ASSERT_OK(report);
    EXPECT_EQ((*report)["placements"].size(), row.placed) << report->dump(1);
  }
}

}  // namespace
}  // namespace deviceshare
