#include "deviceshare/policy/fragaware/fragaware_policy.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "deviceshare/policy/fgd/fgd_policy.h"
#include "deviceshare/policy/fgd/frag_model.h"
#include "deviceshare/policy/fragaware/workload_estimate.h"
#include "deviceshare/policy/scoring.h"

namespace deviceshare {
namespace {

// FragMilli per thread, keyed by the snapshot's id and the node as the
// measure sees it (model, CPU left, GPU milli left sorted): a node's GPUs
// in equal states, and nodes in equal states, cost one evaluation. Exact:
// keys are whole values.
class FragMemo {
 public:
  double FragMilli(const WorkloadSnapshot& workload, fgd::FragNode node) {
    if (workload.id != owner_ || entries_.size() > kMostEntries) {
      entries_.clear();
      owner_ = workload.id;
    }
    std::sort(node.gpu_milli_left.begin(), node.gpu_milli_left.end());
    std::string key = node.model;
    key.append(reinterpret_cast<const char*>(&node.cpu_milli_left),
               sizeof(node.cpu_milli_left));
    key.append(reinterpret_cast<const char*>(node.gpu_milli_left.data()),
               node.gpu_milli_left.size() * sizeof(int32_t));
    auto [it, added] = entries_.try_emplace(std::move(key), 0.0);
    if (added) it->second = fgd::FragMilli(node, workload.shapes);
    return it->second;
  }

 private:
  static constexpr size_t kMostEntries = size_t{1} << 18;
  uint64_t owner_ = 0;
  absl::flat_hash_map<std::string, double> entries_;
};

double MemoFragMilli(const WorkloadSnapshot& workload,
                     const fgd::FragNode& node) {
  thread_local FragMemo memo;
  return memo.FragMilli(workload, node);
}

class FragawarePolicyImpl final : public PlacementPolicy {
 public:
  FragawarePolicyImpl(std::vector<WorkloadShape> fixed, int64_t nodes_to_score)
      : nodes_to_score_(nodes_to_score) {
    if (!fixed.empty()) {
      fixed_ = MakeWorkloadSnapshot(std::move(fixed));
    }
  }

  absl::string_view name() const override { return kFragawarePolicyName; }

  void ObservePod(const PodRequest& pod) const override {
    if (fixed_ == nullptr) learned_.Observe(pod);
  }

  // Used only where no node is in view (DRA devices): as binpack.
  int GpuScore(const DeviceLedger& ledger,
               const PodCharge& extra) const override {
    return GpuUtilisationAfter(ledger, extra);
  }

  bool ranks_on_node() const override { return true; }
  GpuRank RankGpuOnNode(const PodRequest& pod, const NodeState& node,
                        size_t position, const PodCharge& extra,
                        int64_t offer_score) const override {
    const DeviceLedger& ledger = node.ledger(position);
    const int64_t index = node.inventory().gpus[position].index;
    if (extra.exclusive || extra.cores >= ledger.core_capacity()) {
      return GpuRank{0, -index, 0};  // whole GPUs: lowest index first
    }
    const std::shared_ptr<const WorkloadSnapshot> workload = Workload();
    const fgd::FragNode before = fgd::FragNodeOf(node);
    fgd::FragNode after = before;
    after.cpu_milli_left -= pod.cpu_milli;
    after.gpu_milli_left[position] =
        fgd::MilliLeftAfter(ledger, extra.cores, extra.memory_mib);
    return GpuRank{fgd::FgdScore(MemoFragMilli(*workload, before),
                                 MemoFragMilli(*workload, after)),
                   -index, 0};
  }

  int NodeScore(const NodeState& node,
                const PodAllocation& placement) const override {
    return NodeScoreFor(PodRequest(), node, placement);
  }
  int NodeScoreFor(const PodRequest& pod, const NodeState& node,
                   const PodAllocation& placement) const override {
    const std::shared_ptr<const WorkloadSnapshot> workload = Workload();
    const fgd::FragNode before = fgd::FragNodeOf(node);
    return fgd::FgdScore(
        MemoFragMilli(*workload, before),
        MemoFragMilli(*workload,
                      fgd::FragNodeAfter(before, node, pod, placement)));
  }
  // The score follows fragmentation, not utilisation: no bound.
  int ScoreBound(const UtilisationRange& after) const override { return 100; }
  int64_t feasible_nodes_to_score() const override { return nodes_to_score_; }

 private:
  std::shared_ptr<const WorkloadSnapshot> Workload() const {
    return fixed_ != nullptr ? fixed_ : learned_.Snapshot();
  }

  const int64_t nodes_to_score_;
  std::shared_ptr<const WorkloadSnapshot> fixed_;  // null: learned
  mutable WorkloadEstimate learned_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<PlacementPolicy>> NewFragawarePolicy(
    const Config& config) {
  return std::make_unique<FragawarePolicyImpl>(
      config.scheduler.typical_workload, config.scheduler.nodes_to_score);
}

}  // namespace deviceshare
