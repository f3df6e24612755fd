// File: policy/fragaware/workload_estimate.h
//
// WorkloadEstimate: the typical workload learned online from the pods a
// scheduler sees, for fragmentation-aware placement where no trace is at
// hand (an extender in a live cluster). Each pod counts once (by uid; a pod
// retried by the extender is not counted again) as its WorkloadShape
// (ShapeOfPod) and the MIG profile it names (MigProfileOfPod): pods that
// name different profiles are different shapes, so the MIG slices they can
// use are measured per profile (mig_slices.h). The estimate is every shape
// seen with its share of the pods (FGD's typical pods at 100 % popularity,
// policy/fgd/typical_pods.h, in the same order: most pods first, then the
// larger shape; rare shapes such as model-pinned or 8-GPU pods count too),
// passed through the owner's `weigh`, rebuilt when the count has grown by a
// sixteenth since the last build (and for each of the first 16 pods), so
// that it costs O(log pods) rebuilds and a decision reads a snapshot. The
// snapshot carries the fill plan of the shapes' shares (fill_plan.h, MIG
// profiles left out), re-made when the count has grown by a quarter.
//
// Thread safety: thread-safe; Snapshot() returns an immutable value.
#ifndef DEVICESHARE_POLICY_FRAGAWARE_WORKLOAD_ESTIMATE_H_
#define DEVICESHARE_POLICY_FRAGAWARE_WORKLOAD_ESTIMATE_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "deviceshare/model/pod_request.h"
#include "deviceshare/model/workload_shape.h"
#include "deviceshare/policy/fragaware/fill_plan.h"

namespace deviceshare {

// ShapeOfPod's milli for a share named in MiB only: some of a GPU, how
// much unknown.
inline constexpr int32_t kMemoryOnlyShareMilli = 10;

// The shape of `pod` as the fragmentation measure sees it: its CPU, its
// GPU count (over its app containers), the milli-GPU it takes of each GPU
// (the larger of its SM and memory percent x 10; 1000 for a whole or
// exclusive GPU or one with no share named; kMemoryOnlyShareMilli when it
// names memory only in MiB, which no percent of an unknown GPU describes) and
// the models it accepts. A pod without GPUs is CPU-only (count and milli 0).
WorkloadShape ShapeOfPod(const PodRequest& pod);

// ShapeOfPod's gpu_milli for a pod asking a share of one GPU (under 1000
// milli), without building the shape; 0 for any other pod.
int32_t SingleShareMilli(const PodRequest& pod);

// The MIG GPU-instance profile `pod` names (its first app container that
// names one, as `nvidia.com/mig-<profile>` does), "" for none. A pod naming
// a profile is served by MIG instances of that profile only.
std::string MigProfileOfPod(const PodRequest& pod);

// A learned workload and the number that tells it from other snapshots
// (ids are never reused, so a memo keyed by id cannot mistake one).
struct WorkloadSnapshot {
  uint64_t id = 0;
  std::vector<WorkloadShape> shapes;  // shares sum to 1; empty: none seen
  // Per shape, in the same order: the MIG profile its pods name, "" for
  // none (a configured workload names none).
  std::vector<std::string> mig_profiles;
  // The fillings the shapes' single shares make, planned from their share
  // of the pods before the owner weighs them (fill_plan.h); never null,
  // shared by the snapshots built until the plan is re-made.
  std::shared_ptr<const FillPlan> fill_plan = std::make_shared<FillPlan>();
};

// A snapshot of `shapes` (their shares of the pods) weighed by `weigh`
// (null: as they are), with a fresh id (a fixed workload), naming no MIG
// profile.
using WeighShapes = std::vector<WorkloadShape> (*)(std::vector<WorkloadShape>);
std::shared_ptr<const WorkloadSnapshot> MakeWorkloadSnapshot(
    std::vector<WorkloadShape> shapes, WeighShapes weigh = nullptr);

class WorkloadEstimate {
 public:
  // Turns the shapes and their shares of the pods into the weights the
  // owner measures with, keeping their order (mig_profiles follow it); the
  // identity by default.
  using Weigh = WeighShapes;

  explicit WorkloadEstimate(Weigh weigh = nullptr);

  // Counts `pod` unless its uid (or, without one, its namespace/name) was
  // counted already.
  void Observe(const PodRequest& pod);
  std::shared_ptr<const WorkloadSnapshot> Snapshot() const;
  // The id of what Snapshot() returns now, read without the lock, so that
  // a caller holding that snapshot can keep using it.
  uint64_t snapshot_id() const {
    return snapshot_id_.load(std::memory_order_acquire);
  }
  int64_t pods_counted() const;

 private:
  // A shape's identity: CPU, GPU milli, count, models "A|B", MIG profile.
  using Key = std::tuple<int64_t, int32_t, int32_t, std::string, std::string>;

  std::vector<WorkloadShape> Weighed(std::vector<WorkloadShape> shapes) const;
  void RebuildLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Weigh weigh_;
  mutable absl::Mutex mu_;
  absl::flat_hash_set<std::string> seen_ ABSL_GUARDED_BY(mu_);
  std::map<Key, std::pair<WorkloadShape, int64_t>> counts_ ABSL_GUARDED_BY(mu_);
  int64_t total_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t next_rebuild_ ABSL_GUARDED_BY(mu_) = 1;
  std::shared_ptr<const FillPlan> plan_ ABSL_GUARDED_BY(mu_) =
      std::make_shared<FillPlan>();
  // Per share size (single shares, no MIG profile): the least CPU and host
  // memory a pod of that size asked.
  std::map<int32_t, FillPlan::Needs> share_needs_ ABSL_GUARDED_BY(mu_);
  int64_t next_plan_ ABSL_GUARDED_BY(mu_) = 1;
  std::shared_ptr<const WorkloadSnapshot> snapshot_ ABSL_GUARDED_BY(mu_);
  std::atomic<uint64_t> snapshot_id_;  // snapshot_->id, set under mu_
};

}  // namespace deviceshare

#endif  // DEVICESHARE_POLICY_FRAGAWARE_WORKLOAD_ESTIMATE_H_
