#include "deviceshare/simulate/trace_loader.h"

#include <algorithm>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "deviceshare/config/device_registration.h"
#include "deviceshare/input/cluster_loader.h"
#include "deviceshare/input/gpu_uuid.h"
#include "deviceshare/input/input_file.h"
#include "deviceshare/simulate/csv_table.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::simulate {

using input::AtLine;
using input::CheckClusterUnique;
using input::GeneratedGpuUuid;
using input::InFile;

namespace {

absl::Status Negative(const CsvTable& table, size_t row,
                      absl::string_view column, int64_t value) {
  return AtLine(table.file(), table.Line(row),
                absl::InvalidArgumentError(absl::StrFormat(
                    "column %s: %d is negative", column, value)));
}

// Reads a non-negative integer column of `row`.
absl::StatusOr<int64_t> Count(const CsvTable& table, size_t row, size_t column,
                              std::optional<int64_t> empty_value = {}) {
  DS_ASSIGN_OR_RETURN(int64_t value, table.Int(row, column, empty_value));
  if (value < 0) return Negative(table, row, table.header()[column], value);
  return value;
}

absl::StatusOr<size_t> NameColumn(const CsvTable& table) {
  if (std::optional<size_t> sn = table.Column("sn")) return *sn;
  if (std::optional<size_t> name = table.Column("name")) return *name;
  return table.RequireColumn("sn");
}

}  // namespace

int64_t TraceGpuMemoryMib(absl::string_view model, bool* assumed) {
  for (const TraceGpuMemory& entry : kTraceGpuMemory) {
    if (model == entry.model) {
      if (assumed != nullptr) *assumed = !entry.disclosed;
      return entry.memory_mib;
    }
  }
  if (assumed != nullptr) *assumed = true;
  return kUndisclosedGpuMemoryMib;
}

std::string TraceGpuModelName(absl::string_view model) {
  return absl::StrCat("Alibaba[", model, "]");
}

absl::StatusOr<TraceNodes> LoadTraceNodes(absl::string_view text,
                                          absl::string_view file,
                                          const DeviceConfig& config) {
  DS_ASSIGN_OR_RETURN(CsvTable table, CsvTable::Parse(text, file));
  DS_ASSIGN_OR_RETURN(size_t name_column, NameColumn(table));
  DS_ASSIGN_OR_RETURN(size_t cpu_column, table.RequireColumn("cpu_milli"));
  DS_ASSIGN_OR_RETURN(size_t memory_column, table.RequireColumn("memory_mib"));
  DS_ASSIGN_OR_RETURN(size_t gpu_column, table.RequireColumn("gpu"));
  DS_ASSIGN_OR_RETURN(size_t model_column, table.RequireColumn("model"));
  TraceNodes result;
  result.nodes.reserve(table.row_count());
  std::map<std::string, int64_t> gpus_per_model;
  for (size_t row = 0; row < table.row_count(); ++row) {
    NodeInventory node;
    node.name = std::string(table.Field(row, name_column));
    if (node.name.empty()) {
      return AtLine(file, table.Line(row),
                    absl::InvalidArgumentError(absl::StrFormat(
                        "column %s is empty", table.header()[name_column])));
    }
    DS_ASSIGN_OR_RETURN(node.cpu_milli, Count(table, row, cpu_column));
    DS_ASSIGN_OR_RETURN(node.memory_mib, Count(table, row, memory_column));
    DS_ASSIGN_OR_RETURN(int64_t gpus, Count(table, row, gpu_column));
    const std::string model(table.Field(row, model_column));
    if (gpus > 0 && model.empty()) {
      return AtLine(file, table.Line(row),
                    absl::InvalidArgumentError(
                        "column model is empty on a node with GPUs"));
    }
    for (int64_t i = 0; i < gpus; ++i) {
      Gpu physical;
      physical.index = static_cast<int32_t>(i);
      physical.uuid = GeneratedGpuUuid(node.name, physical.index);
      physical.model = TraceGpuModelName(model);
      physical.memory_mib = TraceGpuMemoryMib(model);
      auto registered = RegisteredGpu(std::move(physical), config);
      if (!registered.ok())
        return AtLine(file, table.Line(row), registered.status());
      node.gpus.push_back(*std::move(registered));
    }
    if (gpus > 0) gpus_per_model[model] += gpus;
    absl::Status valid = ValidateInventory(node);
    if (!valid.ok()) return AtLine(file, table.Line(row), valid);
    result.nodes.push_back(std::move(node));
  }
  absl::Status unique = CheckClusterUnique(result.nodes);
  if (!unique.ok()) return InFile(file, unique);
  std::vector<std::string> parts;
  for (const auto& [model, count] : gpus_per_model) {
    bool assumed = false;
    int64_t memory = TraceGpuMemoryMib(model, &assumed);
    parts.push_back(absl::StrFormat("%s %d MiB x%d%s", model, memory, count,
                                    assumed ? " (assumed)" : ""));
  }
  result.notes.push_back(absl::StrCat(
      "trace GPU memory per model (MiB before deviceMemoryScaling, x GPUs; "
      "the trace gives none: known cards use their size, the undisclosed "
      "G1/G2/G3 and unknown models are assumed 32 GiB cards): ",
      absl::StrJoin(parts, ", ")));
  return result;
}

