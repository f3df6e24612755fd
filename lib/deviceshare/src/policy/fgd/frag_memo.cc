#include "deviceshare/policy/fgd/frag_memo.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "deviceshare/policy/fgd/fgd_policy.h"
#include "deviceshare/policy/fgd/frag_model.h"

namespace deviceshare::fgd {
namespace {

// CPU the inventory does not track never runs short (as policy/fgd).
constexpr int64_t kUntrackedCpuMilli = int64_t{1} << 60;

// Model names to ids and back, per thread; ids start at 1 (0: no GPUs).
class ModelNames {
 public:
  uint32_t IdOf(const std::string& model) {
    if (model.empty()) return 0;
    auto [it, added] = ids_.try_emplace(model, names_.size() + 1);
    if (added) names_.push_back(model);
    return it->second;
  }
  const std::string& NameOf(uint32_t id) const {
    static const std::string* const kNone = new std::string;
    return id == 0 ? *kNone : names_[id - 1];
  }

 private:
  absl::flat_hash_map<std::string, uint32_t> ids_;
  std::vector<std::string> names_;
};

ModelNames& Models() {
  thread_local ModelNames models;
  return models;
}

class FragMemo {
 public:
  double Frag(uint64_t workload_id, absl::Span<const WorkloadShape> workload,
              PackedNode node) {
    if (workload_id != owner_ || entries_.size() > kMostEntries) {
      entries_.clear();
      owner_ = workload_id;
    }
    std::sort(node.milli_left.begin(),
              node.milli_left.begin() + node.gpu_count);
    auto [it, added] = entries_.try_emplace(node, 0.0);
    if (added) it->second = FragMilli(Unpack(node), workload);
    return it->second;
  }

 private:
  static constexpr size_t kMostEntries = size_t{1} << 18;

  static FragNode Unpack(const PackedNode& node) {
    FragNode frag;
    frag.cpu_milli_left = node.cpu_milli_left;
    frag.gpu_milli_left.assign(node.milli_left.begin(),
                               node.milli_left.begin() + node.gpu_count);
    frag.model = Models().NameOf(node.model_id);
    return frag;
  }

  uint64_t owner_ = 0;
  absl::flat_hash_map<PackedNode, double> entries_;
};

}  // namespace

std::optional<PackedNode> Pack(const NodeState& node) {
  if (node.gpu_count() > kMostPackedGpus) return std::nullopt;
  PackedNode packed;
  packed.gpu_count = static_cast<uint32_t>(node.gpu_count());
  packed.cpu_milli_left =
      node.inventory().cpu_milli <= 0
          ? kUntrackedCpuMilli
          : node.inventory().cpu_milli - node.used_cpu_milli();
  for (size_t i = 0; i < node.gpu_count(); ++i) {
    packed.milli_left[i] = static_cast<int16_t>(MilliLeft(node.ledger(i)));
  }
  if (!node.inventory().gpus.empty()) {
    packed.model_id = Models().IdOf(node.inventory().gpus.front().model);
  }
  return packed;
}

PackedNode PackedAfter(const PackedNode& before, const NodeState& node,
                       int64_t cpu_milli, const PodAllocation& placement) {
  PackedNode after = before;
  after.cpu_milli_left -= cpu_milli;
  for (const ContainerAllocation& container : placement.containers) {
    for (const DeviceGrant& grant : container.devices) {
      const std::optional<size_t> at = node.FindGpuIndex(grant.gpu_index);
      if (!at) continue;
      after.milli_left[*at] = static_cast<int16_t>(std::min<int32_t>(
          after.milli_left[*at],
          MilliLeftAfter(node.ledger(*at), grant.cores, grant.memory_mib)));
    }
  }
  return after;
}

PackedNode PackedAfterShare(const PackedNode& before, const NodeState& node,
                            int64_t cpu_milli, size_t position,
                            const PodCharge& extra) {
  PackedNode after = before;
  after.cpu_milli_left -= cpu_milli;
  after.milli_left[position] = static_cast<int16_t>(
      MilliLeftAfter(node.ledger(position), extra.cores, extra.memory_mib));
  return after;
}

double MemoFragMilli(uint64_t workload_id,
                     absl::Span<const WorkloadShape> workload,
                     const PackedNode& node) {
  thread_local FragMemo memo;
  return memo.Frag(workload_id, workload, node);
}

uint64_t NewWorkloadId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

FragPair MeasureShare(uint64_t id, absl::Span<const WorkloadShape> workload,
                      const NodeState& node, const PodRequest& pod,
                      size_t position, const PodCharge& extra) {
  if (std::optional<PackedNode> packed = Pack(node)) {
    return {MemoFragMilli(id, workload, *packed),
            MemoFragMilli(id, workload,
                          PackedAfterShare(*packed, node, pod.cpu_milli,
                                           position, extra))};
  }
  const FragNode before = FragNodeOf(node);
  FragNode after = before;
  after.cpu_milli_left -= pod.cpu_milli;
  after.gpu_milli_left[position] =
      MilliLeftAfter(node.ledger(position), extra.cores, extra.memory_mib);
  return {FragMilli(before, workload), FragMilli(after, workload)};
}

FragPair MeasurePlacement(uint64_t id, absl::Span<const WorkloadShape> workload,
                          const NodeState& node, const PodRequest& pod,
                          const PodAllocation& placement) {
  if (std::optional<PackedNode> packed = Pack(node)) {
    return {
        MemoFragMilli(id, workload, *packed),
        MemoFragMilli(id, workload,
                      PackedAfter(*packed, node, pod.cpu_milli, placement))};
  }
  const FragNode before = FragNodeOf(node);
  return {FragMilli(before, workload),
          FragMilli(FragNodeAfter(before, node, pod, placement), workload)};
}

}  // namespace deviceshare::fgd
