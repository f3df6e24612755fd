// File: scheduler/cluster_state.h
//
// ClusterState: every node the scheduler knows, with its ledgers, and every
// pod placed on them. It is updated incrementally by events (node
// registered / updated / removed, pod allocated, pod deleted) and never
// rebuilt from all pods for a decision.
//
// Each pod's (request, allocation) is kept, so that a node whose inventory
// changes is rebuilt from just the pods on it, and so that a restarted
// scheduler can be fed the allocations read back from pod annotations.
// A pod that is recorded on a node the state does not know yet (events
// arrive out of order) is put on the ledger when the node registers.
//
// DRA: the state also keeps the cluster's DeviceClasses, ResourceSlices
// and ResourceClaims (dra/dra_cluster.h). A pod's claims are reserved with
// the pod and unreserved with it; every DRA event bumps the versions of
// the nodes it touches. A node known only from its ResourceSlices (a node
// whose agent publishes no GPU annotation) gets a NodeState with no GPUs,
// which its own inventory replaces when it registers.
//
// Thread safety: none, except that the const methods may run on many
// threads while nobody changes the state. Scheduler serialises access.
#ifndef DEVICESHARE_SCHEDULER_CLUSTER_STATE_H_
#define DEVICESHARE_SCHEDULER_CLUSTER_STATE_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/backend/backend_set.h"
#include "deviceshare/dra/dra_cluster.h"
#include "deviceshare/model/gpu_quota.h"
#include "deviceshare/model/node_state.h"
#include "deviceshare/model/pod_allocation.h"
#include "deviceshare/model/pod_request.h"

namespace deviceshare {

struct PodRecord {
  PodRequest request;
  PodAllocation allocation;
  // False while the node is unknown, or when the pod could not be put back
  // after its node's inventory changed (see UpsertNode).
  bool on_ledger = false;
  // The claims (keys) the pod reserves.
  std::vector<std::string> claim_keys;
};

// The claims of a pod that a decision allocates: claim key -> allocation.
using ClaimAllocations = std::map<std::string, dra::AllocationResult>;

// The keys ("namespace/name") of the pod's claims that exist; a claim of a
// template not created yet has none.
std::vector<std::string> ClaimKeysOf(const PodRequest& request);

// A node in the index, with its GPU headroom and host room kept beside it
// so that a decision can rule it out without touching the node.
// `blocked`: SharingBackend::BlockedCode of the backend of the node's GPUs
// (`blocked_by`; all of them run its mode), so that counting a failed pod's
// reasons skips the GPUs of a node none of whose GPUs can take a share;
// kFits (and no backend) otherwise.
struct IndexedNode {
  const NodeState* node;
  GpuHeadroom headroom;
  HostRoom host;
  ReasonCode blocked = ReasonCode::kFits;
  const SharingBackend* blocked_by = nullptr;
  int32_t gpu_count = 0;
  // ClusterState::NodeVersion of the node (0 until the state sets it).
  uint64_t version = 0;
};

// The index's entry for `node` as it is now.
IndexedNode IndexEntryOf(const NodeState& node, const BackendSet& backends);

// Where a node sits within its shape: its utilisation percent
// (policy/scoring.h) and coarse classes of its GPU headroom, so that whole
// buckets can be bounded (SharingBackend::ShapeScoreBound) and nodes of
// similar headroom share one (IndexBucket keeps their exact largest
// headroom, which rules a bucket out through SharingBackend::MayFitHeadroom).
// The nodes of one class are split by name into buckets of at most
// ClusterState's most_nodes_per_bucket, so that a change to one node costs
// O(bucket), not O(class): thousands of full nodes share one class.
struct BucketKey {
  int utilisation = 0;
  int memory_class = 0;  // bit width of the headroom's MiB
  int cores_class = 0;   // headroom cores / 10
  // The bucket holds the nodes of its class whose names are at least this
  // and less than the next bucket's of the class ("" for the first). The
  // buckets of a class are therefore met in name order.
  std::string first_name;

