// File: src/scheduler/verdict_memory.h (internal)
//
// VerdictMemory: the filter verdicts the Scheduler remembers, so that no
// step evaluates a node twice for nothing:
//   - per pod (by uid): every verdict of the pod's current decision, with
//     the allocation of each node that fits, while that node is unchanged.
//     The reserve step commits a remembered allocation instead of filtering
//     the node again, and a host's ScoreNode after FilterNode is a lookup.
//     At most kMaxPods pods and about kMaxPodVerdicts verdicts in all are
//     remembered (a decision is short-lived; a pod that fits nowhere never
//     reserves, and its verdicts must not pile up).
//   - per request shape (the PodRequest without its identity): code,
//     score, stranded capacity and mode of each node while it is unchanged,
//     so filtering the replicas of a workload over thousands of nodes costs
//     a lookup per unchanged node. At most kMaxShapes shapes.
// A node is "unchanged" while its ClusterState::NodeVersion is; versions
// are never reused, so a stale entry can only miss, never mislead.
//
// Thread safety: none; the Scheduler guards it.
#ifndef DEVICESHARE_SRC_SCHEDULER_VERDICT_MEMORY_H_
#define DEVICESHARE_SRC_SCHEDULER_VERDICT_MEMORY_H_

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "deviceshare/model/node_state.h"
#include "deviceshare/model/pod_request.h"
#include "deviceshare/scheduler/decision.h"

namespace deviceshare::internal {

// Everything of a request that a verdict depends on; identity (uid, name,
// namespace, dialect) is left out, so a workload's replicas share it.
std::string ShapeKey(const PodRequest& request);
// ShapeKey without the pod's CPU and memory: what the GPU steps of a
// verdict depend on (bucket_tally.h).
std::string GpuShapeKey(const PodRequest& request);

class VerdictMemory {
 public:
  static constexpr size_t kMaxPods = 64;
  static constexpr size_t kMaxPodVerdicts = size_t{1} << 16;
  static constexpr size_t kMaxShapes = 256;

  // One node's remembered verdict for a shape: no allocation, no message
  // (thousands of nodes times hundreds of shapes must stay small).
  struct ShapeEntry {
    uint64_t version = 0;
    ReasonCode code = ReasonCode::kFits;
    int score = 0;
    int stranded_percent = 0;
    SharingMode mode;
  };
  struct PodEntry {
    uint64_t version = 0;
    NodeVerdict verdict;  // with its allocation when it fits
  };
  using PodVerdicts = absl::flat_hash_map<const NodeState*, PodEntry>;
  using ShapeVerdicts = absl::flat_hash_map<const NodeState*, ShapeEntry>;

  // The pod's verdicts; empty (and forgotten) when the pod's shape changed
  // since they were remembered. Other pods' verdicts are forgotten first
  // when there are too many.
  PodVerdicts& ForPod(const std::string& uid, const std::string& shape);
  // The remembered verdicts of pod `uid`, or nullptr.
  PodVerdicts* FindPod(absl::string_view uid);
  ShapeVerdicts& ForShape(const std::string& shape);
  void ForgetPod(absl::string_view uid);

 private:
  struct Pod {
    std::string shape;
    PodVerdicts verdicts;
  };
  absl::flat_hash_map<std::string, Pod> pods_;
  absl::flat_hash_map<std::string, ShapeVerdicts> shapes_;
};

}  // namespace deviceshare::internal

#endif  // DEVICESHARE_SRC_SCHEDULER_VERDICT_MEMORY_H_
