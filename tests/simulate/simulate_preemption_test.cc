// Tests of `simulate --preemption` (simulate/preemptor.h) and of pods'
// priorities in the pods file: the example's evictions worked out by hand,
// the node pick's order, what never gets evicted, and that nothing changes
// without the flag.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/simulate/json_report.h"
#include "deviceshare/simulate/preemptor.h"
#include "deviceshare/simulate/simulate.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simulate_fixtures.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::Docs;
using ::deviceshare::testing::Gpus;
using ::deviceshare::testing::PlacementOf;
using ::deviceshare::testing::PodYaml;
using ::deviceshare::testing::ShortCluster;
using ::deviceshare::testing::ShortNode;
using ::deviceshare::testing::SimulateJson;
using ::deviceshare::testing::StatusIs;
using ::deviceshare::testing::UnschedulableOf;
using ::deviceshare::testing::UuidsOf;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Json = nlohmann::ordered_json;

absl::StatusOr<Json> RunExample(bool preemption) {
  simulate::SimulateOptions options;
  options.cluster_path = DEVICESHARE_EXAMPLES_DIR "/preemption-cluster.yaml";
  options.pods_path = DEVICESHARE_EXAMPLES_DIR "/preemption.yaml";
  options.preemption = preemption;
  absl::StatusOr<simulate::SimulationReport> report =
      simulate::Simulate(options);
  if (!report.ok()) return report.status();
  return simulate::ReportJson(*report);
}

simulate::SimulateOptions WithPreemption() {
  simulate::SimulateOptions options;
  options.preemption = true;
  return options;
}

std::string PriorityClassYaml(const std::string& name, int value) {
  return absl::StrCat(
      "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: "
      "{name: ",
      name, "}\nvalue: ", value, "\n");
}

// A pod of `memory_mib` on one GPU in priority class `priority_class`.
std::string ClassPod(const std::string& name, int memory_mib,
                     const std::string& priority_class) {
  std::string pod = PodYaml(
      name, absl::StrCat("nvidia.com/gpu: 1, nvidia.com/gpumem: ", memory_mib));
  return absl::StrCat(pod.substr(0, pod.find("spec:\n") + 6),
                      "  priorityClassName: ", priority_class, "\n",
                      pod.substr(pod.find("spec:\n") + 6));
}

std::vector<std::string> PodsOf(const Json& list) {
  std::vector<std::string> pods;
  for (const Json& entry : list) pods.push_back(entry["pod"]);
  return pods;
}

// examples/preemption.yaml, by hand (its header says the same):
//   high-1 (1000, 50000 MiB): node-a's best set is {a-big} (one victim at
//   100; a-small alone frees 21920 MiB, too little). node-b's is {b-whole}
//   (one victim at 500): b-35 and b-45 alone free 36920 / 46920 MiB, so
//   every fitting set of low pods there has two victims, and the search
//   takes the fewest victims first. Across nodes the lower highest victim
//   priority wins: node-a. {a-big} is minimal: no set is smaller than one,
//   and the only other one-victim set on node-a, {a-whole}, is at 500.
//   high-2 (1000, 30000 MiB): node-a {a-small} (31920 free), node-b {b-35}
//   (36920 free; b-45 would free more beyond the need). Both one victim at
//   100, same priority sum: the later start wins, b-35 (4th placed) over
//   a-small (2nd): node-b.
//   never (1000, preemptionPolicy Never): a whole GPU, none free; it may
//   not preempt.
TEST(SimulatePreemptionTest, ExampleEvictsTheMinimalSets) {
  absl::StatusOr<Json> report = RunExample(/*preemption=*/true);
  ASSERT_OK(report);
  std::vector<std::string> keys;
  for (const auto& [key, value] : report->items()) keys.push_back(key);
  EXPECT_THAT(keys, ElementsAre("placements", "unschedulable", "unaccounted",
                                "evictions", "summary", "notes"));
  EXPECT_EQ((*report)["evictions"], Json::parse(R"([
              {"pod": "default/a-big", "node": "node-a",
               "for": "default/high-1"},
              {"pod": "default/b-35", "node": "node-b",
               "for": "default/high-2"}])"));
  EXPECT_THAT(UuidsOf(*report, "high-1"), ElementsAre("GPU-a-0"));
  EXPECT_THAT(UuidsOf(*report, "high-2"), ElementsAre("GPU-b-0"));
  EXPECT_TRUE(PlacementOf(*report, "a-big").is_null());
  EXPECT_TRUE(PlacementOf(*report, "b-35").is_null());
  EXPECT_THAT(
      PodsOf((*report)["placements"]),
      ElementsAre("default/a-small", "default/a-whole", "default/b-45",
                  "default/b-whole", "default/high-1", "default/high-2"));
  EXPECT_THAT(PodsOf((*report)["unschedulable"]), ElementsAre("default/never"));
  const Json& summary = (*report)["summary"];
  EXPECT_EQ(summary["pods"], 9);
  EXPECT_EQ(summary["placed"], 6);
  EXPECT_EQ(summary["unschedulable"], 1);
  EXPECT_EQ(summary["evicted"], 2);
  // 20000 + 50000 + 81920 + 45000 + 30000 + 81920 MiB of 4 x 81920.
  EXPECT_EQ(summary["gpu_memory_allocated_mib"], 308840);
}

