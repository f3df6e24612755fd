// Tests of the deviceshare-scheduler binary: --help, the README's run
// command, and exit code 2 with one line naming file, document and field
// for invalid input.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simulate_fixtures.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::WriteTempFile;
using ::testing::HasSubstr;
using ::testing::StartsWith;

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

CliRun Scheduler(const std::string& args) {
  const std::string out = WriteTempFile("stdout", "");
  const std::string err = WriteTempFile("stderr", "");
  const std::string command =
      absl::StrCat(DEVICESHARE_SCHEDULER_BIN, " ", args, " >", out, " 2>", err);
  CliRun run;
  const int status = std::system(command.c_str());
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = ReadAll(out);
  run.err = ReadAll(err);
  return run;
}

TEST(SimulateCliTest, HelpDocumentsEveryFlag) {
  CliRun run = Scheduler("simulate --help");
  EXPECT_EQ(run.exit_code, 0);
  for (const char* flag :
       {"--cluster", "--pods", "--trace-nodes", "--trace-pods",
        "--synthetic-nodes", "--gpus-per-node", "--synthetic-pods", "--config",
        "--node-policy", "--gpu-policy", "--output", "--seed", "--limit-pods",
        "--max-reason-examples", "--summary-only"}) {
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

TEST(SimulateCliTest, SyntheticJsonRun) {
  CliRun run = Scheduler(
      "simulate --synthetic-nodes 2 --gpus-per-node 4 --synthetic-pods 10 "
      "--seed 3 --output json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto json = nlohmann::ordered_json::parse(run.out);
  EXPECT_EQ(json["summary"]["pods"], 10);
  EXPECT_EQ(json["summary"]["gpus"], 8);
}

}  // namespace
}  // namespace deviceshare
