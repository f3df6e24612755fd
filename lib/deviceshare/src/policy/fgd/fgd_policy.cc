#include "deviceshare/policy/fgd/fgd_policy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "deviceshare/policy/fgd/frag_memo.h"
#include "deviceshare/policy/scoring.h"

namespace deviceshare {
namespace fgd {
namespace {

// CPU the inventory does not track never runs short.
constexpr int64_t kUntrackedCpuMilli = std::numeric_limits<int64_t>::max() / 4;

int64_t CpuLeft(const NodeState& node) {
  if (node.inventory().cpu_milli <= 0) return kUntrackedCpuMilli;
  return node.inventory().cpu_milli - node.used_cpu_milli();
}

// round(free * 1000 / capacity), halves away from zero, as std::llround
// of the double quotient gives it (the scores were fixed with that): for
// capacity < 2^31 no quotient lies within a double's rounding error of a
// half, so integer arithmetic gives the same number without a division in
// double and a library call, which the scoring of every GPU of every node
// paid. Other values take the double path.
int64_t RoundedMilli(int64_t free, int64_t capacity) {
  constexpr int64_t kExactBelow = int64_t{1} << 31;
  if (free < 0 || free >= kExactBelow || capacity >= kExactBelow) {
    return std::llround(static_cast<double>(free) * kMilliPerGpu / capacity);
  }
  return (2 * free * kMilliPerGpu + capacity) / (2 * capacity);
}

}  // namespace

int32_t MilliLeft(int64_t free_cores, int64_t core_capacity,
                  int64_t free_memory_mib, int64_t memory_capacity_mib) {
  if (core_capacity <= 0 || memory_capacity_mib <= 0) return 0;
  const int64_t by_cores = free_cores * kMilliPerGpu / core_capacity;
  const int64_t by_memory = RoundedMilli(free_memory_mib, memory_capacity_mib);
  return static_cast<int32_t>(
      std::clamp<int64_t>(std::min(by_cores, by_memory), 0, kMilliPerGpu));
}

int32_t MilliLeft(const DeviceLedger& ledger) {
  if (ledger.free_slots() <= 0 || ledger.held_exclusively()) return 0;
  return MilliLeft(ledger.free_cores(), ledger.core_capacity(),
                   ledger.free_memory_mib(), ledger.memory_capacity_mib());
}

FragNode FragNodeOf(const NodeState& node) {
  FragNode frag;
  frag.cpu_milli_left = CpuLeft(node);
  frag.gpu_milli_left.reserve(node.gpu_count());
  for (size_t i = 0; i < node.gpu_count(); ++i) {
    frag.gpu_milli_left.push_back(MilliLeft(node.ledger(i)));
  }
  if (!node.inventory().gpus.empty()) {
    frag.model = node.inventory().gpus.front().model;
  }
  return frag;
}

int32_t MilliLeftAfter(const DeviceLedger& ledger, int64_t cores,
                       int64_t memory_mib) {
  if (cores >= ledger.core_capacity()) return 0;
  return std::min(MilliLeft(ledger),
                  MilliLeft(ledger.free_cores() - cores, ledger.core_capacity(),
                            ledger.free_memory_mib() - memory_mib,
                            ledger.memory_capacity_mib()));
}

FragNode FragNodeAfter(const FragNode& before, const NodeState& node,
                       const PodRequest& pod, const PodAllocation& placement) {
  FragNode frag = before;
  frag.cpu_milli_left -= pod.cpu_milli;
  for (const ContainerAllocation& container : placement.containers) {
    for (const DeviceGrant& grant : container.devices) {
      const std::optional<size_t> at = node.FindGpuIndex(grant.gpu_index);
      if (!at) continue;
      frag.gpu_milli_left[*at] = std::min(
          frag.gpu_milli_left[*at],
          MilliLeftAfter(node.ledger(*at), grant.cores, grant.memory_mib));
    }
  }
  return frag;
}

int FgdScore(double frag_before, double frag_after) {
  const double x = (frag_before - frag_after) / 1000.0;
  return static_cast<int>(100.0 / (1.0 + std::exp(-x)));
}

GpuRank RankGpuByFrag(uint64_t workload_id,
                      absl::Span<const WorkloadShape> workload,
                      const PodRequest& pod, const NodeState& node,
                      size_t position, const PodCharge& extra) {
  const DeviceLedger& ledger = node.ledger(position);
  const int64_t index = node.inventory().gpus[position].index;
  if (extra.exclusive || extra.cores >= ledger.core_capacity()) {
    return GpuRank{0, -index, 0};  // whole GPUs: lowest index first
  }
  const FragPair frag =
      MeasureShare(workload_id, workload, node, pod, position, extra);
  return GpuRank{FgdScore(frag.before, frag.after), -index, 0};
}

int NodeScoreByFrag(uint64_t workload_id,
                    absl::Span<const WorkloadShape> workload,
                    const PodRequest& pod, const NodeState& node,
                    const PodAllocation& placement) {
  const FragPair frag =
      MeasurePlacement(workload_id, workload, node, pod, placement);
  return FgdScore(frag.before, frag.after);
}

std::optional<int64_t> MostMilliTaken(const PodRequest& pod,
                                      const NodeState& node,
                                      GrantCharges charges) {
  int64_t most = 0;
  for (const ContainerRequest& container : pod.containers) {
    if (container.gpu_count < 0) return std::nullopt;
    if (container.gpu_count == 0) continue;
    const bool as_asked =
        charges == GrantCharges::kAsAsked && !container.exclusive();
    int32_t taken = 0;  // by one grant of the container, on its worst GPU
    for (size_t i = 0; i < node.gpu_count(); ++i) {
      const DeviceLedger& ledger = node.ledger(i);
      // The same MilliLeftAfter that PackedAfter measures the grant with.
      const int32_t after =
          as_asked
              ? MilliLeftAfter(ledger, container.cores,
                               container.MemoryOn(ledger.memory_capacity_mib()))
              : 0;
      taken = std::max(taken, MilliLeft(ledger) - after);
    }
    most += int64_t{container.gpu_count} * taken;
  }
  return most;
}

int NodeScoreBoundByFrag(uint64_t workload_id,
                         absl::Span<const WorkloadShape> workload,
                         const PodRequest& pod, const NodeState& node,
                         GrantCharges charges) {
  constexpr int kNoBound = 100;
  const std::optional<PackedNode> packed = Pack(node);
  if (!packed || pod.cpu_milli < 0) return kNoBound;
  const std::optional<int64_t> most_drop = MostMilliTaken(pod, node, charges);
  if (!most_drop) return kNoBound;
  const double gain =
      MemoFragGainBound(workload_id, workload, *packed, *most_drop);
  // The scores' sums round in double; a milli of slack covers that many
  // times over and can only loosen the bound.
  constexpr double kSlackMilli = 1e-3;
  return FgdScore(gain + kSlackMilli, 0);
}

}  // namespace fgd

namespace {

class FgdPolicyImpl final : public PlacementPolicy {
 public:
  explicit FgdPolicyImpl(std::vector<WorkloadShape> workload)
      : workload_(std::move(workload)), id_(fgd::NewWorkloadId()) {}