  // The class, first_name "".
  static BucketKey Of(int utilisation, const GpuHeadroom& headroom);
  bool SameClass(const BucketKey& other) const {
    return utilisation == other.utilisation &&
           memory_class == other.memory_class &&
           cores_class == other.cores_class;
  }
  auto operator<=>(const BucketKey& other) const = default;
};

// The nodes of one bucket, by name, and a version that changes whenever a
// node joins it, leaves it or changes in it. Versions come from the same
// counter as NodeVersion and are never reused (a bucket emptied and made
// again gets a new one), so what was computed over every node of a bucket
// holds while the bucket is at its version.
// Beside them, the largest headroom and host room of its nodes, each
// figure on its own (a bucket no node of which may fit is skipped whole).
struct IndexBucket {
  std::vector<IndexedNode> nodes;
  uint64_t version = 0;
  GpuHeadroom max_headroom;
  HostRoom max_host;

  // Recomputes the two maxima from the nodes.
  void Summarise();
  // Widens the two maxima by one node's figures.
  void Include(const IndexedNode& entry);
};

// The nodes of one shape by bucket; only non-empty buckets are kept.
struct ShapeGroup {
  NodeShape shape;
  std::map<BucketKey, IndexBucket> buckets;
};

class ClusterState {
 public:
  // A bucket that grows past this is split in two (BucketKey).
  static constexpr size_t kMostNodesPerBucket = 256;

  // `backends` must outlive the state. `new_share_id` names each share of
  // a DRA device (a UID); unset: random UUIDs. `most_nodes_per_bucket`
  // (>= 2): where buckets split; tests make it small.
  explicit ClusterState(const BackendSet* backends,
                        std::function<std::string()> new_share_id = {},
                        size_t most_nodes_per_bucket = kMostNodesPerBucket);
  ~ClusterState();

  // Adds a node, or replaces its inventory and puts its pods back on the new
  // ledgers. Returns the keys of pods that no longer fit the new inventory
  // (a GPU vanished or shrank): they stay recorded, off the ledger, until
  // deleted or until a later update makes room. InvalidArgument for an
  // inventory that fails ValidateInventory or names a GPU mode no
  // registered backend serves.
  absl::StatusOr<std::vector<std::string>> UpsertNode(NodeInventory inventory);

  // Forgets the node; its pods stay recorded, off the ledger. Idempotent.
  void RemoveNode(absl::string_view name);

  // Records a placed pod and charges its node. Adding the same uid with the
  // same allocation again is a no-op; with another allocation it is
  // AlreadyExists. If the allocation does not fit the node's ledgers the
  // pod is not recorded and the backend's error is returned.
  // `claims`: the allocations this decision made for the pod's claims
  // that were not allocated; they are committed with the pod, all or
  // nothing. Without them (a pod bound elsewhere) the pod is only recorded
  // as a consumer of those of its claims that are known.
  absl::Status AddPod(const PodRequest& request,
                      const PodAllocation& allocation,
                      const ClaimAllocations* claims = nullptr);

  // Releases the pod's shares and forgets it. Idempotent.
  void RemovePod(absl::string_view pod_uid);

  // Rebuilds one node's ledgers from the pods recorded on it, as a restarted
  // scheduler would. The result must equal the incremental state.
  absl::StatusOr<std::vector<std::string>> RebuildNode(absl::string_view name);

  // Unique among the states of this process, so that what is remembered
  // of one state (scheduler/bucket_twins.h) is never taken for another's,
  // even one made at the same address.
  uint64_t id() const { return id_; }

  const NodeState* FindNode(absl::string_view name) const;
  const PodRecord* FindPod(absl::string_view pod_uid) const;
  // Changes whenever the node's ledgers or inventory change, and is never
  // reused (a replaced node gets a new one): a verdict computed for version
  // v still holds while the node is at v. 0 for a node not in the state.
  uint64_t NodeVersion(const NodeState& node) const;
  // Nodes by name.
  const std::map<std::string, std::unique_ptr<NodeState>, std::less<>>& nodes()
      const {
    return nodes_;
  }
  // The same nodes in a flat vector, by name: what a decision iterates.
  const std::vector<const NodeState*>& nodes_by_name() const {
    return nodes_by_name_;
  }
  size_t pod_count() const { return pods_.size(); }
  // Whether some registered GPU runs `mode`.
  bool HasGpusInMode(SharingMode mode) const {
    return gpus_by_mode_.contains(mode);
  }
  // Every node, grouped by shape and utilisation; kept current by every
  // event.
  const std::map<NodeShape, ShapeGroup>& shape_groups() const {
    return shape_groups_;
  }

