// File: model/workload_shape.h
//
// WorkloadShape: one kind of pod of a workload and its share of the pods,
// as fragmentation-aware placement weighs what is left on a node against
// the pods likely to come (policy/fgd). GPU capacity is in milli-GPU
// (1000 = one whole GPU).
//
// Thread safety: a plain value.
#ifndef DEVICESHARE_MODEL_WORKLOAD_SHAPE_H_
#define DEVICESHARE_MODEL_WORKLOAD_SHAPE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace deviceshare {

struct WorkloadShape {
  int64_t cpu_milli = 0;
  int32_t gpu_milli = 0;  // per GPU; 0 with gpu_count 0 for CPU-only pods
  int32_t gpu_count = 0;
  // The GPU models the pod accepts (as use-gputype names them: a
  // case-insensitive substring of the model); empty: any. An empty
  // name in the list is ignored.
  std::vector<std::string> models;
  double share = 0;  // of the pods, 0..1
  // Whether the measure counts how many pods of this shape the node's CPU
  // holds, so that GPU beyond their reach is capacity the shape cannot use
  // (policy/fgd/frag_model.h). FGD's own measure checks one pod only.
  bool counted_by_cpu = false;

  friend bool operator==(const WorkloadShape&, const WorkloadShape&) = default;
};

}  // namespace deviceshare

#endif  // DEVICESHARE_MODEL_WORKLOAD_SHAPE_H_
