#include "deviceshare/policy/fragaware/mig_slices.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <string>
#include <tuple>

#include "absl/container/inlined_vector.h"
#include "absl/strings/match.h"
#include "deviceshare/policy/fgd/fgd_policy.h"
#include "deviceshare/policy/fgd/frag_model.h"

namespace deviceshare::fragaware {
namespace {

using fgd::kMilliPerGpu;

// CPU the inventory does not track never runs short (as policy/fgd).
constexpr int64_t kUntrackedCpuMilli = int64_t{1} << 60;

uint32_t MaskOf(const MigPlacement& placement) {
  if (placement.start < 0 || placement.size <= 0 ||
      placement.start + placement.size > 32) {
    return 0;
  }
  const uint32_t run =
      placement.size >= 32 ? ~0u : ((1u << placement.size) - 1u);
  return run << placement.start;
}

// Slices of `gpu` some registered placement covers.
uint32_t AllSlices(const Gpu& gpu) {
  uint32_t all = 0;
  for (const RegisteredMigProfile& profile : gpu.mig_profiles) {
    for (const MigPlacement& placement : profile.placements) {
      all |= MaskOf(placement);
    }
  }
  return all;
}

// "1g.10gb+me", "2g.48gb-me": a variant the backend hands out only when
// named.
bool IsVariant(const std::string& name) {
  return !absl::EndsWithIgnoreCase(name, "gb");
}

// Whether an instance of unknown size holds the GPU (MigSlot::holds_gpu).
bool HeldByUnplacedInstance(const DeviceLedger& ledger) {
  if (ledger.mig_instances() == 0) return false;
  bool held = false;
  ledger.ForEachShare([&held](const ContainerShare& share) {
    held = held || share.mig.holds_gpu;
  });
  return held;
}

// One GPU as the measure sees it.
struct GpuView {
  const Gpu* gpu = nullptr;
  bool sliced = false;
  int32_t milli_left = 0;  // measured by milli
  // Measured by slices: all slices, the free ones, slots left, closed.
  uint32_t all = 0;
  uint32_t free = 0;
  int32_t slots_left = 0;
  bool closed = false;

  double MilliPerSlice() const {
    const int count = std::popcount(all);
    return count > 0 ? static_cast<double>(kMilliPerGpu) / count : 0.0;
  }
  double Idle() const {
    if (!sliced) return milli_left;
    return closed ? 0.0 : std::popcount(free) * MilliPerSlice();
  }
};

struct NodeView {
  int64_t cpu_left = 0;
  const std::string* model = nullptr;
  absl::InlinedVector<GpuView, 8> gpus;

