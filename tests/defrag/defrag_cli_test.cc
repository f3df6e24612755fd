// `deviceshare-scheduler defrag`, the real binary: the shipped example
// (examples/defrag-*.yaml; the fewest moves are worked out by hand in
// examples/defrag-pods.yaml), table and JSON, the opt-out annotation, a
// disruption budget, flags, and --apply against the in-memory API server
// with a budget that refuses the second eviction.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/fake_api_server.h"
#include "testing/kube_objects.h"
#include "testing/temp_folder.h"
#include "testing/whole_file.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::ReadWholeFile;
using ::deviceshare::testing::TempFolder;
using nlohmann::json;
using ::testing::HasSubstr;

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class DefragCliTest : public ::testing::Test {
 protected:
  CliRun Defrag(const std::string& args) {
    const std::string out = folder_.File("stdout");
    const std::string err = folder_.File("stderr");
    const std::string command = absl::StrCat(
        DEVICESHARE_SCHEDULER_BIN, " defrag ", args, " >", out, " 2>", err);
    CliRun run;
    const int status = std::system(command.c_str());
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    run.out = ReadWholeFile(out);
    run.err = ReadWholeFile(err);
    return run;
  }
  static std::string Example(const std::string& name) {
    return absl::StrCat(DEVICESHARE_EXAMPLES_DIR, "/", name);
  }
  static std::string ExampleArgs() {
    return absl::StrCat("--cluster ", Example("defrag-cluster.yaml"),
                        " --pods ", Example("defrag-pods.yaml"));
  }
  static json Moves(std::initializer_list<const char*> moves) {
    json list = json::array();
    for (const char* move : moves) list.push_back(json::parse(move));
    return list;
  }

  TempFolder folder_;
};

TEST_F(DefragCliTest, ExamplePlanIsTwoMovesProven) {
  CliRun run = Defrag(absl::StrCat(ExampleArgs(), " --output json"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json plan = json::parse(run.out);
  EXPECT_EQ(plan["moves"], Moves({R"({"pod": "default/infer-a", "from": "gpu-1",
                       "to": "gpu-3"})",
                                  R"({"pod": "default/infer-b", "from": "gpu-2",
                       "to": "gpu-3"})"}));
  EXPECT_EQ(plan["placements"], json::parse(R"([
      {"pod": "default/big-1", "node": "gpu-1", "after_moves": 1},
      {"pod": "default/big-2", "node": "gpu-2", "after_moves": 2}])"));
  EXPECT_EQ(plan["unplaceable"], json::array());
  EXPECT_EQ(plan["complete"], true);
  EXPECT_EQ(plan["exact"], true);
  EXPECT_EQ(plan["movable_pods"], 5);  // train-c opts out
}

TEST_F(DefragCliTest, ExamplePlanTable) {
  CliRun run = Defrag(ExampleArgs());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out,
              HasSubstr("defrag plan: 2 moves make 2 of 2 targets placeable "
                        "(fewest moves, proven by the exact search)"));
  EXPECT_THAT(run.out, HasSubstr("MOVE  POD              FROM   TO\n"
                                 "1     default/infer-a  gpu-1  gpu-3\n"
                                 "2     default/infer-b  gpu-2  gpu-3\n"));
  EXPECT_THAT(run.out, HasSubstr("default/big-2  gpu-2  2\n"));
  EXPECT_THAT(run.out, HasSubstr("1 pod may not move: deviceshare.io/movable: "
                                 "\"false\""));
}