TEST(SimulatePreemptionTest, WithoutTheFlagNothingIsEvicted) {
  absl::StatusOr<Json> report = RunExample(/*preemption=*/false);
  ASSERT_OK(report);
  EXPECT_FALSE(report->contains("evictions"));
  EXPECT_FALSE((*report)["summary"].contains("evicted"));
  EXPECT_THAT(PodsOf((*report)["unschedulable"]),
              ElementsAre("default/high-1", "default/high-2", "default/never"));
  EXPECT_EQ((*report)["summary"]["placed"], 6);
  EXPECT_FALSE(PlacementOf(*report, "a-big").is_null());
}

TEST(SimulatePreemptionTest, EqualPriorityIsNeverEvictedAHigherOneIs) {
  const std::string cluster = ShortCluster({ShortNode("n1", Gpus("n1", 1))});
  const std::string classes =
      Docs({PriorityClassYaml("mid", 500), PriorityClassYaml("mid-plus", 501)});
  absl::StatusOr<Json> equal =
      SimulateJson(cluster,
                   Docs({classes, ClassPod("old", 60000, "mid"),
                         ClassPod("new", 50000, "mid")}),
                   "", WithPreemption());
  ASSERT_OK(equal);
  EXPECT_EQ((*equal)["evictions"], Json::array());
  EXPECT_FALSE(UnschedulableOf(*equal, "new").is_null());
  EXPECT_FALSE(PlacementOf(*equal, "old").is_null());

  absl::StatusOr<Json> higher =
      SimulateJson(cluster,
                   Docs({classes, ClassPod("old", 60000, "mid"),
                         ClassPod("new", 50000, "mid-plus")}),
                   "", WithPreemption());
  ASSERT_OK(higher);
  EXPECT_EQ((*higher)["evictions"],
            Json::parse(R"([{"pod": "default/old", "node": "n1",
                              "for": "default/new"}])"));
}

// spec.priority wins over the class; a class may come after its pods.
TEST(SimulatePreemptionTest, SpecPriorityAndLaterClassesAreRead) {
  const std::string cluster = ShortCluster({ShortNode("n1", Gpus("n1", 1))});
  std::string low = ClassPod("low", 60000, "top");
  low.insert(low.find("  priorityClassName"), "  priority: 1\n");
  absl::StatusOr<Json> report = SimulateJson(
      cluster,
      Docs({low, ClassPod("top", 50000, "top"), PriorityClassYaml("top", 9)}),
      "", WithPreemption());
  ASSERT_OK(report);
  EXPECT_EQ((*report)["evictions"][0]["pod"], "default/low");
}

// With --preemption only: without it pods' priority fields are not read,
// so a file naming classes it lacks runs as before.
TEST(SimulatePreemptionTest, UnknownPriorityClassIsAnErrorNamingIt) {
  const std::string cluster = ShortCluster({ShortNode("n1", Gpus("n1", 1))});
  absl::StatusOr<Json> without =
      SimulateJson(cluster, ClassPod("p", 1000, "gold"));
  ASSERT_OK(without);
  EXPECT_FALSE(PlacementOf(*without, "p").is_null());
  EXPECT_THAT(
      SimulateJson(cluster, ClassPod("p", 1000, "gold"), "", WithPreemption()),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("document 1"),
                     HasSubstr("pod default/p: spec.priorityClassName: "
                               "\"gold\" names no PriorityClass"))));
}

// Without priorities every pod is at 0: nothing is lower, so the run is
// the one without the flag, but for the empty evictions list and a note.
TEST(SimulatePreemptionTest, NoPrioritiesChangeNothing) {
  simulate::SimulateOptions options;
  options.cluster_path = DEVICESHARE_EXAMPLES_DIR "/cluster.yaml";
  options.pods_path = DEVICESHARE_EXAMPLES_DIR "/workload.yaml";
  options.config_path = DEVICESHARE_EXAMPLES_DIR "/deviceshare.yaml";
  absl::StatusOr<simulate::SimulationReport> without =
      simulate::Simulate(options);
  options.preemption = true;
  absl::StatusOr<simulate::SimulationReport> with = simulate::Simulate(options);
  ASSERT_OK(without);
  ASSERT_OK(with);
  Json a = simulate::ReportJson(*without);
  Json b = simulate::ReportJson(*with);
  EXPECT_EQ(b["evictions"], Json::array());
  EXPECT_EQ(b["summary"]["evicted"], 0);
  EXPECT_EQ(a["placements"], b["placements"]);
  EXPECT_EQ(a["unschedulable"], b["unschedulable"]);
  // One more note, saying why nothing could be evicted.
  Json notes = Json::array();
  for (const Json& note : b["notes"]) {
    if (note.get<std::string>().starts_with("priorities: ")) {
      EXPECT_EQ(note,
                "priorities: 0 PriorityClass objects read, 0 pods at a "
                "priority other than 0 (spec.priority, else "
                "spec.priorityClassName, else the global default class)");
    } else {
      notes.push_back(note);
    }
  }
  EXPECT_EQ(a["notes"], notes);
  EXPECT_FALSE(a["unschedulable"].empty());
}

