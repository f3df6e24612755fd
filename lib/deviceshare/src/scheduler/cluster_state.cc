#include "deviceshare/scheduler/cluster_state.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "deviceshare/policy/scoring.h"
#include "deviceshare/status_macros.h"

namespace deviceshare {
namespace {

// The backend modes one allocation uses (usually one).
std::vector<SharingMode> ModesOf(const PodAllocation& allocation) {
  std::vector<SharingMode> modes;
  for (const ContainerAllocation& container : allocation.containers) {
    for (const DeviceGrant& grant : container.devices) {
      if (std::find(modes.begin(), modes.end(), grant.mode) == modes.end()) {
        modes.push_back(grant.mode);
      }
    }
  }
  return modes;
}

// Random version-4 UUIDs from a generator of the state's own; Filter may
// ask from many threads at once.
std::function<std::string()> RandomUuids() {
  struct Source {
    absl::Mutex mu;
    absl::BitGen bits ABSL_GUARDED_BY(mu);
  };
  auto source = std::make_shared<Source>();
  return [source] {
    uint64_t high = 0;
    uint64_t low = 0;
    {
      absl::MutexLock lock(&source->mu);
      high = absl::Uniform<uint64_t>(source->bits);
      low = absl::Uniform<uint64_t>(source->bits);
    }
    high = (high & ~uint64_t{0xF000}) | 0x4000;                // version 4
    low = (low & ~(uint64_t{3} << 62)) | (uint64_t{2} << 62);  // variant
    return absl::StrFormat("%08x-%04x-%04x-%04x-%012x", high >> 32,
                           (high >> 16) & 0xFFFF, high & 0xFFFF, low >> 48,
                           low & 0xFFFFFFFFFFFF);
  };
}

// States may be made on several threads (one scheduler each).
uint64_t NextStateId() {
  static std::atomic<uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

}  // namespace

std::vector<std::string> ClaimKeysOf(const PodRequest& request) {
  std::vector<std::string> keys;
  for (const PodClaim& claim : request.claims) {
    if (claim.claim_name.empty()) continue;
    keys.push_back(dra::ClaimKey(request.namespace_name, claim.claim_name));
  }
  return keys;
}

ClusterState::ClusterState(const BackendSet* backends,
                           std::function<std::string()> new_share_id,
                           size_t most_nodes_per_bucket)
    : backends_(backends),
      most_nodes_per_bucket_(std::max<size_t>(2, most_nodes_per_bucket)),
      id_(NextStateId()) {
  dra::DraClusterOptions options;
  options.new_share_id = new_share_id ? std::move(new_share_id) : RandomUuids();
  dra_ = *dra::DraCluster::Create(std::move(options));
}

ClusterState::~ClusterState() = default;

absl::Status ClusterState::Charge(const PodRecord& record, NodeState& node) {
  // Grants read back from annotations carry no mode of their own (an mps
  // share reads as hami-core; MIG ids are marked): a share takes the mode
  // of the GPU it sits on. Copied only when a mode differs: a placement
  // the scheduler made already has them right.
  // A grant on a GPU the node does not have (a stale record) is skipped and
  // the rest charged, as HAMi skips it (scheduler_test.go
  // Test_getNodesUsage_StalePodDeviceAllocation). A pod none of whose
  // grants the node has is not charged here at all: it is displaced.
  std::optional<PodAllocation> adopted;
  bool any_found = false;
  bool any_stale = false;
  const auto& containers = record.allocation.containers;
  for (size_t c = 0; c < containers.size(); ++c) {
    for (size_t d = 0; d < containers[c].devices.size(); ++d) {
      const DeviceGrant& grant = containers[c].devices[d];
      if (grant.has_partition()) continue;
      std::optional<size_t> position = node.FindGpu(grant.uuid);
      if (!position) {
        any_stale = true;
        continue;
      }
      any_found = true;
      const SharingMode gpu_mode = node.inventory().gpus[*position].mode;
      if (gpu_mode == grant.mode) continue;
      if (!adopted) adopted = record.allocation;
      adopted->containers[c].devices[d].mode = gpu_mode;
    }
  }
  if (any_stale && any_found) {
    if (!adopted) adopted = record.allocation;
    for (ContainerAllocation& container : adopted->containers) {
      std::erase_if(container.devices, [&](const DeviceGrant& grant) {
        return !grant.has_partition() && !node.FindGpu(grant.uuid);
      });
    }
  }
  const PodAllocation& allocation = adopted ? *adopted : record.allocation;
  std::vector<SharingMode> modes = ModesOf(allocation);
  if (modes.size() > 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("pod %s: one pod's allocation mixes sharing modes",
                        allocation.pod_key));
  }
  if (!modes.empty()) {
    const SharingBackend* backend = backends_->ForMode(modes.front());
    if (backend == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrFormat("pod %s: sharing mode %s is not enabled",
                          allocation.pod_key, SharingModeName(modes.front())));
    }
    DS_RETURN_IF_ERROR(backend->Commit(record.request, allocation, node));
  }
  node.AddHostUsage(record.request.cpu_milli, record.request.memory_mib);
  return absl::OkStatus();
}

