// Tests of the deviceshare-scheduler binary: --help, the README's run
// command, and exit code 2 with one line naming file, document and field
// for invalid input.
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simulate_fixtures.h"
#include "testing/whole_file.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::ReadWholeFile;

using ::deviceshare::testing::WriteTempFile;
using ::testing::HasSubstr;
using ::testing::StartsWith;

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

CliRun Scheduler(const std::string& args) {
  const std::string out = WriteTempFile("stdout", "");
  const std::string err = WriteTempFile("stderr", "");
  const std::string command =
      absl::StrCat(DEVICESHARE_SCHEDULER_BIN, " ", args, " >", out, " 2>", err);
  CliRun run;
  const int status = std::system(command.c_str());
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = ReadWholeFile(out);
  run.err = ReadWholeFile(err);
  return run;
}

TEST(SimulateCliTest, HelpDocumentsEveryFlag) {
  CliRun run = Scheduler("simulate --help");
  EXPECT_EQ(run.exit_code, 0);
  for (const char* flag : {"--cluster",
                           "--pods",
                           "--trace-nodes",
                           "--trace-pods",
                           "--synthetic-nodes",
                           "--gpus-per-node",
                           "--synthetic-pods",
                           "--config",
                           "--node-policy",
                           "--gpu-policy",
                           "--output",
                           "--seed",
                           "--limit-pods",
                           "--max-reason-examples",
                           "--summary-only",
                           "--replay",
                           "--policies",
                           "--seeds",
                           "--inflate",
                           "--points",
                           "--plot"}) {
    EXPECT_THAT(run.out, HasSubstr(flag));
  }
}

TEST(SimulateCliTest, ReadmeRunCommandPrintsTheTable) {
  const std::string examples = DEVICESHARE_EXAMPLES_DIR;
  CliRun run = Scheduler(absl::StrCat(
      "simulate --cluster ", examples, "/cluster.yaml --pods ", examples,
      "/workload.yaml --config ", examples, "/deviceshare.yaml"));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, StartsWith("POD "));
  EXPECT_THAT(run.out, HasSubstr("team-b/h100-trainer"));
  EXPECT_THAT(run.out, HasSubstr("Unschedulable (3 pods)"));
  EXPECT_THAT(run.out, HasSubstr("\nSummary\n"));
  EXPECT_EQ(run.err, "");  // no progress bar: stderr is not a terminal
}

TEST(SimulateCliTest, PreemptionExamplePrintsItsEvictions) {
  const std::string examples = DEVICESHARE_EXAMPLES_DIR;
  CliRun run = Scheduler(absl::StrCat(
      "simulate --cluster ", examples, "/preemption-cluster.yaml --pods ",
      examples, "/preemption.yaml --preemption --summary-only"));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, StartsWith("Evicted (2 pods)\n"));
  EXPECT_THAT(run.out,
              HasSubstr("default/a-big  on node-a  for default/high-1"));
  EXPECT_THAT(run.out, HasSubstr("  evicted  "));
  EXPECT_THAT(Scheduler("simulate --help").out, HasSubstr("--preemption"));
}

TEST(SimulateCliTest, UnknownPriorityClassExitsTwoNamingIt) {
  const std::string cluster = WriteTempFile(
      "cluster.yaml",
      "nodes:\n- name: a\n  gpus:\n  - {model: x, memory_mib: 1}\n");
  const std::string pods = WriteTempFile(
      "pods.yaml",
      "kind: Pod\nmetadata: {name: p}\nspec:\n  priorityClassName: gold\n"
      "  containers: [{name: c}]\n");
  CliRun run = Scheduler(absl::StrCat("simulate --cluster ", cluster,
                                      " --pods ", pods, " --preemption"));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err,
            absl::StrCat("deviceshare-scheduler simulate: ", pods,
                         ": document 1 (line 1): pod default/p: "
                         "spec.priorityClassName: \"gold\" names no "
                         "PriorityClass (the API server's priority admission "
                         "refuses such a pod)\n"));
}

TEST(SimulateCliTest, InvalidInputExitsTwoWithOneLine) {
  const std::string cluster = WriteTempFile(
      "cluster.yaml",
      "nodes:\n- name: a\n  gpus:\n  - {model: x, memory_mib: 1, cnt: 1}\n");
  const std::string pods = WriteTempFile("pods.yaml", "");
  CliRun run =
      Scheduler(absl::StrCat("simulate --cluster=", cluster, " --pods ", pods));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err,
            absl::StrCat("deviceshare-scheduler simulate: ", cluster,
                         ": document 1 (line 1): nodes[0].gpus[0].cnt: "
                         "unknown key "
                         "(known: model, memory_mib, count, split, numa, mode, "
                         "uuid, healthy, cores)\n"));
}

