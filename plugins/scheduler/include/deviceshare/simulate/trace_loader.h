// File: simulate/trace_loader.h
//
// Reads the Alibaba GPU trace (cluster-trace-gpu-v2023, the "openb" CSVs in
// data/alibaba-gpu-v2023/) into nodes and pods. Columns are found
// by header name, so the files with fewer columns read the same.
//
// Nodes (`sn,cpu_milli,memory_mib,gpu,model`; `name` is accepted for `sn`):
// each node gets `gpu` GPUs of its model, registered as
// "Alibaba[<model>]" (TraceGpuModelName) with the memory of
// kTraceGpuMemory (undisclosed models: kUndisclosedGpuMemoryMib), a
// generated uuid (input/gpu_uuid.h) and the config's split count and
// scaling (RegisteredGpu). Node CPU and memory are tracked.
//
// Pods (`name,cpu_milli,memory_mib,num_gpu,gpu_milli`, optional `gpu_spec`,
// `creation_time`): namespace "default", one container "main", ordered by
// creation_time (stable; file order without the column). The GPU request:
//   num_gpu == 1 and 0 < gpu_milli < 1000: one GPU with
//       cores = ceil(gpu_milli / 10) percent and
//       memory = ceil(gpu_milli / 10) percent of the card
//     (the trace's proportional share; exact, since every gpu_milli in the
//     published files is a multiple of 10);
//   num_gpu >= 1 otherwise: num_gpu whole GPUs (cores 100, all memory);
//   num_gpu == 0: no GPU, only CPU and memory.
// gpu_spec `A|B` becomes use_models {"Alibaba[A]", "Alibaba[B]"}: the
// brackets make the core's substring match exact (V100M16 never matches
// V100M32, A10 would never match an A100).
#ifndef DEVICESHARE_SIMULATE_TRACE_LOADER_H_
#define DEVICESHARE_SIMULATE_TRACE_LOADER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/config/device_config.h"
#include "deviceshare/model/node_inventory.h"
#include "deviceshare/model/pod_request.h"

namespace deviceshare::simulate {

struct TraceGpuMemory {
  const char* model;
  int64_t memory_mib;
  bool disclosed;  // false: the trace does not say; assumed
};

// GPU memory per trace model. P100 16 GiB, T4 15 GiB (as NVML reports a
// 16 GB T4), V100M16 16 GiB, V100M32 32 GiB, A10 24 GiB; the undisclosed
// G1/G2/G3 are assumed 32 GiB cards.
inline constexpr TraceGpuMemory kTraceGpuMemory[] = {
    {"A10", 24576, true},     {"G1", 32768, false},     {"G2", 32768, false},
    {"G3", 32768, false},     {"P100", 16384, true},    {"T4", 15360, true},
    {"V100M16", 16384, true}, {"V100M32", 32768, true},
};
// Memory assumed for a model not in the table.
inline constexpr int64_t kUndisclosedGpuMemoryMib = 32768;

// The memory for `model`. `assumed` (optional) is set when the figure is
// not published: an undisclosed model, or one the table lacks.
int64_t TraceGpuMemoryMib(absl::string_view model, bool* assumed = nullptr);

// "Alibaba[T4]".
std::string TraceGpuModelName(absl::string_view model);

struct TraceNodes {
  std::vector<NodeInventory> nodes;  // in file order
  std::vector<std::string> notes;    // the memory assumed per model
};

absl::StatusOr<TraceNodes> LoadTraceNodes(absl::string_view text,
                                          absl::string_view file,
                                          const DeviceConfig& config);

// One pod row, as read.
struct TracePod {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int64_t num_gpu = 0;
  int64_t gpu_milli = 0;
  std::vector<std::string> gpu_spec;  // models, deduplicated, in order
  int64_t creation_time = 0;
};

// The request a trace pod makes (see above).
PodRequest TracePodRequest(const TracePod& pod);
// The GPU it asks for, in thousandths of a GPU: num_gpu x 1000, or
// gpu_milli for a share.
int64_t TracePodGpuMilli(const TracePod& pod);

// In creation_time order (stable).
absl::StatusOr<std::vector<TracePod>> LoadTracePods(absl::string_view text,
                                                    absl::string_view file);

// Notes that state the mapping above, for the report.
std::vector<std::string> TraceMappingNotes();

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_TRACE_LOADER_H_
