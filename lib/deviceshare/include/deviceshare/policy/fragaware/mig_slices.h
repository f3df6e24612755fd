// File: policy/fragaware/mig_slices.h
//
// fragaware's measure on nodes with MIG GPUs. A MIG GPU is not shared by
// milli-GPU but cut into instances at fixed placements (model/gpu.h
// RegisteredMigProfile / MigPlacement: memory slices [start, start +
// size)), so its fragmentation is not its free milli but its free memory
// slices that no instance a pod of the workload would take can use, given
// the slices already taken (DeviceLedger::mig_mask()).
//
// A GPU is measured by slices when it registered MIG profiles (only a GPU
// in MIG mode does; one without them, which uses its model's built-in
// table, is measured by milli as in policy/fgd). For such a GPU:
//   - its slices are the union of the registered placements, each worth
//     1000 / their count milli (an A100's 8 slices: 125 each); its idle
//     capacity is its free slices, none when it is closed (no tenant slot
//     left, held whole by an unplaced instance, or holding non-MIG shares);
//   - the instance a typical shape takes there is the profile its pods
//     name (WorkloadSnapshot::mig_profiles, case-insensitive), else the one
//     picked for its milli from the registered catalogue by memory alone,
//     as HAMi and the MIG backend pick: the smallest memory that holds
//     milli/1000 of the GPU's memory (the largest profile for a whole GPU),
//     variants ("+me") excluded; none: the shape cannot use the GPU;
//   - the shape fits the GPU when some placement of that profile is wholly
//     free; the slices it cannot use are the free slices outside every such
//     placement (stranded).
// A shape naming a MIG profile cannot use a GPU measured by milli. The rest
// is FGD's measure (policy/fgd/frag_model.h) over the node's GPUs, each
// contributing milli or slices: per shape, share x (the node's idle
// capacity if the shape does not fit the node, its CPU, its model, or its
// GPU count, else what the shape cannot use), summed; the score is
// 100 x sigmoid((F_before - F_after) / 1000). On a node without such GPUs
// these functions give exactly policy/fgd's numbers; fragaware calls them
// only for nodes with one (HasSlicedGpu), measured directly (no memo).
//
// The bound (NodeScoreBoundBySlices) is fgd's argument, which still holds:
// a placement never frees a slice or a placement, so a shape the node does
// not fit fits no better after (the measure falls at most by the idle
// capacity taken), and one it fits strands at most what it stranded less
// what was taken; every GPU's idle capacity is at most 1000 milli, and a
// pod touches at most one GPU per GPU its containers ask.
//
// Thread safety: pure functions.
#ifndef DEVICESHARE_POLICY_FRAGAWARE_MIG_SLICES_H_
#define DEVICESHARE_POLICY_FRAGAWARE_MIG_SLICES_H_

#include <cstdint>
#include <string>

#include "absl/types/span.h"
#include "deviceshare/model/device_ledger.h"
#include "deviceshare/model/gpu.h"
#include "deviceshare/model/node_state.h"
#include "deviceshare/model/pod_allocation.h"
#include "deviceshare/model/pod_request.h"
#include "deviceshare/model/workload_shape.h"
#include "deviceshare/policy/placement_policy.h"

namespace deviceshare::fragaware {

// A workload as this measure reads it: the shapes and, per shape, the MIG
// profile its pods name ("" none; an empty span: none for every shape).
struct SlicedWorkload {
  absl::Span<const WorkloadShape> shapes;
  absl::Span<const std::string> mig_profiles;
};

// Whether `gpu` is measured by memory slices (it registered MIG profiles).
bool SlicedGpu(const Gpu& gpu);
// Whether any GPU of `node` is.
bool HasSlicedGpu(const NodeState& node);

// The registered profile of `gpu` a shape of `gpu_milli` per GPU naming
// `mig_profile` ("" none) takes, as an index in gpu.mig_profiles; -1 for
// none.
int ProfileForShape(const Gpu& gpu, int32_t gpu_milli,
                    const std::string& mig_profile);

// The measure of `node` as it is (F, in milli-GPU).
double SlicedFragMilli(const SlicedWorkload& workload, const NodeState& node);

// The rank of the GPU at `position` for a share of `pod` charging it
// `extra` (this pod's shares there included): {score, offer_score, -index}
// on a GPU measured by slices (the backend's preference breaks a tie),
// fgd's {score, -index, 0} otherwise (whole GPUs lowest index first).
GpuRank RankGpuBySlices(const SlicedWorkload& workload, const PodRequest& pod,
                        const NodeState& node, size_t position,
                        const PodCharge& extra, int64_t offer_score);

// The score of `node` once `pod` and `placement` land on it.
int NodeScoreBySlices(const SlicedWorkload& workload, const PodRequest& pod,
                      const NodeState& node, const PodAllocation& placement);

// An upper bound of NodeScoreBySlices over every placement of `pod` on
// `node`; 100 (no bound) for a negative CPU or GPU count or share.
int NodeScoreBoundBySlices(const SlicedWorkload& workload,
                           const PodRequest& pod, const NodeState& node);

}  // namespace deviceshare::fragaware

#endif  // DEVICESHARE_POLICY_FRAGAWARE_MIG_SLICES_H_
