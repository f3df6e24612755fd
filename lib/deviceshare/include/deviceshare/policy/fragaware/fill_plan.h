// File: policy/fragaware/fill_plan.h
//
// FillPlan: how a mix of GPU shares fills whole GPUs, so that fragaware can
// send a share to a GPU where it completes a filling the mix can make
// (810 + 160, 470 + 470, 650 + 320, 550 + 230 + 220, ...) instead of one
// whose rest no likely pod fits. A one-step measure such as FGD's sees one
// placement at a time and cannot pair sizes this way: on FGD's replay with
// the nodes taken away (bench/fgd_bound/gpu_level_online.py, `fillplan`),
// preferring a planned GPU left 8-9 % less GPU unallocated than the best
// one-step rule, as little as following an oracle's optimal plan.
//
// The plan packs a thousand GPUs' worth of the mix (each size in
// proportion to its share of the pods) by minimum bin slack (each GPU the
// largest share left and the subset of the rest that fills it most), which
// on the Alibaba traces' mixes steers as well as the packing LP's
// fillings, and keeps every filling it made. A share of `share_milli` on a
// GPU already holding `used_milli` is planned when some filling holds that
// share and some of the filling's other shares add up to `used_milli`: the
// GPU can still become that filling.
// Only pods asking one share of one GPU (under 1000 milli) take part;
// whole GPUs, multi-GPU pods, CPU-only pods and MIG profiles do not. A
// filling needs its shares on one node: PartnerFits tells whether a node
// keeps the CPU and memory for a share that could still follow, so that a
// GPU is not opened where its partner cannot come (on FGD's default trace
// such GPUs, on nodes out of CPU or memory, held 22,000 idle milli).
//
// Thread safety: immutable once built.
#ifndef DEVICESHARE_POLICY_FRAGAWARE_FILL_PLAN_H_
#define DEVICESHARE_POLICY_FRAGAWARE_FILL_PLAN_H_

#include <bitset>
#include <cstdint>
#include <map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "deviceshare/model/node_state.h"
#include "deviceshare/model/workload_shape.h"

namespace deviceshare {

class FillPlan {
 public:
  static constexpr int32_t kGpuMilli = 1000;
  // A GPU's shares, largest first, and how many of the plan's GPUs hold
  // exactly them.
  using Fillings = std::map<std::vector<int32_t>, int64_t>;

  // Plans nothing: no share is planned.
  FillPlan() = default;

  // The least CPU and memory a pod of one share size was seen to need.
  struct Needs {
    int64_t cpu_milli = 0;
    int64_t memory_mib = 0;
  };

  // The plan of the shapes' single shares, each weighing its `share` of
  // the pods (shares need not sum to 1; models are ignored). No such
  // shape: an empty plan. A size's partner needs are `needs_by_size`'s,
  // else the least CPU its shapes name and no memory.
  static FillPlan Of(absl::Span<const WorkloadShape> shapes,
                     const std::map<int32_t, Needs>& needs_by_size = {});

  bool empty() const { return levels_.empty(); }
  // Whether the plan placed any share of `share_milli`.
  bool Plans(int32_t share_milli) const {
    return levels_.contains(share_milli);
  }
  // Whether a share of `share_milli` fits a filling of the plan on a GPU
  // that holds `used_milli` already (both in 0..1000). False for a size
  // the plan never placed.
  bool Planned(int32_t used_milli, int32_t share_milli) const;
  // Whether a GPU holding `used_milli` is complete (no planned share
  // follows on it) or a planned share may still come to it on a node with
  // `room` left: a pod of its size needing no more was seen (learned
  // sizes) or named (a fixed workload names no memory).
  bool PartnerFits(int32_t used_milli, const HostRoom& room) const;
  const Fillings& fillings() const { return fillings_; }

 private:
  using Levels = std::bitset<kGpuMilli + 1>;

  FillPlan(Fillings fillings, const std::map<int32_t, Needs>& needs_by_size);

  Fillings fillings_;
  // Per share size, the milli a GPU may hold before that share is added.
  absl::flat_hash_map<int32_t, Levels> levels_;
  // Per milli a GPU holds, the planned share sizes that may follow it,
  // each with the least CPU and memory its pods need; none: complete.
  std::vector<std::vector<Needs>> partners_;
};

}  // namespace deviceshare

#endif  // DEVICESHARE_POLICY_FRAGAWARE_FILL_PLAN_H_
