// File: policy/placement_policy.h
//
// PlacementPolicy: how a pod's candidates are ranked, at two levels that
// are chosen separately (scheduler.nodePolicy / scheduler.gpuPolicy, or per
// pod with hami.io/node-scheduler-policy / hami.io/gpu-scheduler-policy):
//   - node level: which of the nodes that fit takes the pod (NodeScore);
//   - GPU level: which GPUs of the chosen node serve each container
//     (GpuScore), the device choice order.
// Policies are objects made by name through a PolicyRegistry
// (policy/policy_registry.h); backends and the decision path ask them and
// never compare policy names.
//
// The scheduler's node index keeps nodes grouped by their utilisation
// (policy/scoring.h) and visits the groups best ScoreBound() first, so a
// policy decides the order in which the index is searched; a policy that
// cannot bound its score returns 100 and every node is evaluated.
//
// Contract:
//   - Every method is const, pure and deterministic; scores are in
//     [0, 100], higher is better. Ties are broken by the caller with a
//     stable key (lower GPU index, smaller node name).
//   - A policy scores the state *after* the tentative placement without
//     touching the ledger (upstream Volcano scored a half-updated ledger).
//   - ScoreBound(after) >= NodeScoreFor(pod, node, placement) for every
//   placement
//     after which the node's utilisation lies in [after.least(),
//     after.most()].
//
// Thread safety: safe to share across threads; immutable apart from what
// ObservePod() learns, which a policy synchronises itself.
#ifndef DEVICESHARE_POLICY_PLACEMENT_POLICY_H_
#define DEVICESHARE_POLICY_PLACEMENT_POLICY_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "deviceshare/model/device_ledger.h"
#include "deviceshare/model/node_state.h"
#include "deviceshare/model/pod_allocation.h"
#include "deviceshare/model/pod_request.h"
#include "deviceshare/model/reason_code.h"
#include "deviceshare/policy/scoring_weights.h"

namespace deviceshare {

// The utilisation percent a node can have after a placement, as the range
// [least(), most()]. Each end is computed when asked: a policy's bound
// reads one or both, and the scheduler asks for thousands of nodes.
struct UtilisationRange {
  absl::FunctionRef<int()> least;
  absl::FunctionRef<int()> most;
};

// A GPU's place in the order in which a container's GPUs are taken:
// compared lexicographically, higher first.
using GpuRank = std::array<int64_t, 3>;

// A GPU that can take a container's share, as the GPU level ranks it.
struct GpuCandidate {
  const Gpu* gpu = nullptr;
  GpuRank rank{};
};

// How a policy takes part in a chain of policies (HAMi's comma lists such
// as "binpack,numa"): as a key the GPUs are ranked by in the order written
// (binpack and spread by their score, numa by NUMA node), or only as a
// filter and picker (mutex, topology-aware).
enum class ChainRole { kScoreKey, kNumaKey, kFilter };

// What a placement's grants may charge their GPUs, as the backends that
// may serve a pod promise it (SharingBackend::grant_charges): what node
// score bounds may assume.
enum class GrantCharges {
  // Anything up to the whole GPU: a MIG instance, say, rounds a share up
  // to a profile.
  kUpToWholeGpu,
  // Each grant charges its GPU no more than its container's cores and its
  // memory on that card (ContainerRequest::cores and MemoryOn() of the
  // ledger's memory capacity): backend/fractional_share.h's shares.
  kAsAsked,
};

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;

  // The registry name, e.g. "binpack".
  virtual absl::string_view name() const = 0;

