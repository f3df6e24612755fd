// `deviceshare-node-agent serve --metrics-address`: the real agent on fake
// NVML, scraped as Prometheus scrapes it. Allocations served and refused by
// the device plugin and by the DRA driver, their latency and the GPUs'
// health show up under the documented names, types and labels.
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "testing/agent_pods.h"
#include "testing/agent_rig.h"
#include "testing/prometheus_text.h"
#include "testing/server_process.h"
#include "testing/status_matchers.h"
#include "testing/test_dra_kubelet.h"
#include "testing/wait_for.h"

namespace deviceshare::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kAllocations[] = "deviceshare_agent_allocations_total";
constexpr char kRefusals[] = "deviceshare_agent_refusals_total";
constexpr char kPrepareSeconds[] = "deviceshare_agent_prepare_seconds";
constexpr char kGpuHealthy[] = "deviceshare_agent_gpu_healthy";

// The port of "metrics serving address=HOST:PORT" in the agent's log.
int MetricsPort(const std::string& log) {
  static const std::regex kServing("metrics serving address=[^ ]*:([0-9]+)");
  std::smatch match;
  int port = -1;
  if (std::regex_search(log, match, kServing)) {
    (void)absl::SimpleAtoi(match[1].str(), &port);
  }
  return port;
}

absl::StatusOr<PrometheusText> Scrape(const AgentRig& rig) {
  const int port = MetricsPort(rig.Log());
  if (port <= 0) return absl::NotFoundError("no metrics address in the log");
  httplib::Client client("127.0.0.1", port);
  auto answer = client.Get("/metrics");
  if (!answer || answer->status != 200) {
    return absl::UnavailableError("GET /metrics failed");
  }
  if (answer->get_header_value("Content-Type")
          .rfind("text/plain; version=0.0.4", 0) != 0) {
    return absl::InvalidArgumentError("not the text format 0.0.4");
  }
  return ParsePrometheusText(answer->body);
}

// The value of the one sample of `family` (its name, or name+suffix) whose
// labels include `labels`; -1 when there is none.
double Value(const PrometheusText& text, const std::string& family,
             const std::map<std::string, std::string>& labels,
             const std::string& suffix = "") {
  const MetricFamilyText* found = text.Find(family);
  if (found == nullptr) return -1;
  for (const SampleText& sample : found->samples) {
    if (sample.name != family + suffix) continue;
    bool match = true;
    for (const auto& [name, value] : labels) {
      auto it = sample.labels.find(name);
      match = match && it != sample.labels.end() && it->second == value;
    }
    if (match) return sample.value;
  }
  return -1;
}

// Every family the agent documents, with its type and label names.
void ExpectFamilies(const PrometheusText& text) {
  const std::map<std::string, std::pair<std::string, std::set<std::string>>>
      want = {
          {kAllocations, {"counter", {"api", "mode", "resource"}}},
          {kRefusals, {"counter", {"api", "reason", "resource"}}},
          {kPrepareSeconds, {"histogram", {"api"}}},
          {kGpuHealthy, {"gauge", {"gpu", "model", "node"}}},
      };
  std::set<std::string> names;
  for (const MetricFamilyText& family : text.families) {
    names.insert(family.name);
    auto it = want.find(family.name);
    if (it == want.end()) continue;
    EXPECT_EQ(family.type, it->second.first) << family.name;
    EXPECT_EQ(family.LabelNames(), it->second.second) << family.name;
    EXPECT_FALSE(family.help.empty()) << family.name;
  }
  EXPECT_EQ(names, (std::set<std::string>{kAllocations, kRefusals,
                                          kPrepareSeconds, kGpuHealthy}));
  EXPECT_THAT(text.comments, ::testing::IsEmpty());
}