// One disruption for app: infer: infer-a moves, then train-a (40960 MiB
// into GPU-2-1's gap) instead of infer-b; still two moves.
TEST_F(DefragCliTest, DisruptionBudgetChangesTheSecondMove) {
  CliRun run =
      Defrag(absl::StrCat(ExampleArgs(), " --budgets ",
                          Example("defrag-budgets.yaml"), " --output json"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json plan = json::parse(run.out);
  EXPECT_EQ(plan["moves"], Moves({R"({"pod": "default/infer-a", "from": "gpu-1",
                       "to": "gpu-3"})",
                                  R"({"pod": "default/train-a", "from": "gpu-1",
                       "to": "gpu-2"})"}));
  EXPECT_EQ(plan["complete"], true);
}

// The same budget inside the pods file (where simulate reads budgets too).
TEST_F(DefragCliTest, BudgetInThePodsFileCounts) {
  const std::string path = folder_.File("pods.yaml");
  std::ofstream(path) << ReadWholeFile(Example("defrag-pods.yaml")) << "---\n"
                      << ReadWholeFile(Example("defrag-budgets.yaml"));
  CliRun run = Defrag(absl::StrCat("--cluster ", Example("defrag-cluster.yaml"),
                                   " --pods ", path, " --output json"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(json::parse(run.out)["moves"][1]["pod"], "default/train-a");
}

// Budgets written by hand, without status: disruptionsAllowed as the
// disruption controller computes it from the three app: infer pods.
// minAvailable 2 leaves one (as defrag-budgets.yaml says); maxUnavailable
// 34% of 3 rounds up to 2, so both infer pods may move.
TEST_F(DefragCliTest, BudgetWithoutStatusIsComputedFromItsSpec) {
  auto plan_with = [&](const std::string& bound) {
    const std::string path = folder_.File("budget.yaml");
    std::ofstream(path) << absl::StrCat(
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\n"
        "metadata: {name: infer}\nspec:\n  ",
        bound, "\n  selector: {matchLabels: {app: infer}}\n");
    CliRun run = Defrag(
        absl::StrCat(ExampleArgs(), " --budgets ", path, " --output json"));
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return run.exit_code == 0 ? json::parse(run.out) : json();
  };
  EXPECT_EQ(plan_with("minAvailable: 2")["moves"][1]["pod"], "default/train-a");
  EXPECT_EQ(plan_with("maxUnavailable: 34%")["moves"][1]["pod"],
            "default/infer-b");
  // minAvailable 3: no infer pod may move; the train pods can empty only
  // one GPU between them (each fills the other's gap).
  const json none = plan_with("minAvailable: 3");
  EXPECT_EQ(none["moves"].size(), 1u);
  EXPECT_EQ(none["unplaceable"].size(), 1u);
  EXPECT_EQ(none["complete"], true);
}

TEST_F(DefragCliTest, BadBudgetExitsTwoNamingIt) {
  const std::string path = folder_.File("budget.yaml");
  std::ofstream(path) << "apiVersion: policy/v1\nkind: PodDisruptionBudget\n"
                         "metadata: {name: infer}\n"
                         "spec: {minAvailable: lots, selector: {}}\n";
  CliRun run = Defrag(absl::StrCat(ExampleArgs(), " --budgets ", path));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("PodDisruptionBudget default/infer: "
                                 "spec.minAvailable: \"lots\""));
  std::ofstream(path) << "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n";
  run = Defrag(absl::StrCat(ExampleArgs(), " --budgets ", path));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("want PodDisruptionBudget"));
  // Past the API's ranges: named, not wrapped to a negative count (which
  // planned nothing) or read as more than every pod.
  std::ofstream(path) << "apiVersion: policy/v1\nkind: PodDisruptionBudget\n"
                         "metadata: {name: infer}\n"
                         "spec: {minAvailable: 1, selector: {}}\n"
                         "status: {disruptionsAllowed: 2147483648}\n";
  run = Defrag(absl::StrCat(ExampleArgs(), " --budgets ", path));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("status.disruptionsAllowed: 2147483648"));
  std::ofstream(path) << "apiVersion: policy/v1\nkind: PodDisruptionBudget\n"
                         "metadata: {name: infer}\n"
                         "spec: {maxUnavailable: \"150%\", selector: {}}\n";
  run = Defrag(absl::StrCat(ExampleArgs(), " --budgets ", path));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("spec.maxUnavailable: \"150%\""));
}