void ClusterState::Discharge(const PodRecord& record, NodeState& node) {
  // Every backend: Charge may have adopted a GPU's mode for a grant.
  for (const auto& backend : backends_->all()) {
    backend->Release(record.allocation.pod_uid, node);
  }
  node.SubtractHostUsage(record.request.cpu_milli, record.request.memory_mib);
}

namespace {

std::vector<IndexedNode>::iterator FindByName(std::vector<IndexedNode>& bucket,
                                              absl::string_view name) {
  return std::lower_bound(bucket.begin(), bucket.end(), name,
                          [](const IndexedNode& entry, absl::string_view key) {
                            return entry.node->name() < key;
                          });
}

int BitWidth(int64_t value) {
  int width = 0;
  for (; value > 0; value >>= 1) ++width;
  return width;
}

}  // namespace

IndexedNode IndexEntryOf(const NodeState& node, const BackendSet& backends) {
  IndexedNode entry{&node, node.headroom(), HostRoom::Of(node)};
  entry.gpu_count = static_cast<int32_t>(node.gpu_count());
  const SharingBackend* backend = node.uniform_mode().empty()
                                      ? nullptr
                                      : backends.ForMode(node.uniform_mode());
  if (backend != nullptr) {
    entry.blocked = backend->BlockedCode(node);
    if (entry.blocked != ReasonCode::kFits) entry.blocked_by = backend;
  }
  return entry;
}

void IndexBucket::Summarise() {
  max_headroom = GpuHeadroom{};
  max_host = HostRoom{std::numeric_limits<int64_t>::min(),
                      std::numeric_limits<int64_t>::min()};
  for (const IndexedNode& entry : nodes) Include(entry);
}

void IndexBucket::Include(const IndexedNode& entry) {
  max_headroom.Widen(entry.headroom);
  max_host.cpu_milli = std::max(max_host.cpu_milli, entry.host.cpu_milli);
  max_host.memory_mib = std::max(max_host.memory_mib, entry.host.memory_mib);
}

BucketKey BucketKey::Of(int utilisation, const GpuHeadroom& headroom) {
  return BucketKey{utilisation, BitWidth(headroom.memory_mib),
                   headroom.cores / 10};
}

std::map<BucketKey, IndexBucket>::iterator ClusterState::BucketFor(
    ShapeGroup& group, BucketKey key, const std::string& name) {
  key.first_name = name;
  auto at = group.buckets.upper_bound(key);
  if (at != group.buckets.begin() && std::prev(at)->first.SameClass(key)) {
    return std::prev(at);
  }
  key.first_name.clear();
  return group.buckets.try_emplace(at, std::move(key));
}

void ClusterState::SplitIfLarge(
    ShapeGroup& group, std::map<BucketKey, IndexBucket>::iterator bucket) {
  std::vector<IndexedNode>& nodes = bucket->second.nodes;
  if (nodes.size() <= most_nodes_per_bucket_) return;
  const size_t half = nodes.size() / 2;
  BucketKey upper_key = bucket->first;
  upper_key.first_name = nodes[half].node->name();
  IndexBucket& upper =
      group.buckets.try_emplace(std::next(bucket), std::move(upper_key))
          ->second;
  upper.nodes.assign(nodes.begin() + static_cast<std::ptrdiff_t>(half),
                     nodes.end());
  nodes.resize(half);
  for (IndexBucket* half_bucket : {&bucket->second, &upper}) {
    half_bucket->Summarise();
    half_bucket->version = ++last_version_;
  }
  const auto upper_at = std::next(bucket);
  for (const IndexedNode& entry : upper_at->second.nodes) {
    index_position_[entry.node].second = upper_at;
  }
}

