// File: bench/fgd_bound/packing_bound.h
//
// An upper bound on the GPU a cluster can hold of a set of pods, whatever
// the order they come in and whatever places them: a linear relaxation of
// the packing, solved with GLPK. FGD's replay reads unallocated GPU at
// 100 % arrived, where the pods that came ask exactly the cluster's GPUs,
// so 100 % minus this bound is the least unallocated % any scheduler, even
// one that knew every pod in advance and could refuse pods, could reach.
//
// The relaxation: nodes of one kind (CPU, memory, GPUs, model) are pooled;
// their GPUs are packed exactly, each GPU a path of shares in thousandths
// (an arc flow, as the configuration LP of bin packing), but CPU and
// memory only in total over the pool, a k-GPU pod takes k GPUs of the pool
// without asking that they share a node, and pod counts may be fractional.
// Each of these only lets more fit, so the bound is never below what a real
// placement holds.
//
// Thread safety: free functions on values; GLPK's problem objects are made
// and freed per call (GLPK keeps per-thread state, so calls from several
// threads are safe).

#ifndef DEVICESHARE_BENCH_FGD_BOUND_PACKING_BOUND_H_
#define DEVICESHARE_BENCH_FGD_BOUND_PACKING_BOUND_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace deviceshare::bench {

// `nodes` nodes alike.
struct NodePool {
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int64_t gpus = 0;
  std::string model;
  int64_t nodes = 0;
};

// `count` pods alike. A share asks one GPU with 0 < gpu_milli < 1000; a
// whole pod asks gpu_count GPUs (gpu_milli 1000); a CPU-only pod asks none.
// `models`: the GPU models it may run on (empty: any).
struct PodGroup {
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int64_t gpu_count = 0;
  int64_t gpu_milli = 0;
  std::vector<std::string> models;
  double count = 0;
};

struct PackingBound {
  int64_t capacity_milli = 0;    // 1000 per GPU of the pools
  double most_placed_milli = 0;  // the bound on GPU milli placed
  double least_unallocated_percent() const {
    return capacity_milli > 0
               ? 100.0 *
                     (static_cast<double>(capacity_milli) - most_placed_milli) /
                     static_cast<double>(capacity_milli)
               : 0.0;
  }
};

// The bound for `pods` on `pools`. InvalidArgument names the group and the
// field for a negative amount, a share outside (0, 1000) or a whole pod
// with no GPU count; Internal if GLPK fails to solve the relaxation.
absl::StatusOr<PackingBound> BoundPackedGpu(absl::Span<const NodePool> pools,
                                            absl::Span<const PodGroup> pods);

}  // namespace deviceshare::bench

#endif  // DEVICESHARE_BENCH_FGD_BOUND_PACKING_BOUND_H_