// infer-a and infer-b opt out too: the plan moves neither.
TEST_F(DefragCliTest, OptedOutPodsNeverMove) {
  std::string pods = ReadWholeFile(Example("defrag-pods.yaml"));
  for (const char* name : {"infer-a", "infer-b"}) {
    const std::string head = absl::StrCat(
        "name: ", name, "\n  labels: {app: infer}\n  annotations:\n");
    pods = absl::StrReplaceAll(
        pods, {{head, absl::StrCat(
                          head, "    deviceshare.io/movable: \"false\"\n")}});
  }
  const std::string path = folder_.File("pods.yaml");
  std::ofstream(path) << pods;
  CliRun run = Defrag(absl::StrCat("--cluster ", Example("defrag-cluster.yaml"),
                                   " --pods ", path, " --output json"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json plan = json::parse(run.out);
  EXPECT_EQ(plan["movable_pods"], 3);
  for (const json& move : plan["moves"]) {
    EXPECT_NE(move["pod"], "default/infer-a");
    EXPECT_NE(move["pod"], "default/infer-b");
    EXPECT_NE(move["pod"], "default/train-c");
  }
  EXPECT_EQ(plan["unplaceable"].size() + plan["placements"].size(), 2u);
}

// infer-a is a DaemonSet's, infer-b has no controller, two budgets select
// train-a: none of them moves, and the notes say why.
TEST_F(DefragCliTest, PodsThatWouldNotComeBackNeverMove) {
  std::string pods = ReadWholeFile(Example("defrag-pods.yaml"));
  const std::string owner =
      "  - {apiVersion: apps/v1, kind: ReplicaSet, name: infer, uid: "
      "rs-infer, controller: true}\n";
  const size_t a = pods.find(owner, pods.find("name: infer-a"));
  pods.replace(a, owner.size(),
               "  - {apiVersion: apps/v1, kind: DaemonSet, name: ds, uid: ds, "
               "controller: true}\n");
  const size_t b = pods.find(owner, pods.find("name: infer-b"));
  pods.replace(b, owner.size(),
               "  - {apiVersion: v1, kind: Node, name: gpu-2, uid: n2}\n");
  const std::string budget =
      "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\n"
      "metadata: {name: %s}\nspec:\n  maxUnavailable: 1\n"
      "  selector: {matchLabels: {app: train}}\n";
  pods += absl::StrReplaceAll(budget, {{"%s", "train-1"}});
  pods += absl::StrReplaceAll(budget, {{"%s", "train-2"}});
  const std::string path = folder_.File("pods.yaml");
  std::ofstream(path) << pods;
  CliRun run = Defrag(absl::StrCat("--cluster ", Example("defrag-cluster.yaml"),
                                   " --pods ", path, " --output json"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json plan = json::parse(run.out);
  // infer-c alone may move (train-c opts out): into GPU-1-1's 61440 MiB
  // gap (binpack: gpu-1 and gpu-2 tie, by name), emptying GPU-3-1 for
  // big-1; no other GPU can be emptied, so big-2 stays unplaceable.
  EXPECT_EQ(plan["movable_pods"], 1);
  EXPECT_EQ(plan["moves"], Moves({R"({"pod": "default/infer-c",
                                      "from": "gpu-3", "to": "gpu-1"})"}));
  EXPECT_EQ(plan["placements"].size(), 1u);
  EXPECT_EQ(plan["unplaceable"].size(), 1u);
  EXPECT_EQ(plan["complete"], true);
  const std::string notes = plan["notes"].dump();
  EXPECT_THAT(notes, HasSubstr("1 pod may not move: a DaemonSet's"));
  EXPECT_THAT(notes, HasSubstr("1 pod may not move: no controller"));
  EXPECT_THAT(notes, HasSubstr("2 pods may not move: more than one "
                               "PodDisruptionBudget selects it"));
}

// Three whole GPUs: the greedy step places two (infer-b goes into
// gpu-1's gap, which the third would need); the exact search finds three
// moves that free three GPUs, and no two do (every GPU holds a pod).
TEST_F(DefragCliTest, FreeWholeGpus) {
  CliRun run =
      Defrag(absl::StrCat(ExampleArgs(), " --free-whole-gpus 3 --output json"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json plan = json::parse(run.out);
  EXPECT_EQ(plan["targets"], 3);
  EXPECT_EQ(plan["placements"].size(), 3u);
  EXPECT_EQ(plan["moves"].size(), 3u);
  EXPECT_EQ(plan["complete"], true);
}

TEST_F(DefragCliTest, HelpDocumentsEveryFlag) {
  CliRun run = Defrag("--help");
  EXPECT_EQ(run.exit_code, 0);
  for (const char* flag : {"defrag --cluster FILE --pods FILE", "--budgets",
                           "--kubeconfig", "--free-whole-gpus", "--max-moves",
                           "--apply", "--output", "deviceshare.io/movable"}) {
    EXPECT_THAT(run.out, HasSubstr(flag));
  }
}

TEST_F(DefragCliTest, BadFlagsExitTwo) {
  for (const std::string& args :
       {absl::StrCat(ExampleArgs(), " --apply"),
        absl::StrCat(ExampleArgs(), " --kubeconfig x"),
        std::string("--cluster a.yaml"),
        absl::StrCat(ExampleArgs(), " --free-whole-gpus -1"),
        absl::StrCat(ExampleArgs(), " --output csv"),
        absl::StrCat(ExampleArgs(), " --seed 3")}) {
    CliRun run = Defrag(args);
    EXPECT_EQ(run.exit_code, 2) << args;
    EXPECT_THAT(run.err, HasSubstr("deviceshare-scheduler defrag: ")) << args;
  }
}

// ---- a live cluster (the in-memory API server) -----------------------------

// Four nodes of one 40960 MiB GPU; a and b (app: ab, one budget) hold 10240
// MiB on n1 and n2, c and d 30720 on n3 and n4; p1 and p2 ask a whole GPU.
// The plan (as tests/defrag's FragmentedClusterNeedsTwoMoves): a to n3, b
// to n4.
class DefragLiveTest : public DefragCliTest {
 protected:
  DefragLiveTest() {
    for (const char* node : {"n1", "n2", "n3", "n4"}) {
      server_.UpsertNode(testing::HamiNodeObject(
          {.name = node, .gpus = 1, .memory_mib = 40960}));
    }
    Bound("a", "n1", 10240, "ab");
    Bound("b", "n2", 10240, "ab");
    Bound("c", "n3", 30720, "cd");
    Bound("d", "n4", 30720, "cd");
    for (const char* name : {"p1", "p2"}) {
      server_.UpsertPod(
          testing::HamiPodObject({.name = name, .memory_mib = 40960}));
    }
    server_.UpsertPodDisruptionBudget(Budget("ab", 2));
    kubeconfig_ = server_.WriteKubeconfig(folder_.path());
  }
  void Bound(const std::string& name, const std::string& node, int64_t mib,
             const std::string& app) {
    json pod =
        testing::HamiBoundPodObject({.name = name, .memory_mib = mib}, node, 0);
    pod["metadata"]["labels"] = {{"app", app}};
    pod["metadata"]["ownerReferences"] =
        json::array({{{"apiVersion", "apps/v1"},
                      {"kind", "ReplicaSet"},
                      {"name", app},
                      {"uid", "rs-" + app},
                      {"controller", true}}});
    server_.UpsertPod(std::move(pod));
  }
  static json Budget(const std::string& app, int allowed) {
    return {{"metadata", {{"name", app}, {"namespace", "default"}}},
            {"spec", {{"selector", {{"matchLabels", {{"app", app}}}}}}},
            {"status", {{"disruptionsAllowed", allowed}}}};
  }

  testing::FakeApiServer server_;
  std::string kubeconfig_;
};

TEST_F(DefragLiveTest, PlanReadsTheClusterAndChangesNothing) {
  CliRun run =
      Defrag(absl::StrCat("--kubeconfig ", kubeconfig_, " --output json"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json plan = json::parse(run.out);
  EXPECT_EQ(plan["moves"],
            Moves({R"({"pod": "default/a", "from": "n1", "to": "n3"})",
                   R"({"pod": "default/b", "from": "n2", "to": "n4"})"}));
  EXPECT_EQ(plan["complete"], true);
  EXPECT_TRUE(server_.Evictions().empty());
  EXPECT_TRUE(server_.GetPod("default", "a").has_value());
}

// The budget allows both evictions when the plan is read; the first one
// takes the budget to 0 because another disruption of app: ab happens
// meanwhile (the hook), so the API server refuses the second: --apply
// stops there and says which move and why.
TEST_F(DefragLiveTest, ApplyStopsAtTheRefusedEviction) {
  server_.OnEviction([this](const json&) {
    server_.UpsertPodDisruptionBudget(Budget("ab", 0));
  });
  CliRun run = Defrag(absl::StrCat("--kubeconfig ", kubeconfig_, " --apply"));
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("evicted default/a (move 1 of 2, from n1; "
                                 "planned on n3)"));
  EXPECT_THAT(run.err,
              HasSubstr("move 2 of 2 (default/b from n2 to n4) was refused: "));
  EXPECT_THAT(run.err, HasSubstr("HTTP 429"));
  EXPECT_THAT(run.err, HasSubstr("Cannot evict pod as it would violate the "
                                 "pod's disruption budget."));
  EXPECT_THAT(run.err, HasSubstr("stopped after 1 eviction"));
  ASSERT_EQ(server_.Evictions().size(), 1u);
  EXPECT_EQ(server_.Evictions()[0]["metadata"]["name"], "a");
  EXPECT_FALSE(server_.GetPod("default", "a").has_value());
  EXPECT_TRUE(server_.GetPod("default", "b").has_value());
}

TEST_F(DefragLiveTest, ApplyEvictsEveryMoveInOrder) {
  CliRun run = Defrag(absl::StrCat("--kubeconfig ", kubeconfig_, " --apply"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(server_.Evictions().size(), 2u);
  EXPECT_EQ(server_.Evictions()[0]["metadata"]["name"], "a");
  EXPECT_EQ(server_.Evictions()[1]["metadata"]["name"], "b");
  EXPECT_EQ(server_.GetPodDisruptionBudget("default", "ab")
                ->at("status")["disruptionsAllowed"],
            0);
}

}  // namespace
}  // namespace deviceshare
