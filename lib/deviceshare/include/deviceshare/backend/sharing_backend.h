// File: backend/sharing_backend.h
//
// SharingBackend: one way of sharing a GPU (hami-core, mig, mps). Backends
// know nothing of Kubernetes objects or annotation strings: they see a
// PodRequest, a NodeState and its DeviceLedgers, and produce PodAllocations
// and ContainerEdits. Instances are made by name through BackendRegistry.
//
// Contract (the contract test suite runs it against every registered
// backend):
//   - Filter() is const and pure: it never changes the node. When the pod
//     fits, the returned NodeFit carries the exact allocation that Commit()
//     would make; otherwise a reason code and message with numbers.
//   - Score() is in [0, 100] and deterministic for equal inputs.
//   - MayFit() and ScoreUpperBound() are cheap (no allocation, O(GPUs))
//     and let the scheduler skip nodes without changing its decision:
//     MayFit() false implies Filter() does not fit, and every placement
//     Filter() returns scores at most ScoreUpperBound(), which is at most
//     ShapeScoreBound() for the node's shape and utilisation.
//   - Commit() applies an allocation to the node's ledgers, all or nothing:
//     on any error the node is unchanged.
//   - Release() removes every share of the pod that this backend's mode put
//     on the node, exactly undoing Commit(); releasing a pod that is not
//     there is a no-op (idempotent).
//   - ContainerEdits() is pure.
//
// Thread safety: backends are immutable after construction; all methods
// are safe to call concurrently as long as the NodeState passed to Commit
// and Release is not read at the same time.
#ifndef DEVICESHARE_BACKEND_SHARING_BACKEND_H_
#define DEVICESHARE_BACKEND_SHARING_BACKEND_H_

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/backend/container_edits.h"
#include "deviceshare/backend/fit.h"
#include "deviceshare/dra/resource_slice.h"
#include "deviceshare/model/node_state.h"
#include "deviceshare/model/pod_allocation.h"
#include "deviceshare/model/pod_request.h"
#include "deviceshare/policy/builtin_policies.h"
#include "deviceshare/policy/placement_policy.h"

namespace deviceshare {

struct PlacementOptions {
  // The policies that rank GPUs and nodes, already chosen for the pod (its
  // own override, else the config's). Never null.
  const PlacementPolicy* gpu_policy = &BinpackPolicy();
  const PlacementPolicy* node_policy = &BinpackPolicy();
  // The pod being placed (the decision path sets it); null: the policies
  // score without it (NodeScore instead of NodeScoreFor).
  const PodRequest* pod = nullptr;
  // False: an unfit verdict may carry its code alone (empty message, no GPU
  // verdicts), for callers that only count reasons.
  bool explain = true;
};

// The node policy's score of `placement`, with the pod when known.
inline int NodeScoreOf(const PlacementOptions& options, const NodeState& node,
                       const PodAllocation& placement) {
  return options.pod != nullptr
             ? options.node_policy->NodeScoreFor(*options.pod, node, placement)
             : options.node_policy->NodeScore(node, placement);
}

class SharingBackend {
 public:
  virtual ~SharingBackend() = default;

  // The registry name, e.g. "hami-core".
  virtual absl::string_view name() const = 0;
  virtual SharingMode mode() const = 0;

  virtual NodeFit Filter(const PodRequest& request, const NodeState& node,
                         const PlacementOptions& options) const = 0;

  // Filter()'s code alone (kFits when it fits), whatever options.explain
  // says: the pass that counts why a failed pod fits nowhere asks every
  // node. The default asks Filter() without text.
  virtual ReasonCode FilterCode(const PodRequest& request,
                                const NodeState& node,
                                const PlacementOptions& options) const;

  // Counting a failed pod's reasons without reading each node's GPUs: the
  // code FilterCode() gives on `node` to every pod that BlockedCodeApplies()
  // to, when no GPU of the node can take a share of any size (every GPU
  // unhealthy, cordoned, held or out of tenant slots); kFits when some GPU
  // may, or when the backend cannot say. The cluster index keeps it beside
  // each node (IndexedNode::blocked). The default says kFits.
  virtual ReasonCode BlockedCode(const NodeState& node) const;
  virtual bool BlockedCodeApplies(const PodRequest& request) const {
    return false;
  }

  // Node score of a placement that Filter() returned, in [0, 100].
  virtual int Score(const NodeState& node, const PodAllocation& placement,
                    const PlacementOptions& options) const = 0;

  // A necessary condition for Filter() to fit; false rules the node out.
  virtual bool MayFit(const PodRequest& request,
                      const NodeState& node) const = 0;

  // An upper bound of Score() for any placement of `request` on `node`.
  virtual int ScoreUpperBound(const PodRequest& request, const NodeState& node,
                              const PlacementOptions& options) const = 0;

  // An upper bound of ScoreUpperBound() over every node of `shape` whose
  // utilisation (policy/scoring.h) is `utilisation_percent`. Lets the
  // scheduler skip whole groups of nodes. The default, 100, skips none.
  virtual int ShapeScoreBound(const PodRequest& request, const NodeShape& shape,
                              int utilisation_percent,
                              const PlacementOptions& options) const {
    return 100;
  }

  // What every grant this backend makes may charge its GPU (policy/
  // placement_policy.h): node score bounds rely on it, so a backend says
  // kAsAsked only if no grant ever charges more than its container asks.
  // The default promises nothing.
  virtual GrantCharges grant_charges() const {
    return GrantCharges::kUpToWholeGpu;
  }

  // A necessary condition for MayFit() from the node's shape and GPU
  // headroom alone, which the cluster index keeps beside each node. The
  // default, true, rules out nothing.
  virtual bool MayFitHeadroom(const PodRequest& request, const NodeShape& shape,
                              const GpuHeadroom& headroom) const {
    return true;
  }

  // REQUIRES: `allocation` names GPUs of `node` (by uuid).
  virtual absl::Status Commit(const PodRequest& request,
                              const PodAllocation& allocation,
                              NodeState& node) const = 0;

  virtual void Release(absl::string_view pod_uid, NodeState& node) const = 0;

  virtual ContainerEdits Edits(const ContainerAllocation& container,
                               const EditOptions& options) const = 0;

  // The devices `gpu` (registered: the config applied) contributes to a
  // DRA ResourceSlice pool: capacities with their request policies, the
  // counter sets of its partitions, the attributes only this backend knows
  // ("mode", a MIG profile). The node agent adds the facts every GPU
  // carries (uuid, product name, PCI root, ...). Unimplemented by default:
  // a backend without a DRA shape is not published.
  virtual absl::StatusOr<dra::GpuDevices> DraDevices(
      const Gpu& gpu, const dra::DeviceNaming& naming) const;

  // Filter, then Commit of the allocation it found.
  absl::StatusOr<PodAllocation> Allocate(const PodRequest& request,
                                         NodeState& node,
                                         const PlacementOptions& options) const;
};

}  // namespace deviceshare

#endif  // DEVICESHARE_BACKEND_SHARING_BACKEND_H_
