// fgd_bound: the least GPU any scheduler could leave unallocated at 100 %
// arrived in FGD's replay (docs/reference/fgd.md §1), per Alibaba trace,
// bounded by packing_bound.h.
//
//   fgd_bound --trace_nodes NODES.csv --trace_pods A.csv,B.csv
//
// At 100 % arrived the pods tried ask exactly the cluster's GPUs: the
// trace's pods, with samples of it appended (or, where the trace asks
// more, a sample of it). The bound is taken over that mix in expectation:
// every pod of the trace counted (cluster GPUs / trace GPUs) times. The
// replay's own streams of seeds 42-51 gave the same bound within 0.05
// point (bench/README.md).

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "packing_bound.h"

ABSL_FLAG(std::string, trace_nodes, "", "Alibaba trace node list (CSV)");
ABSL_FLAG(std::string, trace_pods, "", "pod lists (CSV), comma-separated");

namespace deviceshare::bench {
namespace {

// A CSV file's rows as column name -> field; a column a file lacks reads
// as "".
class CsvRows {
 public:
  static absl::StatusOr<CsvRows> Read(const std::string& path) {
    std::ifstream file(path);
    if (!file) return absl::NotFoundError(absl::StrCat("cannot read ", path));
    CsvRows rows;
    rows.path_ = path;
    std::string line;
    if (std::getline(file, line)) {
      rows.header_ =
          absl::StrSplit(absl::StripTrailingAsciiWhitespace(line), ',');
    }
    while (std::getline(file, line)) {
      if (absl::StripAsciiWhitespace(line).empty()) continue;
      rows.rows_.push_back(
          absl::StrSplit(absl::StripTrailingAsciiWhitespace(line), ','));
    }
    return rows;
  }

  size_t size() const { return rows_.size(); }
  std::string Text(size_t row, absl::string_view column) const {
    for (size_t i = 0; i < header_.size(); ++i) {
      if (header_[i] == column && i < rows_[row].size()) return rows_[row][i];
    }
    return "";
  }
  absl::StatusOr<int64_t> Number(size_t row, absl::string_view column) const {
    int64_t value = 0;
    const std::string text = Text(row, column);
    if (!absl::SimpleAtoi(text, &value)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path_, " row ", row + 2, ": ", column, " \"", text,
                       "\" is not a whole number"));
    }
    return value;
  }

 private:
  std::string path_;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

absl::StatusOr<std::vector<NodePool>> ReadPools(const std::string& path) {
  absl::StatusOr<CsvRows> rows = CsvRows::Read(path);
  if (!rows.ok()) return rows.status();
  std::map<std::tuple<int64_t, int64_t, int64_t, std::string>, int64_t> count;
  for (size_t i = 0; i < rows->size(); ++i) {
    absl::StatusOr<int64_t> cpu = rows->Number(i, "cpu_milli");
    absl::StatusOr<int64_t> memory = rows->Number(i, "memory_mib");
    absl::StatusOr<int64_t> gpus = rows->Number(i, "gpu");
    for (const auto* field : {&cpu, &memory, &gpus}) {
      if (!field->ok()) return field->status();
    }
    ++count[{*cpu, *memory, *gpus, rows->Text(i, "model")}];
  }
  std::vector<NodePool> pools;
  for (const auto& [key, nodes] : count) {
    const auto& [cpu, memory, gpus, model] = key;
    pools.push_back(NodePool{cpu, memory, gpus, model, nodes});
  }
  return pools;
}

int64_t PoolGpuMilli(const std::vector<NodePool>& pools) {
  int64_t milli = 0;
  for (const NodePool& pool : pools) milli += pool.gpus * pool.nodes * 1000;
  return milli;
}

// The trace's pods grouped alike, scaled to ask `cluster_milli`.
absl::StatusOr<std::vector<PodGroup>> ReadArrivals(const std::string& path,
                                                   int64_t cluster_milli) {
  absl::StatusOr<CsvRows> rows = CsvRows::Read(path);
  if (!rows.ok()) return rows.status();
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, std::string>, double>
      count;
  int64_t asked = 0;
  for (size_t i = 0; i < rows->size(); ++i) {
    absl::StatusOr<int64_t> cpu = rows->Number(i, "cpu_milli");
    absl::StatusOr<int64_t> memory = rows->Number(i, "memory_mib");
    absl::StatusOr<int64_t> gpus = rows->Number(i, "num_gpu");
    absl::StatusOr<int64_t> milli = rows->Number(i, "gpu_milli");
    for (const auto* field : {&cpu, &memory, &gpus, &milli}) {
      if (!field->ok()) return field->status();
    }
    // As the replay reads the trace: num_gpu > 1 asks whole GPUs.
    const int64_t per_gpu = *gpus == 1 ? *milli : (*gpus > 1 ? 1000 : 0);
    asked += *gpus == 1 ? *milli : *gpus * 1000;
    ++count[{*cpu, *memory, *gpus, per_gpu, rows->Text(i, "gpu_spec")}];
  }
  if (asked <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": no pod asks a GPU"));
  }
  const double scale =
      static_cast<double>(cluster_milli) / static_cast<double>(asked);
  std::vector<PodGroup> groups;
  for (const auto& [key, pods] : count) {
    const auto& [cpu, memory, gpus, milli, spec] = key;
    std::vector<std::string> models;
    if (!spec.empty()) models = absl::StrSplit(spec, '|');
    groups.push_back(PodGroup{cpu, memory, gpus, milli, models, pods * scale});
  }
  return groups;
}

std::string TraceName(absl::string_view path) {
  absl::string_view name = path.substr(path.rfind('/') + 1);
  absl::ConsumePrefix(&name, "openb_pod_list_");
  absl::ConsumeSuffix(&name, ".csv");
  return std::string(name);
}

absl::Status Run() {
  absl::StatusOr<std::vector<NodePool>> pools =
      ReadPools(absl::GetFlag(FLAGS_trace_nodes));
  if (!pools.ok()) return pools.status();
  std::printf(
      "| trace | least unallocated GPU at 100 %% arrived (%%) |\n|---|---|\n");
  for (absl::string_view path :
       absl::StrSplit(absl::GetFlag(FLAGS_trace_pods), ',')) {
    absl::StatusOr<std::vector<PodGroup>> arrivals =
        ReadArrivals(std::string(path), PoolGpuMilli(*pools));
    if (!arrivals.ok()) return arrivals.status();
    absl::StatusOr<PackingBound> bound = BoundPackedGpu(*pools, *arrivals);
    if (!bound.ok()) return bound.status();
    std::printf("| %s | %.2f |\n", TraceName(path).c_str(),
                bound->least_unallocated_percent());
    std::fflush(stdout);
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace deviceshare::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const absl::Status status = deviceshare::bench::Run();
  if (!status.ok()) {
    std::fprintf(stderr, "fgd_bound: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