TEST(AgentMetricsTest, DevicePluginAllocationsRefusalsAndGpuHealth) {
  absl::StatusOr<std::unique_ptr<AgentRig>> made =
      AgentRig::Create({.gpus = 2,
                        .extra_args = {"--health-interval", "100ms",
                                       "--metrics-address", "127.0.0.1:0"}});
  ASSERT_THAT(made.status(), IsOk());
  AgentRig& rig = **made;
  ASSERT_THAT(rig.StartAgent(), IsOk()) << rig.Log();
  ASSERT_TRUE(rig.AllHealthy()) << rig.Log();

  rig.api().UpsertPod(BoundPod(PodSpec{.name = "served", .memory_mib = 4000},
                               Dialect::kHami, rig.options().node,
                               {ShareOf(AgentRig::Uuid(0), 4000, 0)}));
  // The agent waits for its watch to bring the pod (AllocationMatcher's
  // pod_watch_grace), so one call is enough.
  absl::StatusOr<AdmittedContainer> served = rig.kubelet().AdmitContainer(
      "uid-served", "main", AgentRig::kResource, 1);
  ASSERT_THAT(served.status(), IsOk()) << rig.Log();
  // No allocation record: refused once the watch grace has passed.
  EXPECT_FALSE(
      rig.kubelet()
          .AdmitContainer("uid-stranger", "main", AgentRig::kResource, 1)
          .ok());
  // GPU 1 falls off the bus.
  nlohmann::json inventory = rig.ReadInventory();
  inventory["gpus"][1]["lost"] = true;
  rig.WriteInventory(inventory);

  absl::StatusOr<PrometheusText> text;
  ASSERT_TRUE(WaitFor([&] {
    text = Scrape(rig);
    return text.ok() &&
           Value(*text, kGpuHealthy, {{"gpu", AgentRig::Uuid(1)}}) == 0;
  })) << text.status()
      << "\n"
      << rig.Log();
  ExpectFamilies(*text);
  EXPECT_EQ(Value(*text, kGpuHealthy,
                  {{"node", rig.options().node}, {"gpu", AgentRig::Uuid(0)}}),
            1);
  EXPECT_EQ(Value(*text, kAllocations,
                  {{"api", "device-plugin"},
                   {"resource", AgentRig::kResource},
                   {"mode", "hami-core"}}),
            1);
  EXPECT_EQ(Value(*text, kRefusals,
                  {{"api", "device-plugin"},
                   {"resource", AgentRig::kResource},
                   {"reason", "failed_precondition"}}),
            1);
  // Both Allocate calls were timed.
  EXPECT_EQ(Value(*text, kPrepareSeconds, {{"api", "device-plugin"}}, "_count"),
            2);
  EXPECT_EQ(Value(*text, kPrepareSeconds,
                  {{"api", "device-plugin"}, {"le", "+Inf"}}, "_bucket"),
            2);

  httplib::Client client("127.0.0.1", MetricsPort(rig.Log()));
  auto health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

TEST(AgentMetricsTest, DraPreparesAndRefusals) {
  absl::StatusOr<std::unique_ptr<AgentRig>> made =
      AgentRig::Create({.gpus = 2,
                        .extra_args = {"--metrics-address", "127.0.0.1:0"},
                        .dra = true});
  ASSERT_THAT(made.status(), IsOk());
  AgentRig& rig = **made;
  ASSERT_THAT(rig.StartAgent(), IsOk()) << rig.Log();
  TestDraKubelet kubelet(rig.DraDir("dra-registry"));
  constexpr char kDriver[] = "gpu.deviceshare.io";
  ASSERT_THAT(kubelet.WaitForPlugin(kDriver).status(), IsOk()) << rig.Log();
  ASSERT_TRUE(WaitFor([&] { return rig.api().ResourceSlices().size() == 1; },
                      absl::Seconds(20)))
      << rig.Log();

  auto claim = [&](const std::string& name, const std::string& device) {
    nlohmann::json result = {
        {"request", "r"},
        {"driver", kDriver},
        {"pool", rig.options().node},
        {"device", device},
        {"shareID", "share-r"},
        {"consumedCapacity", {{"memory", "2Gi"}, {"cores", "20"}}}};
    nlohmann::json stored = rig.api().UpsertResourceClaim(
        {{"apiVersion", "resource.k8s.io/v1"},
         {"kind", "ResourceClaim"},
         {"metadata", {{"name", name}, {"namespace", "ml"}}},
         {"status", {{"allocation", {{"devices", {{"results", {result}}}}}}}}});
    return agent::ClaimRef{"ml", stored["metadata"]["uid"],
                           stored["metadata"]["name"]};
  };
  const agent::ClaimRef good = claim("good", "gpu-0");
  const agent::ClaimRef stray = claim("stray", "gpu-9");
  auto answer = kubelet.Prepare("v1", {good});
  ASSERT_THAT(answer.status(), IsOk());
  ASSERT_EQ(answer->at(good.uid).error, "") << rig.Log();
  answer = kubelet.Prepare("v1", {stray});
  ASSERT_THAT(answer.status(), IsOk());
  EXPECT_THAT(answer->at(stray.uid).error, HasSubstr("not published"));

  absl::StatusOr<PrometheusText> text = Scrape(rig);
  ASSERT_THAT(text.status(), IsOk()) << rig.Log();
  ExpectFamilies(*text);
  EXPECT_EQ(
      Value(*text, kAllocations,
            {{"api", "dra"}, {"resource", kDriver}, {"mode", "hami-core"}}),
      1);
  EXPECT_EQ(
      Value(*text, kRefusals,
            {{"api", "dra"}, {"resource", kDriver}, {"reason", "not_found"}}),
      1);
  EXPECT_EQ(Value(*text, kPrepareSeconds, {{"api", "dra"}}, "_count"), 2);
  EXPECT_EQ(Value(*text, kGpuHealthy, {{"gpu", AgentRig::Uuid(1)}}), 1);
}

TEST(AgentMetricsTest, BadMetricsAddressStopsTheAgentWithTheFlagNamed) {
  absl::StatusOr<std::unique_ptr<AgentRig>> made = AgentRig::Create(
      {.gpus = 1, .extra_args = {"--metrics-address", "localhost"}});
  ASSERT_THAT(made.status(), IsOk());
  AgentRig& rig = **made;
  EXPECT_FALSE(rig.StartAgent().ok());
  EXPECT_THAT(rig.Log(), HasSubstr("--metrics-address: \"localhost\" is not "
                                   "HOST:PORT"));
}

}  // namespace
}  // namespace deviceshare::testing