  double Idle() const {
    double idle = 0;
    for (const GpuView& gpu : gpus) idle += gpu.Idle();
    return idle;
  }
};

NodeView ViewOf(const NodeState& node) {
  static const std::string* const kNoModel = new std::string;
  NodeView view;
  view.cpu_left = node.inventory().cpu_milli <= 0
                      ? kUntrackedCpuMilli
                      : node.inventory().cpu_milli - node.used_cpu_milli();
  view.model = node.inventory().gpus.empty()
                   ? kNoModel
                   : &node.inventory().gpus.front().model;
  for (size_t i = 0; i < node.gpu_count(); ++i) {
    const DeviceLedger& ledger = node.ledger(i);
    GpuView gpu;
    gpu.gpu = &node.inventory().gpus[i];
    gpu.sliced = SlicedGpu(*gpu.gpu);
    if (!gpu.sliced) {
      gpu.milli_left = fgd::MilliLeft(ledger);
    } else {
      gpu.all = AllSlices(*gpu.gpu);
      gpu.free = gpu.all & ~ledger.mig_mask();
      gpu.slots_left = ledger.free_slots();
      gpu.closed = gpu.slots_left <= 0 || ledger.held_exclusively() ||
                   ledger.used_slots() > ledger.mig_instances() ||
                   HeldByUnplacedInstance(ledger);
    }
    view.gpus.push_back(gpu);
  }
  return view;
}

// `gpu` (sliced) once instances covering `mask` and `slots` slots more are
// taken; `other` (not an instance, or one of unknown size) closes it.
void TakeSlices(GpuView& gpu, uint32_t mask, int32_t slots, bool other) {
  gpu.free &= ~mask;
  gpu.slots_left -= slots;
  gpu.closed = gpu.closed || other || gpu.slots_left <= 0;
}

void ApplyShare(GpuView& gpu, const DeviceLedger& ledger,
                const PodCharge& extra) {
  if (!gpu.sliced) {
    gpu.milli_left = fgd::MilliLeftAfter(ledger, extra.cores, extra.memory_mib);
    return;
  }
  TakeSlices(gpu, extra.mig_mask, extra.slots,
             extra.holds_gpu || extra.slots > extra.mig_instances);
}

void ApplyPlacement(NodeView& view, const NodeState& node,
                    const PodRequest& pod, const PodAllocation& placement) {
  view.cpu_left -= pod.cpu_milli;
  for (const ContainerAllocation& container : placement.containers) {
    for (const DeviceGrant& grant : container.devices) {
      const std::optional<size_t> at = node.FindGpuIndex(grant.gpu_index);
      if (!at) continue;
      GpuView& gpu = view.gpus[*at];
      if (!gpu.sliced) {
        gpu.milli_left = std::min<int32_t>(
            gpu.milli_left, fgd::MilliLeftAfter(node.ledger(*at), grant.cores,
                                                grant.memory_mib));
        continue;
      }
      const uint32_t mask = grant.mig.mask();
      TakeSlices(gpu, mask, 1, mask == 0);
    }
  }
}

// What a shape finds on one GPU: whether it fits there, and the idle
// capacity it cannot use.
struct ShapeOnGpu {
  bool fits = false;
  double unusable = 0;
};

ShapeOnGpu OnGpu(const GpuView& gpu, const WorkloadShape& shape,
                 const std::string& mig_profile) {
  if (!gpu.sliced) {
    if (!mig_profile.empty() || gpu.milli_left < shape.gpu_milli) {
      return {false, static_cast<double>(gpu.milli_left)};
    }
    return {true, 0.0};
  }
  if (gpu.closed) return {false, 0.0};
  const int profile = ProfileForShape(*gpu.gpu, shape.gpu_milli, mig_profile);
  uint32_t usable = 0;
  if (profile >= 0) {
    for (const MigPlacement& placement :
         gpu.gpu->mig_profiles[profile].placements) {
      const uint32_t mask = MaskOf(placement);
      if (mask != 0 && (mask & ~gpu.free) == 0) usable |= mask;
    }
  }
  return {usable != 0, std::popcount(gpu.free & ~usable) * gpu.MilliPerSlice()};
}

// What `shape` cannot use of the node (weight 1), and whether the node
// fits it; `idle` is view.Idle().
ShapeOnGpu OnNode(const NodeView& view, double idle, const WorkloadShape& shape,
                  const std::string& mig_profile) {
  if (shape.gpu_milli == 0 || !fgd::ModelAccepts(shape.models, *view.model)) {
    return {false, idle};
  }
  int32_t fitting = 0;
  double unusable = 0;
  for (const GpuView& gpu : view.gpus) {
    const ShapeOnGpu on = OnGpu(gpu, shape, mig_profile);
    fitting += on.fits ? 1 : 0;
    unusable += on.unusable;
  }
  if (fitting < std::max(shape.gpu_count, 1) ||
      view.cpu_left < shape.cpu_milli) {
    return {false, idle};
  }
  return {true, unusable};
}

const std::string& ProfileAt(const SlicedWorkload& workload, size_t i) {
  static const std::string* const kNone = new std::string;
  return i < workload.mig_profiles.size() ? workload.mig_profiles[i] : *kNone;
}

double FragOf(const SlicedWorkload& workload, const NodeView& view) {
  const double idle = view.Idle();
  double frag = 0;
  for (size_t i = 0; i < workload.shapes.size(); ++i) {
    const WorkloadShape& shape = workload.shapes[i];
    frag += shape.share *
            OnNode(view, idle, shape, ProfileAt(workload, i)).unusable;
  }
  return frag;
}

}  // namespace

bool SlicedGpu(const Gpu& gpu) { return !gpu.mig_profiles.empty(); }

bool HasSlicedGpu(const NodeState& node) {
  for (const Gpu& gpu : node.inventory().gpus) {
    if (SlicedGpu(gpu)) return true;
  }
  return false;
}

int ProfileForShape(const Gpu& gpu, int32_t gpu_milli,
                    const std::string& mig_profile) {
  const auto& profiles = gpu.mig_profiles;
  if (!mig_profile.empty()) {
    for (size_t p = 0; p < profiles.size(); ++p) {
      if (absl::EqualsIgnoreCase(profiles[p].name, mig_profile)) {
        return static_cast<int>(p);
      }
    }
    return -1;
  }
  const bool whole = gpu_milli >= kMilliPerGpu;
  // ceil(memory x milli / 1000): the memory a share of the GPU asks.
  const int64_t need =
      (gpu.memory_mib * int64_t{gpu_milli} + kMilliPerGpu - 1) / kMilliPerGpu;
  int best = -1;
  for (size_t p = 0; p < profiles.size(); ++p) {
    const RegisteredMigProfile& profile = profiles[p];
    if (IsVariant(profile.name)) continue;
    if (!whole && profile.memory_mib < need) continue;
    if (best < 0) {
      best = static_cast<int>(p);
      continue;
    }
    const RegisteredMigProfile& held = profiles[best];
    const bool better =
        whole ? std::tie(profile.memory_mib, profile.slice_count) >
                    std::tie(held.memory_mib, held.slice_count)
              : std::tie(profile.memory_mib, profile.slice_count) <
                    std::tie(held.memory_mib, held.slice_count);
    if (better) best = static_cast<int>(p);
  }
  return best;
}

double SlicedFragMilli(const SlicedWorkload& workload, const NodeState& node) {
  return FragOf(workload, ViewOf(node));
}

GpuRank RankGpuBySlices(const SlicedWorkload& workload, const PodRequest& pod,
                        const NodeState& node, size_t position,
                        const PodCharge& extra, int64_t offer_score) {
  const DeviceLedger& ledger = node.ledger(position);
  const int64_t index = node.inventory().gpus[position].index;
  const NodeView before = ViewOf(node);
  const bool sliced = before.gpus[position].sliced;
  if (!sliced && (extra.exclusive || extra.cores >= ledger.core_capacity())) {
    return GpuRank{0, -index, 0};  // whole GPUs: lowest index first
  }
  NodeView after = before;
  after.cpu_left -= pod.cpu_milli;
  ApplyShare(after.gpus[position], ledger, extra);
  const int score =
      fgd::FgdScore(FragOf(workload, before), FragOf(workload, after));
  return sliced ? GpuRank{score, offer_score, -index}
                : GpuRank{score, -index, 0};
}

int NodeScoreBySlices(const SlicedWorkload& workload, const PodRequest& pod,
                      const NodeState& node, const PodAllocation& placement) {
  const NodeView before = ViewOf(node);
  NodeView after = before;
  ApplyPlacement(after, node, pod, placement);
  return fgd::FgdScore(FragOf(workload, before), FragOf(workload, after));
}

int NodeScoreBoundBySlices(const SlicedWorkload& workload,
                           const PodRequest& pod, const NodeState& node) {
  constexpr int kNoBound = 100;
  if (pod.cpu_milli < 0) return kNoBound;
  int64_t gpus = 0;
  for (const ContainerRequest& container : pod.containers) {
    if (container.gpu_count < 0) return kNoBound;
    gpus += container.gpu_count;
  }
  const NodeView view = ViewOf(node);
  const double idle = view.Idle();
  const double drop = std::min(static_cast<double>(gpus) * kMilliPerGpu, idle);
  double gain = 0;
  for (size_t i = 0; i < workload.shapes.size(); ++i) {
    const WorkloadShape& shape = workload.shapes[i];
    if (!(shape.share >= 0)) return kNoBound;
    const ShapeOnGpu on = OnNode(view, idle, shape, ProfileAt(workload, i));
    gain += shape.share * (on.fits ? std::min(drop, on.unusable) : drop);
  }
  // The sums round in double; a milli of slack covers that many times over.
  constexpr double kSlackMilli = 1e-3;
  return fgd::FgdScore(gain + kSlackMilli, 0);
}

}  // namespace deviceshare::fragaware