  // ---- DRA objects (dra/dra_cluster.h) --------------------------------------
  void UpsertDeviceClass(dra::DeviceClass device_class);
  void RemoveDeviceClass(const std::string& name);
  absl::Status UpsertResourceSlice(dra::ResourceSlice slice);
  void RemoveResourceSlice(const std::string& name);
  absl::Status UpsertResourceClaim(dra::ResourceClaim claim);
  void RemoveResourceClaim(const std::string& key);
  const dra::DraCluster& dra() const { return *dra_; }

  // ---- GPU quotas (model/gpu_quota.h) ---------------------------------------
  // A ResourceQuota object's GPU limits, added or replaced by (namespace,
  // name); removing one that is not there does nothing.
  void UpsertQuota(GpuQuota quota);
  void RemoveQuota(absl::string_view namespace_name, absl::string_view name);
  // Every quota object of the namespace together (GpuQuotaLimits Tightest).
  GpuQuotaLimits QuotaLimits(absl::string_view namespace_name) const;
  // What the namespace's recorded pods hold (QuotaUseOf), on a ledger or
  // not, as HAMi counts every pod it tracks.
  GpuQuotaUse QuotaUse(absl::string_view namespace_name) const;

  // Every node's invariants, and that every pod on a ledger is recorded.
  absl::Status CheckInvariants() const;

 private:
  absl::Status Charge(const PodRecord& record, NodeState& node);
  void Discharge(const PodRecord& record, NodeState& node);
  // Moves the node to the bucket of its current utilisation.
  void Reindex(const NodeState& node);
  // The bucket of `group` that takes a node of class `key` named `name`,
  // made when the class has none that starts at or before the name.
  std::map<BucketKey, IndexBucket>::iterator BucketFor(ShapeGroup& group,
                                                       BucketKey key,
                                                       const std::string& name);
  // Splits the bucket in two halves by name when it holds too many nodes.
  void SplitIfLarge(ShapeGroup& group,
                    std::map<BucketKey, IndexBucket>::iterator bucket);
  void Unindex(const NodeState& node);
  // Adds `delta` (+1 or -1) per GPU of the node to gpus_by_mode_.
  void CountGpuModes(const NodeState& node, int64_t delta);
  // A new version for the node and its bucket, where it stays.
  void Touch(const NodeState& node);
  // Puts every recorded pod of `node` on its fresh ledgers.
  std::vector<std::string> Replay(NodeState& node);
  // New versions for the nodes a DRA event touched; a node not known yet
  // gets a NodeState without GPUs, and such a node goes when its last
  // slice does.
  void TouchDraNodes(const std::vector<std::string>& names);

  const BackendSet* backends_;
  const size_t most_nodes_per_bucket_;
  std::map<std::string, std::unique_ptr<NodeState>, std::less<>> nodes_;
  std::vector<const NodeState*> nodes_by_name_;
  // The same nodes hashed by name: FindNode runs once per candidate node of
  // every extender call.
  absl::flat_hash_map<std::string, NodeState*> node_index_;
  std::map<NodeShape, ShapeGroup> shape_groups_;
  // Registered GPUs by mode; a mode with none has no entry.
  std::map<SharingMode, int64_t> gpus_by_mode_;
  // Where each node sits in shape_groups_: its group and bucket (a map
  // iterator stays valid until its bucket is erased, and a node leaves a
  // bucket before it is).
  absl::flat_hash_map<
      const NodeState*,
      std::pair<ShapeGroup*, std::map<BucketKey, IndexBucket>::iterator>>
      index_position_;
  absl::flat_hash_map<const NodeState*, uint64_t> versions_;
  uint64_t id_;
  uint64_t last_version_ = 0;
  absl::flat_hash_map<std::string, PodRecord> pods_;
  absl::flat_hash_map<std::string, absl::flat_hash_set<std::string>>
      pods_by_node_;
  std::unique_ptr<dra::DraCluster> dra_;
  // Nodes known only from their ResourceSlices.
  absl::flat_hash_set<std::string> dra_only_nodes_;
  // Quota objects by namespace, then name; what each namespace holds.
  std::map<std::string, std::map<std::string, GpuQuotaLimits>, std::less<>>
      quotas_;
  absl::flat_hash_map<std::string, GpuQuotaUse> quota_use_;
};

}  // namespace deviceshare

#endif  // DEVICESHARE_SCHEDULER_CLUSTER_STATE_H_
