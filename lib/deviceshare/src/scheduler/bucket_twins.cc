#include "deviceshare/scheduler/bucket_twins.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"

namespace deviceshare {
namespace {

// Entries kept for nodes and buckets that are gone are dropped once the
// maps outgrow the state by this factor.
constexpr size_t kSlack = 4;

}  // namespace

bool Untouched(const NodeState& node) {
  if (node.used_cpu_milli() != 0 || node.used_memory_mib() != 0) return false;
  for (size_t i = 0; i < node.gpu_count(); ++i) {
    if (!node.ledger(i).idle()) return false;
  }
  return true;
}

NodeInventory TwinKeyOf(const NodeState& node) {
  NodeInventory key = node.inventory();
  key.name.clear();
  for (Gpu& gpu : key.gpus) {
    for (GpuPairScore& pair : gpu.pair_scores) {
      const std::optional<size_t> peer = node.FindGpu(pair.peer_uuid);
      pair.peer_uuid =
          peer ? absl::StrCat("#", *peer) : absl::StrCat("?", pair.peer_uuid);
    }
  }
  // After the pair scores, which look peers up by uuid.
  for (Gpu& gpu : key.gpus) gpu.uuid.clear();
  return key;
}

int32_t TwinClassAmong(const NodeState& node,
                       std::vector<NodeInventory>& classes, size_t most) {
  if (!Untouched(node)) return -1;
  NodeInventory key = TwinKeyOf(node);
  auto same = std::find(classes.begin(), classes.end(), key);
  if (same != classes.end()) {
    return static_cast<int32_t>(same - classes.begin());
  }
  if (classes.size() >= most) return -1;
  classes.push_back(std::move(key));
  return static_cast<int32_t>(classes.size() - 1);
}

void BucketTwins::StartOver(const ClusterState& state) {
  state_id_ = state.id();
  ++epoch_;
  known_.clear();
  classes_.clear();
  lists_.clear();
}

int32_t BucketTwins::ClassOf(const ClusterState& state, const NodeState& node) {
  const uint64_t version = state.NodeVersion(node);
  Known& known = known_[&node];
  if (known.version == version && version != 0) return known.twin_class;
  known.version = version;
  known.twin_class = TwinClassAmong(node, classes_, kMostClasses);
  return known.twin_class;
}

std::shared_ptr<const BucketTwins::Visits> BucketTwins::Visit(
    const ClusterState& state, const IndexBucket& bucket) {
  absl::MutexLock lock(&mu_);
  if (state_id_ != state.id()) StartOver(state);
  auto listed = lists_.find(&bucket);
  // Another state starts over above, and a bucket's versions are never
  // reused; the count only makes sure, cheaply, that kept positions never
  // point past the nodes.
  if (listed != lists_.end() && listed->second.version == bucket.version &&
      listed->second.nodes == bucket.nodes.size()) {
    return listed->second.visit;
  }
  const size_t nodes = state.nodes_by_name().size();
  if (known_.size() > kSlack * nodes + 1024) known_.clear();
  if (lists_.size() > kSlack * nodes + 1024) lists_.clear();
  auto visit = std::make_shared<Visits>();
  visit->epoch = epoch_;
  std::vector<int32_t> seen;  // classes met in this bucket
  for (size_t i = 0; i < bucket.nodes.size(); ++i) {
    const int32_t twin_class = ClassOf(state, *bucket.nodes[i].node);
    if (twin_class != kNoTwins) {
      if (std::find(seen.begin(), seen.end(), twin_class) != seen.end()) {
        continue;
      }
      seen.push_back(twin_class);
    }
    visit->positions.push_back(static_cast<uint32_t>(i));
    visit->twin_classes.push_back(twin_class);
  }
  lists_[&bucket] = Listed{bucket.version, bucket.nodes.size(), visit};
  return visit;
}

}  // namespace deviceshare
