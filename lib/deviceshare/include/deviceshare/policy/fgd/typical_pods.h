// File: policy/fgd/typical_pods.h
//
// The typical workload FGD measures fragmentation against, built from the
// pods of a workload as FGD builds it from a trace: pods are grouped by
// shape (CPU milli, GPU milli, GPU count, accepted models; memory is not
// part of the shape), the shapes are taken most frequent first (equal
// counts: the larger shape first, comparing CPU, GPU milli, count, then the
// models as "A|B" text) until they cover `popularity_percent` of the pods,
// and their shares are renormalised to sum to 1. CPU-only pods count.
//
// Thread safety: a pure function.
#ifndef DEVICESHARE_POLICY_FGD_TYPICAL_PODS_H_
#define DEVICESHARE_POLICY_FGD_TYPICAL_PODS_H_

#include <vector>

#include "absl/types/span.h"
#include "deviceshare/policy/fgd/frag_model.h"

namespace deviceshare::fgd {

// FGD's setting for the trace replays (its code's default is 60).
inline constexpr int kTypicalPodPopularityPercent = 95;

// `pods`: one entry per pod (share ignored). Empty when `pods` is.
std::vector<TypicalPod> TypicalPodsOf(
    absl::Span<const TypicalPod> pods,
    int popularity_percent = kTypicalPodPopularityPercent);

}  // namespace deviceshare::fgd

#endif  // DEVICESHARE_POLICY_FGD_TYPICAL_PODS_H_