void ClusterState::Reindex(const NodeState& node) {
  Unindex(node);
  IndexedNode entry = IndexEntryOf(node, *backends_);
  entry.version = ++last_version_;
  versions_[&node] = entry.version;
  NodeShape shape = node.shape();
  ShapeGroup& group = shape_groups_[shape];
  group.shape = shape;
  auto at = BucketFor(
      group, BucketKey::Of(NodeUtilisationPercent(node), entry.headroom),
      node.name());
  IndexBucket& bucket = at->second;
  bucket.nodes.insert(FindByName(bucket.nodes, node.name()), entry);
  bucket.Include(entry);
  bucket.version = ++last_version_;
  index_position_[&node] = {&group, at};
  SplitIfLarge(group, at);
}

void ClusterState::Touch(const NodeState& node) {
  const uint64_t version = ++last_version_;
  versions_[&node] = version;
  auto at = index_position_.find(&node);
  if (at == index_position_.end()) return;
  IndexBucket& bucket = at->second.second->second;
  bucket.version = ++last_version_;
  auto entry = FindByName(bucket.nodes, node.name());
  if (entry != bucket.nodes.end() && entry->node == &node) {
    entry->version = version;
  }
}

void ClusterState::Unindex(const NodeState& node) {
  auto at = index_position_.find(&node);
  if (at == index_position_.end()) return;
  auto& buckets = at->second.first->buckets;
  const auto bucket = at->second.second;
  IndexBucket& indexed = bucket->second;
  auto entry = FindByName(indexed.nodes, node.name());
  if (entry != indexed.nodes.end() && entry->node == &node) {
    // Only a node that held a maximum can lower it.
    const bool held_max =
        entry->headroom.HoldsAMaximumOf(indexed.max_headroom) ||
        entry->host.cpu_milli == indexed.max_host.cpu_milli ||
        entry->host.memory_mib == indexed.max_host.memory_mib;
    indexed.nodes.erase(entry);
    if (held_max) indexed.Summarise();
  }
  indexed.version = ++last_version_;
  if (indexed.nodes.empty()) buckets.erase(bucket);
  index_position_.erase(at);
  versions_.erase(&node);
}

std::vector<std::string> ClusterState::Replay(NodeState& node) {
  std::vector<std::string> displaced;
  auto it = pods_by_node_.find(node.name());
  if (it == pods_by_node_.end()) return displaced;
  // Sorted, so that which pods are displaced does not depend on hashing.
  std::vector<std::string> uids(it->second.begin(), it->second.end());
  std::sort(uids.begin(), uids.end());
  for (const std::string& uid : uids) {
    PodRecord& record = pods_.at(uid);
    record.on_ledger = Charge(record, node).ok();
    if (!record.on_ledger) displaced.push_back(record.allocation.pod_key);
  }
  return displaced;
}

absl::StatusOr<std::vector<std::string>> ClusterState::UpsertNode(
    NodeInventory inventory) {
  DS_RETURN_IF_ERROR(ValidateInventory(inventory));
  for (const Gpu& gpu : inventory.gpus) {
    if (!backends_->Knows(gpu.mode)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "node %s gpu %s: mode \"%s\" is not a sharing mode any backend "
          "serves (registered: %s)",
          inventory.name, gpu.uuid, gpu.mode.name(), backends_->KnownNames()));
    }
  }
  std::string name = inventory.name;
  dra_only_nodes_.erase(name);
  auto node = std::make_unique<NodeState>(std::move(inventory));
  std::vector<std::string> displaced = Replay(*node);
  auto at = std::lower_bound(nodes_by_name_.begin(), nodes_by_name_.end(), name,
                             [](const NodeState* n, const std::string& key) {
                               return n->name() < key;
                             });
  if (at != nodes_by_name_.end() && (*at)->name() == name) {
    Unindex(**at);
    CountGpuModes(**at, -1);
    *at = node.get();
  } else {
    nodes_by_name_.insert(at, node.get());
  }
  CountGpuModes(*node, +1);
  Reindex(*node);
  node_index_[name] = node.get();
  nodes_[name] = std::move(node);
  return displaced;
}

