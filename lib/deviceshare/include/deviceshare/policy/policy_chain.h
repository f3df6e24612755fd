// File: policy/policy_chain.h
//
// A pod's own GPU policy when one registered policy does not say it all:
//   - a comma list of policies (HAMi's chains, e.g. "binpack,numa" or
//     "mutex, spread"): the GPUs rank by the sort keys in the order
//     written (binpack or spread by utilisation, numa by NUMA node), then
//     the highest index; every policy's filter applies (mutex) and the
//     first that picks GPUs picks them (topology-aware). A list without a
//     sort key ranks as spread; with numa-bind the NUMA key comes first.
//     (HAMi's gpu_policy.go lessByChain and device.go Fit.)
//   - one policy scored with the pod's device-scoring-weights.
// Made per pod by the decision path; the policies it is made of must
// outlive it.
//
// Thread safety: immutable; safe to share across threads.
#ifndef DEVICESHARE_POLICY_POLICY_CHAIN_H_
#define DEVICESHARE_POLICY_POLICY_CHAIN_H_

#include <memory>
#include <vector>

#include "deviceshare/policy/placement_policy.h"
#include "deviceshare/policy/scoring_weights.h"

namespace deviceshare {

// `policies` in the order written, at least one. One policy is taken
// alone (not a chain), scored with `weights`, unless `written_as_list`:
// in HAMi any comma makes a chain ("binpack," or "binpack,unknown" left
// with one known word), and a chain's ties go to the highest index.
std::unique_ptr<PlacementPolicy> MakePolicyChain(
    std::vector<const PlacementPolicy*> policies,
    const DeviceScoringWeights& weights, bool numa_bind,
    bool written_as_list = false);

}  // namespace deviceshare

#endif  // DEVICESHARE_POLICY_POLICY_CHAIN_H_
