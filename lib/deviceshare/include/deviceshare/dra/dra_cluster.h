// File: dra/dra_cluster.h
//
// DraCluster: the DRA objects a scheduler keeps -- DeviceClasses, the
// ResourceSlices nodes publish, ResourceClaims with their allocations and
// the pods that reserve them -- and one NodeAllocator per node, all kept
// current by events. A pod's claims are checked against a node without
// rebuilding anything (kube-scheduler rebuilds its allocated state from
// every claim in every cycle).
//
// Claims are keyed "namespace/name". A claim's allocation comes from the
// API server (status.allocation) or from this scheduler (Reserve); the
// latter is "assumed" until the API server shows it. Either way it is
// charged to its node exactly once. When the last pod that reserved an
// assumed allocation unreserves it (a failed bind, a pod gone before its
// allocation was written) the allocation is freed; an allocation the API
// server shows stays until the API server drops it (Kubernetes' claim
// controller deallocates a claim when its last consumer is gone).
//
// Slices: only node-local slices (spec.nodeName) take part, which is what
// node agents publish; a node's allocator is rebuilt when one of its
// slices changes, and the claims allocated on it are charged again.
//
// Every event returns the nodes whose verdicts it may have changed, so the
// caller can bump their versions (a DeviceClass change: every DRA node).
//
// Thread safety: Filter() and the const accessors may run on many threads
// at once; the events, Reserve() and Unreserve() need exclusive access.
#ifndef DEVICESHARE_DRA_DRA_CLUSTER_H_
#define DEVICESHARE_DRA_DRA_CLUSTER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "deviceshare/dra/allocation_json.h"
#include "deviceshare/dra/cel.h"
#include "deviceshare/dra/claim_spec.h"
#include "deviceshare/dra/device_class.h"
#include "deviceshare/dra/node_allocator.h"
#include "deviceshare/dra/resource_slice.h"

namespace deviceshare::dra {

// Kubernetes' limit on status.reservedFor: the pods that share a claim.
inline constexpr size_t kMaxClaimConsumers = 256;

struct ClaimEntry {
  ResourceClaim claim;  // as the API server (or the host) gave it
  std::optional<AllocationResult> allocation;
  bool assumed = false;  // allocated here, not yet shown by the API server
  // Pods that reserve the claim: the API server's reservedFor and ours.
  std::set<std::string> reserved_by;
  // Changes whenever the claim's spec, allocation or consumers change.
  uint64_t version = 0;
  // What the filter step reads of the claim (requests, constraints), as a
  // string: pods whose claims have equal shapes get equal verdicts.
  std::string shape;
};

// The filter step's answer for a pod's claims on one node.
struct ClaimsOnNode {
  enum class Outcome {
    kFits,
    kClaimNotReady,       // a claim is missing or cannot be read as written
    kClaimElsewhere,      // a claim is allocated to another node
    kNoDevices,           // the node publishes no DRA device
    kDevicesUnavailable,  // no allocation of the node's devices fits
  };
  Outcome outcome = Outcome::kFits;
  std::string reason;  // why not, naming the claim
  // Allocations for the pod's claims that are not allocated yet (claim key
  // -> allocation), to be committed by Reserve().
  std::map<std::string, AllocationResult> allocations;
  int utilisation_after = 0;  // the node's, with those allocations
};

// What the search reads of a node before filtering it: a necessary
// condition for a pod's unallocated claims, and the range its utilisation
// can have once they are allocated (an upper bound; exact for a share on
// devices alike).
struct ClaimsBound {
  bool may_fit = true;
  int utilisation_now = 0;
  int utilisation_most = 0;
};

// What Bound() computed for one pod, kept across the nodes it is asked
// about: per (request, device profile), the most a device adds. One per
// pod and thread.
struct BoundMemo {
  std::map<std::pair<const void*, int>, int64_t> added;
};

struct DraClusterOptions {
  // A new share id per share of a multi-allocatable device (a UID).
  std::function<std::string()> new_share_id;
  // Candidate tries per node and pod before the search gives up.
  int64_t max_steps = 100000;
};

class DraCluster {
 public:
  // InvalidArgument without a share-id generator.
  static absl::StatusOr<std::unique_ptr<DraCluster>> Create(
      DraClusterOptions options);

  // ---- Events (exclusive access) ------------------------------------------

  std::vector<std::string> UpsertDeviceClass(DeviceClass device_class);
  std::vector<std::string> RemoveDeviceClass(const std::string& name);

  // A node-local slice (spec.nodeName set). InvalidArgument when it names
  // no node; the node keeps its previous slices when its pools do not
  // build (a counter set defined twice), with that error.
  absl::StatusOr<std::vector<std::string>> UpsertSlice(ResourceSlice slice);
  std::vector<std::string> RemoveSlice(const std::string& name);

  // A claim as the API server shows it. Its status.allocation, when set,
  // replaces an assumed one; a claim whose allocation the API server
  // dropped is freed. InvalidArgument for an allocation that cannot be
  // read (naming the field), or one on devices its node lacks.
  absl::StatusOr<std::vector<std::string>> UpsertClaim(ResourceClaim claim);
  std::vector<std::string> RemoveClaim(const std::string& key);

