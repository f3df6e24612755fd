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
// A policy that learns from the pods it observes (fragaware without a
// typicalWorkload) changes its scores, and the GPUs it picks, with no node
// changing: a pod's verdicts and a shape's are remembered under the scores
// version of the pod's policies (ScoresVersion) and forgotten, rejections
// too (which GPUs an earlier container took, the policy's choice, can
// decide whether a later one fits), when it moves. It never moves for
// policies that learn nothing (binpack, spread, fgd, fragaware with a
// typicalWorkload). The version is read after the prefilter step, which
// shows the pod to the policies; one that learns meanwhile, in another
// thread's prefilter, moves it past the version read, so what was
// remembered under the old one is forgotten by the next use.
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
#include "deviceshare/policy/policy_set.h"
#include "deviceshare/scheduler/decision.h"
#include "deviceshare/scheduler/pod_cycle.h"

namespace deviceshare::internal {

// Everything of a request that a verdict depends on; identity (uid, name,
// namespace, dialect) is left out, so a workload's replicas share it.
std::string ShapeKey(const PodRequest& request);
// ShapeKey without the pod's CPU and memory: what the GPU steps of a
// verdict depend on (bucket_tally.h).
std::string GpuShapeKey(const PodRequest& request);
// The scores version of the policies that decide `cycle`'s verdicts: the
// sum of their PlacementPolicy::scores_version(); for a GPU policy made
// for the pod alone (a chain, or weights), of every policy of `policies`.
uint64_t ScoresVersion(const PolicySet& policies, const PodCycle& cycle);

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

  // The pod's verdicts; empty (and forgotten) when the pod's shape or the
  // scores version changed since they were remembered. Other pods'
  // verdicts are forgotten first when there are too many.
  PodVerdicts& ForPod(const std::string& uid, const std::string& shape,
                      uint64_t scores_version);
  // The remembered verdicts of pod `uid` under `scores_version`, or
  // nullptr.
  PodVerdicts* FindPod(absl::string_view uid, uint64_t scores_version);
  // The shape's verdicts; empty (and forgotten) when the scores version
  // changed since they were remembered.
  ShapeVerdicts& ForShape(const std::string& shape, uint64_t scores_version);
  void ForgetPod(absl::string_view uid);

 private:
  struct Pod {
    std::string shape;
    uint64_t scores_version = 0;
    PodVerdicts verdicts;
  };
  struct Shape {
    uint64_t scores_version = 0;
    ShapeVerdicts verdicts;
  };
  absl::flat_hash_map<std::string, Pod> pods_;
  absl::flat_hash_map<std::string, Shape> shapes_;
};

}  // namespace deviceshare::internal

#endif  // DEVICESHARE_SRC_SCHEDULER_VERDICT_MEMORY_H_
