#include "deviceshare/policy/fgd/frag_memo.h"

#include <algorithm>
#include <array>
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
    // Nodes come one after another, most of one model: the last name
    // answers without hashing it.
    if (last_id_ != 0 && model == names_[last_id_ - 1]) return last_id_;
    auto [it, added] = ids_.try_emplace(model, names_.size() + 1);
    last_id_ = it->second;
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
  uint32_t last_id_ = 0;
};

ModelNames& Models() {
  thread_local ModelNames models;
  return models;
}

class FragMemo {
 public:
  double Frag(uint64_t workload_id, absl::Span<const WorkloadShape> workload,
              const PackedNode& node) {
    Own(workload_id);
    if (entries_.size() > kMostEntries) {
      entries_.clear();
      recent_ = {};
    }
    // A node's state before a placement is asked once per GPU ranked,
    // between the states after: the two last asked answer it unsorted.
    for (size_t i = 0; i < recent_.size(); ++i) {
      if (recent_[i].valid && recent_[i].node == node) {
        evict_ = 1 - i;
        return recent_[i].frag;
      }
    }
    PackedNode sorted = node;
    std::sort(sorted.milli_left.begin(),
              sorted.milli_left.begin() + sorted.gpu_count);
    auto [it, added] = entries_.try_emplace(sorted, 0.0);
    if (added) it->second = FragMilli(Unpack(sorted), workload);
    recent_[evict_] = Recent{true, node, it->second};
    evict_ = 1 - evict_;
    return it->second;
  }

  double GainBound(uint64_t workload_id,
                   absl::Span<const WorkloadShape> workload,
                   const PackedNode& node, int64_t most_drop) {
    Own(workload_id);
    if (bounds_.size() > kMostEntries) bounds_.clear();
    BoundKey key{node, most_drop};
    std::sort(key.node.milli_left.begin(),
              key.node.milli_left.begin() + key.node.gpu_count);
    auto [it, added] = bounds_.try_emplace(key, 0.0);
    if (added) {
      it->second = FragGainBound(Unpack(key.node), workload, most_drop);
    }
    return it->second;
  }

 private:
  static constexpr size_t kMostEntries = size_t{1} << 18;

  struct BoundKey {
    PackedNode node;  // GPUs sorted
    int64_t most_drop = 0;

    friend bool operator==(const BoundKey&, const BoundKey&) = default;
    template <typename H>
    friend H AbslHashValue(H h, const BoundKey& key) {
      return H::combine(std::move(h), key.node, key.most_drop);
    }
  };

  struct Recent {
    bool valid = false;
    PackedNode node;  // as asked, GPUs unsorted
    double frag = 0;
  };

  // Entries hold for one workload: another starts the memo over.
  void Own(uint64_t workload_id) {
    if (workload_id == owner_) return;
    entries_.clear();
    bounds_.clear();
    recent_ = {};
    owner_ = workload_id;
  }

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
  absl::flat_hash_map<BoundKey, double> bounds_;
  std::array<Recent, 2> recent_{};
  size_t evict_ = 0;  // the slot the next miss fills
};

FragMemo& Memo() {
  thread_local FragMemo memo;
  return memo;
}

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
  return Memo().Frag(workload_id, workload, node);
}

double MemoFragGainBound(uint64_t workload_id,
                         absl::Span<const WorkloadShape> workload,
                         const PackedNode& node, int64_t most_drop) {
  return Memo().GainBound(workload_id, workload, node, most_drop);
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