void ClusterState::CountGpuModes(const NodeState& node, int64_t delta) {
  for (const Gpu& gpu : node.inventory().gpus) {
    auto it = gpus_by_mode_.try_emplace(gpu.mode, 0).first;
    it->second += delta;
    if (it->second == 0) gpus_by_mode_.erase(it);
  }
}

void ClusterState::RemoveNode(absl::string_view name) {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return;
  nodes_by_name_.erase(std::find(nodes_by_name_.begin(), nodes_by_name_.end(),
                                 it->second.get()));
  Unindex(*it->second);
  CountGpuModes(*it->second, -1);
  auto pods = pods_by_node_.find(name);
  if (pods != pods_by_node_.end()) {
    for (const std::string& uid : pods->second) pods_.at(uid).on_ledger = false;
  }
  node_index_.erase(name);
  nodes_.erase(it);
}

absl::Status ClusterState::AddPod(const PodRequest& request,
                                  const PodAllocation& allocation,
                                  const ClaimAllocations* claims) {
  if (allocation.pod_uid.empty() || allocation.pod_uid != request.uid) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "pod %s: allocation uid \"%s\" does not match request uid \"%s\"",
        request.Key(), allocation.pod_uid, request.uid));
  }
  if (allocation.containers.size() != request.containers.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "pod %s: allocation has %d containers, the pod has %d", request.Key(),
        allocation.containers.size(), request.containers.size()));
  }
  if (auto it = pods_.find(request.uid); it != pods_.end()) {
    if (it->second.allocation == allocation) return absl::OkStatus();
    return absl::AlreadyExistsError(
        absl::StrFormat("pod %s is already placed on node %s", request.Key(),
                        it->second.allocation.node_name));
  }
  PodRecord record{request, allocation, false, ClaimKeysOf(request)};
  std::vector<std::string> touched;
  if (!record.claim_keys.empty()) {
    std::vector<std::string> reserve = record.claim_keys;
    static const ClaimAllocations kNone;
    if (claims == nullptr) {
      // Bound elsewhere: the claims are allocated already (or will show
      // up with the pod among their consumers).
      std::erase_if(reserve, [&](const std::string& key) {
        return dra_->FindClaim(key) == nullptr;
      });
    }
    DS_ASSIGN_OR_RETURN(
        touched, dra_->Reserve(request.uid, allocation.node_name, reserve,
                               claims != nullptr ? *claims : kNone));
  }
  auto node = nodes_.find(allocation.node_name);
  if (node != nodes_.end()) {
    if (absl::Status charged = Charge(record, *node->second); !charged.ok()) {
      TouchDraNodes(dra_->Unreserve(request.uid, record.claim_keys));
      return charged;
    }
    Reindex(*node->second);
    record.on_ledger = true;
  }
  TouchDraNodes(touched);
  pods_by_node_[allocation.node_name].insert(request.uid);
  quota_use_[request.namespace_name] += QuotaUseOf(allocation);
  pods_.emplace(request.uid, std::move(record));
  return absl::OkStatus();
}

void ClusterState::RemovePod(absl::string_view pod_uid) {
  auto it = pods_.find(pod_uid);
  if (it == pods_.end()) return;
  const PodRecord& record = it->second;
  const std::string& node_name = record.allocation.node_name;
  if (record.on_ledger) {
    if (auto node = nodes_.find(node_name); node != nodes_.end()) {
      Discharge(record, *node->second);
      Reindex(*node->second);
    }
  }
  if (auto pods = pods_by_node_.find(node_name); pods != pods_by_node_.end()) {
    pods->second.erase(pod_uid);
    if (pods->second.empty()) pods_by_node_.erase(pods);
  }
  if (auto use = quota_use_.find(record.request.namespace_name);
      use != quota_use_.end()) {
    use->second -= QuotaUseOf(record.allocation);
    if (use->second == GpuQuotaUse{}) quota_use_.erase(use);
  }
  const std::vector<std::string> claim_keys = std::move(it->second.claim_keys);
  const std::string uid(pod_uid);
  pods_.erase(it);
  if (!claim_keys.empty()) TouchDraNodes(dra_->Unreserve(uid, claim_keys));
}

void ClusterState::UpsertQuota(GpuQuota quota) {
  quotas_[quota.namespace_name][quota.name] = quota.limits;
}