  absl::string_view name() const override { return kFgdPolicyName; }

  // Used only where no node is in view (DRA devices): as binpack.
  int GpuScore(const DeviceLedger& ledger,
               const PodCharge& extra) const override {
    return GpuUtilisationAfter(ledger, extra);
  }

  bool ranks_on_node() const override { return true; }
  GpuRank RankGpuOnNode(const PodRequest& pod, const NodeState& node,
                        size_t position, const PodCharge& extra,
                        int64_t offer_score) const override {
    return fgd::RankGpuByFrag(id_, workload_, pod, node, position, extra);
  }

  int NodeScore(const NodeState& node,
                const PodAllocation& placement) const override {
    return NodeScoreFor(PodRequest(), node, placement);
  }
  int NodeScoreFor(const PodRequest& pod, const NodeState& node,
                   const PodAllocation& placement) const override {
    return fgd::NodeScoreByFrag(id_, workload_, pod, node, placement);
  }
  int ScoreBound(const UtilisationRange& after) const override { return 100; }
  int NodeScoreBoundFor(const PodRequest& pod, const NodeState& node,
                        GrantCharges charges) const override {
    return fgd::NodeScoreBoundByFrag(id_, workload_, pod, node, charges);
  }

 private:
  std::vector<WorkloadShape> workload_;
  uint64_t id_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<PlacementPolicy>> NewFgdPolicy(
    const Config& config) {
  return std::make_unique<FgdPolicyImpl>(config.scheduler.typical_workload);
}

}  // namespace deviceshare