TEST(SimulateCliTest, BadFlagsExitTwo) {
  EXPECT_EQ(Scheduler("simulate --clustr x").exit_code, 2);
  EXPECT_EQ(Scheduler("simulate --cluster").exit_code, 2);
  EXPECT_EQ(Scheduler("simulate --synthetic-nodes=ten").exit_code, 2);
  EXPECT_EQ(Scheduler("run").exit_code, 2);
  CliRun run = Scheduler(
      "simulate --synthetic-nodes 1 --gpus-per-node 1 --synthetic-pods 1 "
      "--output yaml");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("--output"));
  run = Scheduler(
      "simulate --synthetic-nodes 1 --gpus-per-node 1 --synthetic-pods 1 "
      "--node-policy pack");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("--node-policy"));
}

// FGD's replay on a toy trace whose series is known whatever the shuffle:
// four whole-GPU pods, three one-GPU nodes, already at the target.
TEST(SimulateCliTest, ReplayPrintsTableCsvAndPlot) {
  const std::string nodes =
      WriteTempFile("nodes.csv",
                    "sn,cpu_milli,memory_mib,gpu,model\nn1,8000,65536,1,T4\n"
                    "n2,8000,65536,1,T4\nn3,8000,65536,1,T4\n");
  const std::string pods = WriteTempFile(
      "toy.csv",
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,1000,1024,1,1000\n"
      "p2,1000,1024,1,1000\np3,1000,1024,1,1000\np4,1000,1024,1,1000\n");
  const std::string plot = WriteTempFile("plot.svg", "");
  const std::string common = absl::StrCat(
      "simulate --replay fgd --trace-nodes ", nodes, " --trace-pods ", pods,
      " --policies binpack --seeds 2 ", "--inflate 1.34 --points 33,100");
  CliRun run = Scheduler(absl::StrCat(common, " --plot ", plot));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("unalloc@33%"));
  EXPECT_THAT(run.out, HasSubstr("toy  binpack  66.67 ± 0.00  0.00 ± 0.00"));
  EXPECT_THAT(run.out, HasSubstr("3/4"));
  EXPECT_THAT(run.out, HasSubstr("2 runs in "));
  EXPECT_THAT(ReadWholeFile(plot), StartsWith("<svg"));
  run = Scheduler(absl::StrCat(common, " --output csv"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, StartsWith("trace,policy,seed,arrived_pct,allocated_pct,"
                                  "unallocated_pct\n"));
  EXPECT_THAT(run.out, HasSubstr("toy,binpack,43,67,66.6667,33.3333\n"));
  // Per seed: buckets 33, 67, 100 and 133 and their empty neighbours.
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1 + 2 * 11);
  for (const char* bad : {"--seeds 0", "--points x", "--output json",
                          "--policies nope", "--replay other", "--seed 1"}) {
    run = Scheduler(absl::StrCat(common, " ", bad));
    EXPECT_EQ(run.exit_code, 2) << bad;
    EXPECT_THAT(run.err, HasSubstr(std::string(bad).substr(0, 6))) << bad;
  }
  run = Scheduler("simulate --seeds 3 --synthetic-nodes 1");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("--seeds needs --replay fgd"));
}

TEST(SimulateCliTest, SyntheticJsonRun) {
  CliRun run = Scheduler(
      "simulate --synthetic-nodes 2 --gpus-per-node 4 --synthetic-pods 10 "
      "--seed 3 --output json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto json = nlohmann::ordered_json::parse(run.out);
  EXPECT_EQ(json["summary"]["pods"], 10);
  EXPECT_EQ(json["summary"]["gpus"], 8);
}

// Names that are not UTF-8 (no Kubernetes name is, but a file may hold
// anything) print as U+FFFD in JSON instead of aborting the run; the table
// prints the bytes as they are.
TEST(SimulateCliTest, NamesThatAreNotUtf8PrintInJson) {
  const std::string cluster =
      WriteTempFile("cluster.yaml",
                    "nodes:\n- name: \"n\xff\"\n  gpus:\n"
                    "  - {model: \"m\xfe\", memory_mib: 1000}\n");
  const std::string pods = WriteTempFile(
      "pods.yaml",
      "kind: Pod\nmetadata: {name: \"p\xff\"}\nspec:\n  containers:\n"
      "  - name: c\n    resources: {limits: {nvidia.com/gpu: 1, "
      "nvidia.com/gpumem: 10}}\n");
  CliRun run = Scheduler(absl::StrCat("simulate --cluster ", cluster,
                                      " --pods ", pods, " --output json"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto json = nlohmann::ordered_json::parse(run.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << run.out;
  EXPECT_EQ(json["placements"][0]["pod"], "default/p\xef\xbf\xbd");
  EXPECT_EQ(json["placements"][0]["node"], "n\xef\xbf\xbd");
}

}  // namespace
}  // namespace deviceshare