void ClusterState::RemoveQuota(absl::string_view namespace_name,
                               absl::string_view name) {
  auto it = quotas_.find(namespace_name);
  if (it == quotas_.end()) return;
  it->second.erase(std::string(name));
  if (it->second.empty()) quotas_.erase(it);
}

GpuQuotaLimits ClusterState::QuotaLimits(
    absl::string_view namespace_name) const {
  GpuQuotaLimits limits;
  auto it = quotas_.find(namespace_name);
  if (it == quotas_.end()) return limits;
  for (const auto& [name, quota] : it->second) {
    limits = Tightest(limits, quota);
  }
  return limits;
}

GpuQuotaUse ClusterState::QuotaUse(absl::string_view namespace_name) const {
  auto it = quota_use_.find(namespace_name);
  return it == quota_use_.end() ? GpuQuotaUse{} : it->second;
}

void ClusterState::TouchDraNodes(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (name.empty()) continue;
    auto it = nodes_.find(name);
    if (it == nodes_.end()) {
      if (!dra_->HasNode(name)) continue;
      NodeInventory inventory;
      inventory.name = name;
      UpsertNode(std::move(inventory)).IgnoreError();  // always valid
      dra_only_nodes_.insert(name);
      continue;
    }
    if (dra_only_nodes_.contains(name) && !dra_->HasNode(name) &&
        !pods_by_node_.contains(name)) {
      dra_only_nodes_.erase(name);
      RemoveNode(name);
      continue;
    }
    Touch(*it->second);
  }
}

void ClusterState::UpsertDeviceClass(dra::DeviceClass device_class) {
  TouchDraNodes(dra_->UpsertDeviceClass(std::move(device_class)));
}

void ClusterState::RemoveDeviceClass(const std::string& name) {
  TouchDraNodes(dra_->RemoveDeviceClass(name));
}

absl::Status ClusterState::UpsertResourceSlice(dra::ResourceSlice slice) {
  DS_ASSIGN_OR_RETURN(std::vector<std::string> touched,
                      dra_->UpsertSlice(std::move(slice)));
  TouchDraNodes(touched);
  return absl::OkStatus();
}

void ClusterState::RemoveResourceSlice(const std::string& name) {
  TouchDraNodes(dra_->RemoveSlice(name));
}

absl::Status ClusterState::UpsertResourceClaim(dra::ResourceClaim claim) {
  DS_ASSIGN_OR_RETURN(std::vector<std::string> touched,
                      dra_->UpsertClaim(std::move(claim)));
  TouchDraNodes(touched);
  return absl::OkStatus();
}

void ClusterState::RemoveResourceClaim(const std::string& key) {
  TouchDraNodes(dra_->RemoveClaim(key));
}

absl::StatusOr<std::vector<std::string>> ClusterState::RebuildNode(
    absl::string_view name) {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) {
    return absl::NotFoundError(absl::StrFormat("node %s is not known", name));
  }
  auto fresh = std::make_unique<NodeState>(it->second->inventory());
  std::vector<std::string> displaced = Replay(*fresh);
  *std::find(nodes_by_name_.begin(), nodes_by_name_.end(), it->second.get()) =
      fresh.get();
  Unindex(*it->second);
  Reindex(*fresh);
  node_index_[it->first] = fresh.get();
  it->second = std::move(fresh);
  return displaced;
}

const NodeState* ClusterState::FindNode(absl::string_view name) const {
  auto it = node_index_.find(name);
  return it == node_index_.end() ? nullptr : it->second;
}

uint64_t ClusterState::NodeVersion(const NodeState& node) const {
  auto it = versions_.find(&node);
  return it == versions_.end() ? 0 : it->second;
}

const PodRecord* ClusterState::FindPod(absl::string_view pod_uid) const {
  auto it = pods_.find(pod_uid);
  return it == pods_.end() ? nullptr : &it->second;
}

