// Tests of the Alibaba trace reader: CSV parsing by header name, the
// request mapping of data/README.md, creation_time order, errors with
// file and line, a small replay, and the real node and pod lists of
// data/alibaba-gpu-v2023/ (part of the repository: a missing file fails).
#include <fstream>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "deviceshare/input/gpu_uuid.h"
#include "deviceshare/simulate/csv_table.h"
#include "deviceshare/simulate/json_report.h"
#include "deviceshare/simulate/simulate.h"
#include "deviceshare/simulate/trace_loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simulate_fixtures.h"
#include "testing/status_matchers.h"

namespace deviceshare::simulate {
namespace {

using ::deviceshare::input::GeneratedGpuUuid;
using ::deviceshare::testing::PlacementOf;
using ::deviceshare::testing::StatusIs;
using ::deviceshare::testing::UnschedulableOf;
using ::deviceshare::testing::WriteTempFile;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;
using ::testing::StartsWith;

TEST(TraceCsvTest, ReadsQuotedFieldsCrlfAndBom) {
  auto table = CsvTable::Parse(
      "\xEF\xBB\xBF"
      "a, b ,c\r\n1,\"x,\"\"y\"\"\",3\r\n\r\n4,\"multi\nline\",6",
      "t.csv");
  ASSERT_OK(table);
  EXPECT_THAT(table->header(), ElementsAre("a", "b", "c"));
  ASSERT_EQ(table->row_count(), 2u);
  EXPECT_EQ(table->Field(0, *table->Column("b")), "x,\"y\"");
  EXPECT_EQ(table->Field(1, 1), "multi\nline");
  EXPECT_EQ(table->Line(0), 2u);
  EXPECT_EQ(table->Line(1), 4u);
  EXPECT_FALSE(table->Column("d").has_value());
}

TEST(TraceCsvTest, ErrorsNameFileAndLine) {
  EXPECT_THAT(
      CsvTable::Parse("a,b\n1,2\n3\n", "t.csv"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               StartsWith("t.csv: line 3: 1 fields, the header has 2")));
  EXPECT_THAT(CsvTable::Parse("a,b\n1,\"2\n", "t.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "t.csv: line 2: unterminated quoted field"));
  EXPECT_THAT(CsvTable::Parse("", "t.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("t.csv: empty file")));
  auto table = CsvTable::Parse("a\nx\n", "t.csv");
  ASSERT_OK(table);
  EXPECT_THAT(table->Int(0, 0),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "t.csv: line 2: column a: \"x\" is not an integer"));
  EXPECT_THAT(table->RequireColumn("b"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "t.csv: header: column b is missing (columns: a)"));
}

TEST(TraceLoaderTest, NodesGetModelMemoryAndGeneratedUuids) {
  auto nodes = LoadTraceNodes(
      "model,gpu,sn,memory_mib,cpu_milli\nT4,2,n-t4,262144,64000\n"
      "G2,1,n-g2,786432,96000\nXX9,1,n-new,1024,1000\n,0,n-cpu,1024,1000\n",
      "nodes.csv", DeviceConfig());
  ASSERT_OK(nodes);
  ASSERT_THAT(nodes->nodes, SizeIs(4));
  const NodeInventory& t4 = nodes->nodes[0];
  EXPECT_EQ(t4.name, "n-t4");
  EXPECT_EQ(t4.cpu_milli, 64000);
  EXPECT_EQ(t4.memory_mib, 262144);
  ASSERT_THAT(t4.gpus, SizeIs(2));
  EXPECT_EQ(t4.gpus[1].model, "Alibaba[T4]");
  EXPECT_EQ(t4.gpus[1].memory_mib, 15360);
  EXPECT_EQ(t4.gpus[1].split_count, 10);
  EXPECT_EQ(t4.gpus[1].index, 1);
  EXPECT_EQ(nodes->nodes[1].gpus[0].memory_mib, 32768);  // G2: assumed
  EXPECT_EQ(nodes->nodes[2].gpus[0].memory_mib, kUndisclosedGpuMemoryMib);
  EXPECT_THAT(nodes->nodes[3].gpus, SizeIs(0));
  ASSERT_THAT(nodes->notes, SizeIs(1));
  EXPECT_THAT(nodes->notes[0], HasSubstr("G2 32768 MiB x1 (assumed)"));
  EXPECT_THAT(nodes->notes[0], HasSubstr("XX9 32768 MiB x1 (assumed)"));
  EXPECT_THAT(nodes->notes[0], HasSubstr("T4 15360 MiB x2,"));
}

TEST(TraceLoaderTest, PodMappingFollowsTheTracesReadme) {
  TracePod share{"s", 6000, 12288, 1, 470, {"V100M16", "V100M32"}, 0};
  PodRequest request = TracePodRequest(share);
  EXPECT_EQ(request.Key(), "default/s");
  EXPECT_EQ(request.uid, "default/s");
  EXPECT_EQ(request.cpu_milli, 6000);
  EXPECT_EQ(request.memory_mib, 12288);
  ASSERT_THAT(request.containers, SizeIs(1));
  EXPECT_EQ(request.containers[0].gpu_count, 1);
  EXPECT_EQ(request.containers[0].cores, 47);
  EXPECT_EQ(request.containers[0].memory_percent, 47);
  EXPECT_EQ(request.containers[0].memory_mib, 0);
  EXPECT_THAT(request.use_models,
              ElementsAre("Alibaba[V100M16]", "Alibaba[V100M32]"));
  EXPECT_EQ(TracePodGpuMilli(share), 470);

  TracePod odd{"o", 0, 0, 1, 455, {}, 0};  // not in the files: rounds up
  EXPECT_EQ(TracePodRequest(odd).containers[0].cores, 46);

  TracePod whole{"w", 0, 0, 4, 1000, {}, 0};
  request = TracePodRequest(whole);
  EXPECT_EQ(request.containers[0].gpu_count, 4);
  EXPECT_EQ(request.containers[0].cores, 100);
  EXPECT_EQ(request.containers[0].memory_percent, 100);
  EXPECT_EQ(TracePodGpuMilli(whole), 4000);

  TracePod cpu{"c", 4000, 1024, 0, 0, {"T4"}, 0};
  request = TracePodRequest(cpu);
  EXPECT_FALSE(request.HasGpuRequest());
  EXPECT_TRUE(request.use_models.empty());
  EXPECT_EQ(request.cpu_milli, 4000);
}

TEST(TraceLoaderTest, PodsAreOrderedByCreationTimeStably) {
  auto pods = LoadTracePods(
      "creation_time,name,num_gpu,gpu_milli,cpu_milli,memory_mib,gpu_spec\n"
      "30,late,1,500,1000,1024,\n10,early,1,500,1000,1024,T4|G2|T4\n"
      "10,early-2,0,0,1000,1024,\n",
      "pods.csv");
  ASSERT_OK(pods);
  ASSERT_THAT(*pods, SizeIs(3));
  EXPECT_EQ((*pods)[0].name, "early");
  EXPECT_EQ((*pods)[1].name, "early-2");
  EXPECT_EQ((*pods)[2].name, "late");
  EXPECT_THAT((*pods)[0].gpu_spec, ElementsAre("T4", "G2"));
  // Without creation_time (like openb_pod_list_multigpu20.csv): file order.
  auto unordered = LoadTracePods(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli\nb,1,1,1,1000\na,1,1,0,0\n",
      "pods.csv");
  ASSERT_OK(unordered);
  EXPECT_EQ((*unordered)[0].name, "b");
}

TEST(TraceLoaderTest, PodErrorsNameFileLineAndColumn) {
  EXPECT_THAT(
      LoadTracePods("name,cpu_milli,memory_mib,num_gpu\na,1,1,1\n", "pods.csv"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("pods.csv: header: column gpu_milli is "
                         "missing")));
  EXPECT_THAT(
      LoadTracePods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1,1,-1,0\n",
                    "pods.csv"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "pods.csv: line 2: column num_gpu: -1 is negative"));
  EXPECT_THAT(
      LoadTracePods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1,1,1,0\n"
                    "a,1,1,1,0\n",
                    "pods.csv"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "pods.csv: line 3: column name: pod a is also on line 2"));
}

TEST(TraceLoaderTest, SmallReplayEnforcesCpuModelsAndShares) {
  SimulateOptions options;
  options.trace_nodes_path =
      WriteTempFile("nodes.csv",
                    "sn,cpu_milli,memory_mib,gpu,model\nn-t4,8000,65536,1,T4\n"
                    "n-v32,64000,262144,2,V100M32\n");
  options.trace_pods_path = WriteTempFile(
      "pods.csv",
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,creation_time\n"
      "share,4000,8192,1,470,T4,1\n"
      "cpu-hog,9000,1024,0,0,,2\n"
      "v16,1000,1024,1,1000,V100M16,3\n"
      "pair,1000,1024,2,1000,V100M16|V100M32,4\n"
      "cpu-only,4000,1024,0,0,,5\n");
  auto report = Simulate(options);
  ASSERT_OK(report);
  nlohmann::ordered_json json = ReportJson(*report);
  // 47% of a 15360 MiB T4 = 7219 MiB (floor), 47 cores.
  nlohmann::ordered_json device;
  device["uuid"] = GeneratedGpuUuid("n-t4", 0);
  device["mode"] = "hami-core";
  device["memory_mib"] = 7219;
  device["cores"] = 47;
  EXPECT_EQ(PlacementOf(json, "share")["containers"][0]["devices"][0], device);
  EXPECT_EQ(PlacementOf(json, "share")["node"], "n-t4");
  // 9 CPUs: more than n-t4 has; n-v32 takes it.
  EXPECT_EQ(PlacementOf(json, "cpu-hog")["node"], "n-v32");
  // V100M16 does not match the V100M32 node (exact model match).
  EXPECT_THAT(
      UnschedulableOf(json, "v16")["reason_counts"],
      ::testing::Eq(nlohmann::ordered_json::parse(R"({"TypeMismatch": 2})")));
  EXPECT_EQ(PlacementOf(json, "pair")["node"], "n-v32");
  // Both nodes have the CPUs (n-t4 exactly its last 4); binpack scores GPU
  // use, and n-v32's two GPUs are full.
  EXPECT_EQ(PlacementOf(json, "cpu-only")["node"], "n-v32");
  EXPECT_EQ(json["summary"]["placed"], 4);
  EXPECT_EQ(json["summary"]["gpus_fully_idle"], 0);
}

TEST(TraceLoaderTest, CpuOnlyPodsThatFitNowhereSayInsufficientCpu) {
  SimulateOptions options;
  options.trace_nodes_path = WriteTempFile(
      "nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn,8000,65536,1,T4\n");
  options.trace_pods_path =
      WriteTempFile("pods.csv",
                    "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
                    "hog,9000,1024,0,0\nfat,1000,70000,0,0\n");
  auto report = Simulate(options);
  ASSERT_OK(report);
  nlohmann::ordered_json json = ReportJson(*report);
  EXPECT_THAT(UnschedulableOf(json, "hog")["reasons"]["n"].get<std::string>(),
              StartsWith("InsufficientCpu"));
  EXPECT_THAT(UnschedulableOf(json, "fat")["reasons"]["n"].get<std::string>(),
              StartsWith("InsufficientNodeMemory"));
}

// The trace files ship with the repository (data/), so a missing one is an
// error naming its path, never a reason to skip.
absl::StatusOr<std::string> ReadTrace(const std::string& name) {
  const std::string path =
      absl::StrCat(DEVICESHARE_TRACES_DIR, "/alibaba-gpu-v2023/", name);
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("no trace file ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

TEST(TraceLoaderTest, RealNodeListHas1213NodesAnd6212Gpus) {
  const absl::StatusOr<std::string> text =
      ReadTrace("openb_node_list_gpu_node.csv");
  ASSERT_OK(text.status());
  auto nodes =
      LoadTraceNodes(*text, "openb_node_list_gpu_node.csv", DeviceConfig());
  ASSERT_OK(nodes);
  EXPECT_THAT(nodes->nodes, SizeIs(1213));
  size_t gpus = 0;
  for (const NodeInventory& node : nodes->nodes) gpus += node.gpus.size();
  EXPECT_EQ(gpus, 6212u);
}

TEST(TraceLoaderTest, RealPodListsReadInOrder) {
  const absl::StatusOr<std::string> text =
      ReadTrace("openb_pod_list_default.csv");
  ASSERT_OK(text.status());
  auto pods = LoadTracePods(*text, "openb_pod_list_default.csv");
  ASSERT_OK(pods);
  EXPECT_THAT(*pods, SizeIs(8152));
  size_t sharing = 0;
  for (size_t i = 0; i < pods->size(); ++i) {
    if (i > 0) {
      EXPECT_LE((*pods)[i - 1].creation_time, (*pods)[i].creation_time);
    }
    const TracePod& pod = (*pods)[i];
    if (pod.num_gpu == 1 && pod.gpu_milli < 1000) ++sharing;
    EXPECT_EQ(pod.gpu_milli % 10, 0) << pod.name;
  }
  EXPECT_EQ(sharing, 3078u);  // the README's figure
  // The multi-GPU file has only five columns.
  const absl::StatusOr<std::string> multi_text =
      ReadTrace("openb_pod_list_multigpu20.csv");
  ASSERT_OK(multi_text.status());
  auto multi = LoadTracePods(*multi_text, "openb_pod_list_multigpu20.csv");
  ASSERT_OK(multi);
  EXPECT_THAT(*multi, SizeIs(8324));
}

}  // namespace
}  // namespace deviceshare::simulate
