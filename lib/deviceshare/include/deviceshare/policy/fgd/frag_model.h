// File: policy/fgd/frag_model.h
//
// The fragmentation measure of FGD ("Beware of Fragmentation", Weng et al.,
// USENIX ATC'23), the placement policy the Alibaba GPU trace is judged by:
// how much of a node's idle GPU capacity the typical workload could not
// use. Capacity is in milli-GPU (1000 = one whole GPU), as in the trace.
//
// For one typical pod m, a node is classified (FragClass) and contributes:
//   - m asks no GPU: all the node's idle GPU milli (kCpuOnlyFits if its CPU
//     fits, kCpuOnlyLacksCpu if not): a CPU-only pod can use none of it;
//   - the node's model is not one m accepts: all of it (kNoAccess);
//   - m fits (kSatisfied: gpu_count GPUs each with >= gpu_milli left, and
//     the CPU): only the GPUs with less than gpu_milli left, which m
//     cannot use; and, for a shape counted_by_cpu (fragaware's single
//     shares, not FGD's), also the milli of the GPUs it fits beyond what
//     the pods of m that the node's CPU holds would take: floor(CPU left
//     / m's CPU) x gpu_count x gpu_milli. A node whose CPU holds four
//     470-milli pods of 11 CPUs cannot use its other GPUs for them, which
//     FGD's one-pod check does not see;
//   - otherwise (kLackGpu, kLackCpu, kLackBoth): all of it.
// The node's fragmentation for a workload is the sum over its typical pods
// of share x contribution (FragMilli). FGD places a pod where that sum grows
// least.
//
// Thread safety: plain values and pure functions.
#ifndef DEVICESHARE_POLICY_FGD_FRAG_MODEL_H_
#define DEVICESHARE_POLICY_FGD_FRAG_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "deviceshare/model/workload_shape.h"

namespace deviceshare::fgd {

inline constexpr int32_t kMilliPerGpu = 1000;

// What is left on a node, as the measure sees it.
struct FragNode {
  int64_t cpu_milli_left = 0;
  std::vector<int32_t> gpu_milli_left;  // per GPU, 0..kMilliPerGpu
  std::string model;                    // empty: a node without GPUs
};

// A pod shape of the workload and its share of the pods.
using TypicalPod = WorkloadShape;

enum class FragClass {
  kLackBoth,         // neither GPUs nor CPU enough (FGD's Q1)
  kLackGpu,          // CPU fits, GPUs do not (Q2)
  kSatisfied,        // the pod fits (Q3)
  kLackCpu,          // GPUs fit, CPU does not (Q4)
  kCpuOnlyFits,      // a CPU-only pod whose CPU fits (XL)
  kCpuOnlyLacksCpu,  // a CPU-only pod whose CPU does not (XR)
  kNoAccess,         // the node's model is not one the pod accepts
};

// Whether a node of `node_model` may take a pod accepting `pod_models`:
// one of them names it as the scheduler matches models (model_match.h: a
// case-insensitive substring, "A100" names "NVIDIA A100-SXM4-80GB"), or
// the pod names none.
bool ModelAccepts(absl::Span<const std::string> pod_models,
                  const std::string& node_model);

FragClass Classify(const FragNode& node, const TypicalPod& pod);

// The sum of the node's GPU milli left.
int64_t IdleMilli(const FragNode& node);

// The idle milli of `node` that `pod` could not use (weight 1).
int64_t FragMilliFor(const FragNode& node, const TypicalPod& pod);

// Sum over `workload` of share x FragMilliFor.
double FragMilli(const FragNode& node, absl::Span<const TypicalPod> workload);

// An upper bound of FragMilli(node) - FragMilli(after) over every `after`
// that takes at most `most_drop` milli of the node's idle GPU (no GPU
// gains, CPU does not grow): a pod the node fits before keeps at most
// what it could not use, less nothing (share x min(drop, unusable)); one
// it does not fit fits no better after (share x drop). It holds for
// shapes counted by CPU too: what they can use (the smaller of the GPUs'
// milli they fit and their pods' reach) never grows, so their measure
// falls by at most the idle milli taken. Infinity when a share is
// negative.
double FragGainBound(const FragNode& node,
                     absl::Span<const TypicalPod> workload, int64_t most_drop);

}  // namespace deviceshare::fgd

#endif  // DEVICESHARE_POLICY_FGD_FRAG_MODEL_H_