absl::Status ClusterState::CheckInvariants() const {
  if (nodes_by_name_.size() != nodes_.size() ||
      !std::equal(nodes_by_name_.begin(), nodes_by_name_.end(), nodes_.begin(),
                  [](const NodeState* flat, const auto& entry) {
                    return flat == entry.second.get();
                  })) {
    return absl::InternalError("the flat node list differs from the node map");
  }
  std::map<SharingMode, int64_t> gpus_by_mode;
  for (const NodeState* node : nodes_by_name_) {
    for (const Gpu& gpu : node->inventory().gpus) ++gpus_by_mode[gpu.mode];
  }
  if (gpus_by_mode != gpus_by_mode_) {
    return absl::InternalError("the GPU count by mode differs from the nodes");
  }
  size_t indexed = 0;
  for (const auto& [shape, group] : shape_groups_) {
    for (auto at = group.buckets.begin(); at != group.buckets.end(); ++at) {
      const auto& [key, bucket] = *at;
      if (bucket.nodes.empty()) {
        return absl::InternalError("an empty bucket is kept in the index");
      }
      if (bucket.nodes.size() > most_nodes_per_bucket_) {
        return absl::InternalError(
            absl::StrFormat("a bucket holds %d nodes, more than %d",
                            bucket.nodes.size(), most_nodes_per_bucket_));
      }
      const auto next = std::next(at);
      const bool last_of_class =
          next == group.buckets.end() || !next->first.SameClass(key);
      if (bucket.nodes.front().node->name() < key.first_name ||
          (!last_of_class &&
           bucket.nodes.back().node->name() >= next->first.first_name)) {
        return absl::InternalError(absl::StrFormat(
            "the bucket from \"%s\" holds nodes %s..%s outside its names",
            key.first_name, bucket.nodes.front().node->name(),
            bucket.nodes.back().node->name()));
      }
      IndexBucket summary{bucket.nodes};
      summary.Summarise();
      if (summary.max_headroom != bucket.max_headroom ||
          summary.max_host.cpu_milli != bucket.max_host.cpu_milli ||
          summary.max_host.memory_mib != bucket.max_host.memory_mib) {
        return absl::InternalError(absl::StrFormat(
            "a bucket of utilisation %d keeps maxima that are not its "
            "nodes' (%d MiB, %d cores, %d CPU milli, %d MiB host; its nodes: "
            "%d, %d, %d, %d)",
            key.utilisation, bucket.max_headroom.memory_mib,
            bucket.max_headroom.cores, bucket.max_host.cpu_milli,
            bucket.max_host.memory_mib, summary.max_headroom.memory_mib,
            summary.max_headroom.cores, summary.max_host.cpu_milli,
            summary.max_host.memory_mib));
      }
      for (const IndexedNode& entry : bucket.nodes) {
        const NodeState* node = entry.node;
        ++indexed;
        const IndexedNode fresh = IndexEntryOf(*node, *backends_);
        if (fresh.headroom != entry.headroom ||
            fresh.host.cpu_milli != entry.host.cpu_milli ||
            fresh.host.memory_mib != entry.host.memory_mib) {
          return absl::InternalError(absl::StrFormat(
              "node %s: indexed headroom is stale", node->name()));
        }
        if (entry.version != NodeVersion(*node)) {
          return absl::InternalError(
              absl::StrFormat("node %s: indexed version %d, the node is at %d",
                              node->name(), entry.version, NodeVersion(*node)));
        }
        if (fresh.blocked != entry.blocked ||
            fresh.blocked_by != entry.blocked_by ||
            entry.gpu_count != static_cast<int32_t>(node->gpu_count())) {
          return absl::InternalError(absl::StrFormat(
              "node %s: indexed blocked code is stale", node->name()));
        }
        if (!(node->shape() == shape) ||
            !BucketKey::Of(NodeUtilisationPercent(*node), fresh.headroom)
                 .SameClass(key)) {
          return absl::InternalError(absl::StrFormat(
              "node %s is indexed at utilisation %d, it is at %d", node->name(),
              key.utilisation, NodeUtilisationPercent(*node)));
        }
      }
    }
  }
  if (indexed != nodes_.size()) {
    return absl::InternalError(absl::StrFormat(
        "%d nodes indexed by shape, %d known", indexed, nodes_.size()));
  }
  for (const auto& [name, node] : nodes_) {
    DS_RETURN_IF_ERROR(node->CheckInvariants());
    for (size_t i = 0; i < node->gpu_count(); ++i) {
      for (const std::string& uid : node->ledger(i).PodUids()) {
        const PodRecord* record = FindPod(uid);
        if (record == nullptr || !record->on_ledger ||
            record->allocation.node_name != name) {
          return absl::InternalError(absl::StrFormat(
              "node %s gpu %s holds pod %s that is not recorded there", name,
              node->inventory().gpus[i].uuid, uid));
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace deviceshare