  // GPU level: the rank of the GPU of `ledger` for a share if `extra` more
  // were charged to it.
  virtual int GpuScore(const DeviceLedger& ledger,
                       const PodCharge& extra) const = 0;
  // GpuScore with the pod's device-scoring-weights; policies that do not
  // score utilisation ignore them.
  virtual int WeightedGpuScore(const DeviceLedger& ledger,
                               const PodCharge& extra,
                               const DeviceScoringWeights& weights) const {
    return GpuScore(ledger, extra);
  }
  // GPU level: the rank of `gpu` whose offer scored `offer_score` (the
  // backend's score, built on GpuScore). By default the score, then the
  // lower GPU index.
  virtual GpuRank RankGpu(int64_t offer_score, const Gpu& gpu) const {
    return GpuRank{offer_score, -static_cast<int64_t>(gpu.index), 0};
  }
  // GPU level: which `want` of `ranked` (every GPU that can take the
  // share, best first; more than `want`) a container takes, as positions
  // in `ranked`. The first `want` unless picks_gpus().
  // GPU level with the rest of the node in view: the rank of the GPU at
  // `position` of `node` for a share of `pod` that charges it `extra`
  // (this pod's shares there included). For policies whose choice of a GPU
  // depends on the node's other GPUs and CPU (fgd), which also return true
  // from ranks_on_node(); by default RankGpu, and the backends call RankGpu
  // directly, without working out `extra`.
  virtual bool ranks_on_node() const { return false; }
  virtual GpuRank RankGpuOnNode(const PodRequest& pod, const NodeState& node,
                                size_t position, const PodCharge& extra,
                                int64_t offer_score) const {
    return RankGpu(offer_score, node.inventory().gpus[position]);
  }
  virtual bool picks_gpus() const { return false; }
  virtual std::vector<size_t> PickGpus(absl::Span<const GpuCandidate> ranked,
                                       int32_t want) const {
    std::vector<size_t> first(want);
    for (int32_t i = 0; i < want; ++i) first[i] = i;
    return first;
  }
  virtual ChainRole chain_role() const { return ChainRole::kScoreKey; }

  // GPU level: whether the GPU of `ledger` may take a share of a pod that
  // already holds `pod_shares_here` on it (this pod's earlier containers);
  // a reason code when the policy itself refuses it. Every GPU by default.
  virtual ReasonCode GpuAdmits(
      const DeviceLedger& ledger,
      absl::Span<const ContainerShare> pod_shares_here) const {
    return ReasonCode::kFits;
  }

  // Node level: the score of `node` once `placement` (not committed, its
  // grants on GPUs of `node`) lands on it.
  virtual int NodeScore(const NodeState& node,
                        const PodAllocation& placement) const = 0;

  // NodeScore with the pod in view, for policies that weigh what the pod
  // takes besides GPUs (its CPU: bestfit, fgd). By default NodeScore.
  virtual int NodeScoreFor(const PodRequest& pod, const NodeState& node,
                           const PodAllocation& placement) const {
    return NodeScore(node, placement);
  }

  // An upper bound of NodeScore() over every placement after which the
  // node's utilisation percent lies in `after`.
  virtual int ScoreBound(const UtilisationRange& after) const = 0;

  // An upper bound of NodeScoreFor(pod, node, placement) over every
  // placement of `pod` on `node` whose grants charge as `charges` says,
  // for policies whose ScoreBound cannot bound their score but the node's
  // state can (fgd, fragaware). The search asks it of a node only when
  // there is a best to beat and no node budget. 100 by default.
  virtual int NodeScoreBoundFor(const PodRequest& pod, const NodeState& node,
                                GrantCharges charges) const {
    return 100;
  }

  // Node level: how many nodes that fit the search scores before it stops
  // (kube-scheduler's percentageOfNodesToScore, as a count); 0: every node
  // that fits. For policies whose score cannot be bounded by utilisation
  // (ScoreBound 100) and costs too much to evaluate on every node: the
  // search then visits the most utilised buckets first, so the nodes scored
  // are the fullest that fit, and takes the best of them.
  virtual int64_t feasible_nodes_to_score() const { return 0; }

  // Every pod the scheduler decides for is shown to every policy once per
  // decision, before the search (the same pod may come again: an extender
  // asks for each retry). A policy that learns the workload from the pods
  // it sees (fragaware) updates its own synchronised estimate here; the
  // others ignore it. Its scores are then deterministic given the pods
  // observed, in order.
  virtual void ObservePod(const PodRequest& pod) const {}
  // A number that changes whenever what ObservePod() learnt may change this
  // policy's scores or GPU choices, and never decreases; constant for a
  // policy that learns nothing (0, the default). The scheduler remembers
  // verdicts only while the sum over its policies is unchanged
  // (scheduler/scheduler.h), so a policy that learns must override it
  // (fragaware: its learned workload's snapshot id, 0 when fixed).
  virtual uint64_t scores_version() const { return 0; }

  // The score of a node, or a device, whose utilisation after the
  // placement is `percent`: how DRA devices are ranked, which no ledger
  // describes. By default the bound of that single point, which is the
  // score itself for policies that score utilisation (binpack, spread).
  virtual int UtilisationScore(int percent) const {
    auto at = [percent] { return percent; };
    return ScoreBound(UtilisationRange{at, at});
  }
};

}  // namespace deviceshare

#endif  // DEVICESHARE_POLICY_PLACEMENT_POLICY_H_