  // ---- The steps ------------------------------------------------------------

  // Whether the claims (keys) of pod `pod_uid` can be served on `node`:
  // allocated ones must be on that node, the others are allocated together
  // in `order`. Thread-safe.
  ClaimsOnNode Filter(const std::string& pod_uid,
                      const std::vector<std::string>& claim_keys,
                      const std::string& node, DeviceOrder order) const;

  // Commits `allocations` (from Filter on `node`, all or nothing) and
  // records the pod as a consumer of every claim in `claim_keys`.
  // FailedPrecondition when a device no longer has the room or a claim is
  // already allocated otherwise, NotFound for a missing claim.
  absl::StatusOr<std::vector<std::string>> Reserve(
      const std::string& pod_uid, const std::string& node,
      const std::vector<std::string>& claim_keys,
      const std::map<std::string, AllocationResult>& allocations);

  // Forgets the pod as a consumer of its claims, freeing the assumed
  // allocations nobody else reserves. Idempotent.
  std::vector<std::string> Unreserve(
      const std::string& pod_uid, const std::vector<std::string>& claim_keys);

  // O(devices x requests), no search, no CEL; thread-safe. `pending`: the
  // pod's claims that are not allocated.
  ClaimsBound Bound(const std::vector<const ResourceClaim*>& pending,
                    const std::string& node, BoundMemo& memo) const;

  // ---- Queries --------------------------------------------------------------

  const ClaimEntry* FindClaim(const std::string& key) const;
  // 0 for a claim not known.
  uint64_t ClaimVersion(const std::string& key) const;
  // A string equal for claims that filter alike: an unallocated claim's
  // spec shape, an allocated claim's identity and version, "?" + key for a
  // claim not known.
  std::string FilterShape(const std::string& key) const;
  bool HasNode(const std::string& node) const;
  // Nodes with at least one slice, by name.
  std::vector<std::string> Nodes() const;
  int UtilisationPercent(const std::string& node) const;
  // Over every node's whole GPUs.
  GpuTotals Totals() const;
  const std::map<std::string, DeviceClass>& classes() const { return classes_; }
  size_t claim_count() const { return claims_.size(); }

 private:
  // A node's load as the search reads it, refreshed whenever its usage
  // changes.
  struct NodeLoad {
    int64_t permille_sum = 0;  // PoolUsage::AddUtilisation
    int64_t units = 0;
    // Per capacity, the most any shared device has left.
    std::map<std::string, int64_t> shared_free;
    // Per capacity, the most any idle dedicated device has.
    std::map<std::string, int64_t> idle_dedicated;
    bool any_idle_dedicated = false;
    bool has_partitions = false;  // devices on counters: not judged here
    // The node's distinct device profiles (indexes into profiles_), and
    // how many devices it has in all.
    std::vector<int> profiles;
    int64_t devices = 0;
  };
  // Devices alike for the bound: shared or not, on counters or not, with
  // the same capacities and policies. Nodes of one model share profiles.
  struct DeviceProfile {
    bool shared = false;
    bool partition = false;
    std::map<std::string, DeviceCapacity> capacity;
    bool operator==(const DeviceProfile& other) const = default;
  };
  struct NodeDevices {
    std::map<std::string, ResourceSlice> slices;  // by name
    std::unique_ptr<NodeAllocator> allocator;
    NodeLoad load;
  };

  explicit DraCluster(DraClusterOptions options);
  // Rebuilds the node's allocator from its slices and charges the claims
  // allocated on it; on failure the node keeps its old allocator.
  absl::Status Rebuild(const std::string& node, NodeDevices& devices);
  void ChargeOn(const ClaimEntry& entry);
  void FreeOn(const ClaimEntry& entry);
  std::vector<std::string> AllNodes() const;
  void Touch(ClaimEntry& entry);
  // Recomputes the load of the nodes of `names` (those that changed).
  void Refresh(const std::vector<std::string>& names);
  NodeLoad LoadOf(const NodeAllocator& allocator);
  int ProfileOf(const Device& device);
  // Whether a request may fit, and the most its devices can add to the
  // node's permille sum.
  static bool RequestMayFit(const ExactRequest& request, const NodeLoad& load);
  // The permille one device of `profile` adds to its node's sum.
  static int64_t MostAdded(const ExactRequest& request,
                           const DeviceProfile& profile);

  DraClusterOptions options_;
  mutable CelCache cel_;
  std::map<std::string, DeviceClass> classes_;
  std::map<std::string, NodeDevices> nodes_;
  std::map<std::string, std::string> slice_nodes_;  // slice name -> node
  std::map<std::string, ClaimEntry> claims_;
  std::vector<DeviceProfile> profiles_;  // grows with new device shapes
  uint64_t last_version_ = 0;
};

// The claim key of a pod's claim: "namespace/name".
std::string ClaimKey(const std::string& ns, const std::string& name);

// What an allocator reads of a claim's spec, as a string (configs left
// out): equal strings allocate alike.
std::string ClaimSpecShape(const ClaimSpec& spec);

}  // namespace deviceshare::dra

#endif  // DEVICESHARE_DRA_DRA_CLUSTER_H_