// A running pod (an allocation record) is charged before the run and may
// be a victim too; it is in no placement, only in the evictions.
TEST(SimulatePreemptionTest, RunningPodsMayBeEvicted) {
  std::string old =
      PodYaml("old", "nvidia.com/gpu: 1, nvidia.com/gpumem: 60000",
              "hami.io/vgpu-devices-allocated: "
              "'GPU-n1-0,NVIDIA,60000,0:;', hami.io/vgpu-node: n1");
  old.insert(old.find("  containers:"), "  priority: 5\n");
  std::string pod =
      PodYaml("new", "nvidia.com/gpu: 1, nvidia.com/gpumem: 50000");
  pod.insert(pod.find("  containers:"), "  priority: 10\n");
  absl::StatusOr<Json> report =
      SimulateJson(ShortCluster({ShortNode("n1", Gpus("n1", 1))}),
                   Docs({old, pod}), "", WithPreemption());
  ASSERT_OK(report);
  EXPECT_EQ((*report)["evictions"],
            Json::parse(R"([{"pod": "default/old", "node": "n1",
                              "for": "default/new"}])"));
  EXPECT_THAT(UuidsOf(*report, "new"), ElementsAre("GPU-n1-0"));
  EXPECT_EQ((*report)["summary"]["pods"], 1);
  EXPECT_EQ((*report)["summary"]["placed"], 1);
  EXPECT_EQ((*report)["summary"]["gpu_memory_allocated_mib"], 50000);
}

// A pod its namespace's GPU quota refuses does not preempt: the victim
// search tests the node's fit, not the quota (in kube-scheduler quota is
// admission's, never preemption's).
TEST(SimulatePreemptionTest, QuotaRefusedPodsDoNotPreempt) {
  const std::string quota =
      "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: gpu, "
      "namespace: default}\nspec:\n  hard: {limits.nvidia.com/gpumem: "
      "\"80000\"}\n";
  absl::StatusOr<Json> report = SimulateJson(
      ShortCluster({ShortNode("n1", Gpus("n1", 1))}),
      Docs({PriorityClassYaml("mid", 500), PriorityClassYaml("top", 900), quota,
            ClassPod("low", 60000, "mid"), ClassPod("high", 30000, "top")}),
      "", WithPreemption());
  ASSERT_OK(report);
  EXPECT_EQ((*report)["evictions"], Json::array());
  EXPECT_EQ(UnschedulableOf(*report, "high")["reason_counts"],
            Json::parse(R"({"QuotaExceeded": 1})"));
}

simulate::PreemptionCandidate Candidate(const std::string& node,
                                        int32_t max_priority,
                                        int64_t sum_priority, size_t victims,
                                        int64_t earliest_top_start) {
  simulate::PreemptionCandidate candidate;
  candidate.node = node;
  candidate.victims.assign(victims, "v");
  candidate.max_priority = max_priority;
  candidate.sum_priority = sum_priority;
  candidate.earliest_top_start = earliest_top_start;
  return candidate;
}

// kube-scheduler's pickOneNodeForPreemption order, one criterion at a
// time: each earlier one outweighs every later one.
TEST(SimulatePreemptionTest, NodePickFollowsKubeSchedulerOrder) {
  using simulate::PreferredForPreemption;
  // Lower highest priority beats a smaller sum, fewer victims, later start.
  EXPECT_TRUE(PreferredForPreemption(Candidate("z", 5, 90, 3, 0),
                                     Candidate("a", 6, 10, 1, 9)));
  // Then the smaller sum beats fewer victims and a later start.
  EXPECT_TRUE(PreferredForPreemption(Candidate("z", 5, 10, 3, 0),
                                     Candidate("a", 5, 11, 1, 9)));
  // Then fewer victims beat a later start.
  EXPECT_TRUE(PreferredForPreemption(Candidate("z", 5, 10, 1, 0),
                                     Candidate("a", 5, 10, 2, 9)));
  // Then the later start of the highest-priority victims.
  EXPECT_TRUE(PreferredForPreemption(Candidate("z", 5, 10, 1, 9),
                                     Candidate("a", 5, 10, 1, 0)));
  // Then the node name.
  EXPECT_TRUE(PreferredForPreemption(Candidate("a", 5, 10, 1, 0),
                                     Candidate("b", 5, 10, 1, 0)));
  EXPECT_FALSE(PreferredForPreemption(Candidate("b", 5, 10, 1, 0),
                                      Candidate("a", 5, 10, 1, 0)));
}

}  // namespace
}  // namespace deviceshare
