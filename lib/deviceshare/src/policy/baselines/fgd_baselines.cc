#include "deviceshare/policy/baselines/fgd_baselines.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <vector>

#include "deviceshare/policy/fgd/fgd_policy.h"
#include "deviceshare/policy/fgd/frag_memo.h"

namespace deviceshare {
namespace {

// FGD's MaxSpecCpu and MaxSpecGpu (open-gpu-share utils/const.go).
constexpr double kMaxSpecCpuMilli = 128000;
constexpr double kMaxSpecGpuMilli = 8000;

// What a placement takes from a node, as FGD's scores read a pod.
struct PodTake {
  int64_t cpu_milli = 0;
  int64_t gpu_milli_total = 0;
  int32_t gpus = 0;           // GPUs it takes a share of
  int32_t milli_per_gpu = 0;  // the most it takes of one
};

PodTake TakeOf(const fgd::FragNode& before, const fgd::FragNode& after,
               int64_t cpu_milli) {
  PodTake take;
  take.cpu_milli = cpu_milli;
  for (size_t i = 0; i < before.gpu_milli_left.size(); ++i) {
    const int32_t taken = before.gpu_milli_left[i] - after.gpu_milli_left[i];
    if (taken <= 0) continue;
    ++take.gpus;
    take.gpu_milli_total += taken;
    take.milli_per_gpu = std::max(take.milli_per_gpu, taken);
  }
  return take;
}

// The tightest GPU that fits: the least room after the share, then the
// lower index (RankGpu's default tie-break).
int TightestFitScore(const DeviceLedger& ledger, const PodCharge& extra) {
  const int32_t after =
      fgd::MilliLeftAfter(ledger, extra.cores, extra.memory_mib);
  return (fgd::kMilliPerGpu - after) / 10;
}

// Every step is monotone in the GPU left, so the score of the most a pod
// can take bounds the score of anything it takes.
int BestfitScoreOf(bool cpu_tracked, int64_t cpu_left_before,
                   int64_t idle_before, const PodTake& take) {
  const double cpu_left =
      cpu_tracked ? static_cast<double>(cpu_left_before - take.cpu_milli) : 0.0;
  const double gpu_left =
      static_cast<double>(idle_before - take.gpu_milli_total);
  const double waste =
      0.5 * cpu_left / kMaxSpecCpuMilli + 0.5 * gpu_left / kMaxSpecGpuMilli;
  return std::clamp(static_cast<int>((1.0 - waste) * 100.0), 0, 100);
}

int BestfitScore(const NodeState& node, const fgd::FragNode& before,
                 const PodTake& take) {
  return BestfitScoreOf(node.inventory().cpu_milli > 0, before.cpu_milli_left,
                        fgd::IdleMilli(before), take);
}

// The best bestfit score `pod` can get on `node`: each GPU its containers
// ask taken whole (a GPU gives at most what it has left).
int BestfitBound(const PodRequest& pod, const NodeState& node) {
  const std::optional<fgd::PackedNode> packed = fgd::Pack(node);
  if (!packed) return 100;
  int64_t idle = 0;
  for (uint32_t i = 0; i < packed->gpu_count; ++i) {
    idle += packed->milli_left[i];
  }
  PodTake most;
  most.cpu_milli = pod.cpu_milli;
  for (const ContainerRequest& container : pod.containers) {
    if (container.gpu_count < 0) return 100;
    most.gpu_milli_total += int64_t{container.gpu_count} * fgd::kMilliPerGpu;
  }
  most.gpu_milli_total = std::min(most.gpu_milli_total, idle);
  return BestfitScoreOf(node.inventory().cpu_milli > 0, packed->cpu_milli_left,
                        idle, most);
}

int PackingScore(const fgd::FragNode& before, const PodTake& take) {
  if (take.gpus == 0) return 0;
  const std::vector<int32_t>& left = before.gpu_milli_left;
  const int free_gpus =
      static_cast<int>(std::count(left.begin(), left.end(), fgd::kMilliPerGpu));
  if (free_gpus == static_cast<int>(left.size())) {
    return std::max(100 / 3 - free_gpus, free_gpus);
  }
  std::vector<size_t> order(left.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return left[a] < left[b]; });
  int want = take.gpus;
  int free_taken = 0;
  int64_t percent_left_of_taken = 0;
  for (size_t i : order) {
    if (want == 0) break;
    if (left[i] < take.milli_per_gpu) continue;
    --want;
    if (left[i] == fgd::kMilliPerGpu) ++free_taken;
    percent_left_of_taken += left[i] * 100 / fgd::kMilliPerGpu;
  }
  if (want > 0) return 0;  // no longer fits: not chosen
  if (free_taken > 0) return std::max(100 / 2 - free_taken, 100 / 3);
  return static_cast<int>(
      std::max<int64_t>(100 - percent_left_of_taken / 10, 100 / 2));
}

class FgdBaselinePolicy : public PlacementPolicy {
 public:
  int GpuScore(const DeviceLedger& ledger,
               const PodCharge& extra) const override {
    return TightestFitScore(ledger, extra);
  }
  int NodeScore(const NodeState& node,
                const PodAllocation& placement) const override {
    return NodeScoreFor(PodRequest(), node, placement);
  }
  int NodeScoreFor(const PodRequest& pod, const NodeState& node,
                   const PodAllocation& placement) const override {
    const fgd::FragNode before = fgd::FragNodeOf(node);
    const fgd::FragNode after =
        fgd::FragNodeAfter(before, node, pod, placement);
    return Score(node, before, TakeOf(before, after, pod.cpu_milli));
  }
  int ScoreBound(const UtilisationRange& after) const override { return 100; }

 private:
  virtual int Score(const NodeState& node, const fgd::FragNode& before,
                    const PodTake& take) const = 0;
};

class BestfitPolicyImpl final : public FgdBaselinePolicy {
 public:
  absl::string_view name() const override { return kBestfitPolicyName; }

 private:
  int Score(const NodeState& node, const fgd::FragNode& before,
            const PodTake& take) const override {
    return BestfitScore(node, before, take);
  }
  int NodeScoreBoundFor(const PodRequest& pod, const NodeState& node,
                        GrantCharges charges) const override {
    return BestfitBound(pod, node);
  }
};

class PackingPolicyImpl final : public FgdBaselinePolicy {
 public:
  absl::string_view name() const override { return kPackingPolicyName; }

 private:
  int Score(const NodeState& node, const fgd::FragNode& before,
            const PodTake& take) const override {
    return PackingScore(before, take);
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<PlacementPolicy>> NewBestfitPolicy(
    const Config& config) {
  return std::make_unique<BestfitPolicyImpl>();
}

absl::StatusOr<std::unique_ptr<PlacementPolicy>> NewPackingPolicy(
    const Config& config) {
  return std::make_unique<PackingPolicyImpl>();
}

}  // namespace deviceshare