PodRequest TracePodRequest(const TracePod& pod) {
  PodRequest request;
  request.namespace_name = "default";
  request.name = pod.name;
  request.uid = request.Key();
  request.dialect = Dialect::kHami;
  request.cpu_milli = pod.cpu_milli;
  request.memory_mib = pod.memory_mib;
  ContainerRequest container;
  container.name = "main";
  if (pod.num_gpu == 1 && pod.gpu_milli > 0 && pod.gpu_milli < 1000) {
    const int32_t percent = static_cast<int32_t>((pod.gpu_milli + 9) / 10);
    container.gpu_count = 1;
    container.cores = percent;
    container.memory_percent = percent;
  } else if (pod.num_gpu >= 1) {
    container.gpu_count = static_cast<int32_t>(pod.num_gpu);
    container.cores = 100;
    container.memory_percent = 100;
  }
  request.containers.push_back(std::move(container));
  if (pod.num_gpu >= 1) {
    for (const std::string& model : pod.gpu_spec) {
      request.use_models.push_back(TraceGpuModelName(model));
    }
  }
  return request;
}

int64_t TracePodGpuMilli(const TracePod& pod) {
  if (pod.num_gpu == 1 && pod.gpu_milli > 0 && pod.gpu_milli < 1000) {
    return (pod.gpu_milli + 9) / 10 * 10;
  }
  return pod.num_gpu * 1000;
}

absl::StatusOr<std::vector<TracePod>> LoadTracePods(absl::string_view text,
                                                    absl::string_view file) {
  DS_ASSIGN_OR_RETURN(CsvTable table, CsvTable::Parse(text, file));
  DS_ASSIGN_OR_RETURN(size_t name_column, table.RequireColumn("name"));
  DS_ASSIGN_OR_RETURN(size_t cpu_column, table.RequireColumn("cpu_milli"));
  DS_ASSIGN_OR_RETURN(size_t memory_column, table.RequireColumn("memory_mib"));
  DS_ASSIGN_OR_RETURN(size_t num_gpu_column, table.RequireColumn("num_gpu"));
  DS_ASSIGN_OR_RETURN(size_t milli_column, table.RequireColumn("gpu_milli"));
  const std::optional<size_t> spec_column = table.Column("gpu_spec");
  const std::optional<size_t> time_column = table.Column("creation_time");
  std::vector<TracePod> pods;
  pods.reserve(table.row_count());
  absl::flat_hash_map<std::string, size_t> line_by_name;
  for (size_t row = 0; row < table.row_count(); ++row) {
    TracePod pod;
    pod.name = std::string(table.Field(row, name_column));
    if (pod.name.empty()) {
      return AtLine(file, table.Line(row),
                    absl::InvalidArgumentError("column name is empty"));
    }
    auto [it, inserted] = line_by_name.emplace(pod.name, table.Line(row));
    if (!inserted) {
      return AtLine(
          file, table.Line(row),
          absl::InvalidArgumentError(absl::StrFormat(
              "column name: pod %s is also on line %d", pod.name, it->second)));
    }
    DS_ASSIGN_OR_RETURN(pod.cpu_milli, Count(table, row, cpu_column));
    DS_ASSIGN_OR_RETURN(pod.memory_mib, Count(table, row, memory_column));
    DS_ASSIGN_OR_RETURN(pod.num_gpu, Count(table, row, num_gpu_column));
    DS_ASSIGN_OR_RETURN(pod.gpu_milli, Count(table, row, milli_column, 0));
    if (pod.num_gpu > 1024) {
      return AtLine(file, table.Line(row),
                    absl::InvalidArgumentError(absl::StrFormat(
                        "column num_gpu: %d is more than 1024", pod.num_gpu)));
    }
    if (spec_column) {
      for (absl::string_view model : absl::StrSplit(
               table.Field(row, *spec_column), '|', absl::SkipWhitespace())) {
        model = absl::StripAsciiWhitespace(model);
        if (std::find(pod.gpu_spec.begin(), pod.gpu_spec.end(), model) ==
            pod.gpu_spec.end()) {
          pod.gpu_spec.emplace_back(model);
        }
      }
    }
    if (time_column) {
      DS_ASSIGN_OR_RETURN(pod.creation_time, table.Int(row, *time_column));
    }
    pods.push_back(std::move(pod));
  }
  std::stable_sort(pods.begin(), pods.end(),
                   [](const TracePod& a, const TracePod& b) {
                     return a.creation_time < b.creation_time;
                   });
  return pods;
}

std::vector<std::string> TraceMappingNotes() {
  return {
      "trace pods: num_gpu=1 with 0<gpu_milli<1000 asks one GPU with "
      "cores=ceil(gpu_milli/10)% and memory=ceil(gpu_milli/10)% of the card "
      "(floor to MiB); exact for the published files, where every gpu_milli "
      "is a multiple of 10",
      "trace pods: num_gpu>=1 otherwise asks num_gpu whole GPUs (cores 100, "
      "all memory); num_gpu=0 asks CPU and memory only; node cpu_milli and "
      "memory_mib are enforced",
      "trace GPU models are registered as Alibaba[<model>]; gpu_spec A|B "
      "becomes use-gputype Alibaba[A],Alibaba[B], an exact model match",
  };
}

}  // namespace deviceshare::simulate
