#include "deviceshare/backend/fractional_share.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "code_tally.h"
#include "deviceshare/backend/container_placement.h"
#include "deviceshare/policy/scoring.h"

namespace deviceshare {
namespace {

using internal::CodeTally;

// Sets `share` (fresh, no MIG slot) to the share `container` asks of the
// GPU of `ledger`: its memory on that card and its cores. In place: the
// search fills the offer it returns.
void SetWholeShare(const ContainerRequest& container, int32_t index,
                   const DeviceLedger& ledger, ContainerShare& share) {
  share.container_index = index;
  share.is_init = container.is_init;
  share.memory_mib = container.MemoryOn(ledger.memory_capacity_mib());
  share.cores = container.cores;
}

// Whether GPU `ledger` could take `container` (index `index`) if it were the
// pod's only share there: the eligibility checks, then the ledger's.
ReasonCode AloneCode(const PodRequest& request,
                     const ContainerRequest& container, int32_t index,
                     const DeviceLedger& ledger, SharingMode mode,
                     const TenantLimit& limit) {
  ReasonCode code = EligibilityCode(request, ledger.gpu(), mode);
  if (code != ReasonCode::kFits) return code;
  code = TenantLimitCode(limit, ledger, 1);
  if (code != ReasonCode::kFits) return code;
  ContainerShare share;
  SetWholeShare(container, index, ledger, share);
  return ledger.CheckPodCode(absl::MakeConstSpan(&share, 1));
}

// The failure code PlaceShares gives a pod with a single GPU container,
// without allocating: per GPU the same checks in the same order, then the
// same choice of code. nullopt when the pod has another shape or enough GPUs
// pass (the full search decides then).
std::optional<ReasonCode> QuietSingleContainerCode(const PodRequest& request,
                                                   const NodeState& node,
                                                   SharingMode mode,
                                                   const TenantLimit& limit) {
  const ContainerRequest* only = nullptr;
  int32_t index = 0;
  for (size_t i = 0; i < request.containers.size(); ++i) {
    if (!request.containers[i].wants_gpu()) continue;
    if (only != nullptr) return std::nullopt;
    only = &request.containers[i];
    index = static_cast<int32_t>(i);
  }
  if (only == nullptr ||
      static_cast<size_t>(only->gpu_count) > node.gpu_count()) {
    return std::nullopt;
  }
  CodeTally rejected;
  int32_t usable = 0;
  for (size_t pos = 0; pos < node.gpu_count(); ++pos) {
    ReasonCode code =
        AloneCode(request, *only, index, node.ledger(pos), mode, limit);
    if (code == ReasonCode::kFits) {
      ++usable;
    } else {
      rejected.Add(code);
    }
  }
  if (usable >= only->gpu_count) return std::nullopt;
  return usable == 0 ? rejected.top() : ReasonCode::kInsufficientGpus;
}

// Sets `verdict` (fresh) to the offer of the GPU of `ledger` for
// `shares`' last share: the tenant limit first, then the ledger. Without
// `explain` the text stays empty and untouched.
void CheckShares(const DeviceLedger& ledger,
                 absl::Span<const ContainerShare> shares,
                 const TenantLimit& limit, bool explain, GpuVerdict& verdict) {
  const int32_t want = limit.max_tenants > 0 ? ChargeOf(shares).slots : 0;
  const ReasonCode limited = TenantLimitCode(limit, ledger, want);
  verdict.gpu_index = ledger.gpu().index;
  if (limited != ReasonCode::kFits) {
    verdict.code = limited;
    if (explain) {
      verdict.detail =
          absl::StrFormat("%s=%d max=%d want=%d", limit.noun,
                          ledger.used_slots(), limit.max_tenants, want);
    }
    return;
  }
  if (explain) {
    verdict = ledger.CheckPod(shares);
  } else {
    verdict.code = ledger.CheckPodCode(shares);
  }
}

NodeFit CodeOnly(ReasonCode code) {
  NodeFit fit;
  fit.code = code;
  return fit;
}

// What a placement of `request` charges a node whose cards are `card_mib`
// large: every GPU container's share, or with `apps_only` those of the app
// containers alone (init containers may share the app containers' charge).
Usage ChargeBound(const PodRequest& request, int64_t card_mib, bool apps_only) {
  Usage charge;
  for (const ContainerRequest& container : request.containers) {
    if (!container.wants_gpu() || (apps_only && container.is_init)) continue;
    charge.memory_mib += container.gpu_count * container.MemoryOn(card_mib);
    charge.cores += int64_t{container.gpu_count} * container.cores;
    charge.slots += container.gpu_count;
  }
  return charge;
}

int UtilisationWith(const NodeState& node, const Usage& charge) {
  Usage after = NodeUsage(node);
  after.memory_mib += charge.memory_mib;
  after.cores += charge.cores;
  after.slots += charge.slots;
  return UtilisationPercent(after, NodeCapacity(node));
}

int64_t CeilPercent(int64_t part, int64_t whole) {
  return whole <= 0 ? 0 : (part * 100 + whole - 1) / whole;
}

// PlaceShares' search: each GPU offers the container its whole share
// beside the pod's shares already there.
NodeFit SearchShares(const PodRequest& request, const NodeState& node,
                     SharingMode mode, const PlacementPolicy& gpu_policy,
                     bool explain, const TenantLimit& limit) {
  return PlaceContainers(
      request, node, mode, gpu_policy,
      [&](const ContainerRequest& container, int32_t index, size_t position,
          PendingShares& pending) {
        const DeviceLedger& ledger = node.ledger(position);
        GpuOffer offer;
        SetWholeShare(container, index, ledger, offer.share);
        // The pod's first share on this GPU (the common case) is checked
        // where it is, without a copy beside the others.
        const bool alone = pending.empty();
        if (!alone) pending.push_back(offer.share);
        const absl::Span<const ContainerShare> shares =
            alone ? absl::MakeConstSpan(&offer.share, 1)
                  : absl::MakeConstSpan(pending);
        CheckShares(ledger, shares, limit, explain, offer.verdict);
        if (offer.verdict.fits()) {
          offer.score = gpu_policy.GpuScore(ledger, ChargeOf(shares));
        }
        if (!alone) pending.pop_back();
        return offer;
      },
      explain);
}

}  // namespace

NodeFit PlaceShares(const PodRequest& request, const NodeState& node,
                    SharingMode mode, const PlacementPolicy& gpu_policy,
                    bool explain, const TenantLimit& limit) {
  if (explain) {
    // The GPUs' texts matter only when the node does not fit: a placement
    // found quietly is the one found with text (the contract suite checks
    // it), and most nodes filtered with explain fit. Straight to the search:
    // when QuietSingleContainerCode finds a code, the search fails too
    // (each GPU it takes passes the same checks), and the text search
    // follows either way.
    NodeFit quiet = SearchShares(request, node, mode, gpu_policy,
                                 /*explain=*/false, limit);
    if (quiet.fits()) return quiet;
  } else if (request.AcceptsMode(mode)) {
    std::optional<ReasonCode> code =
        QuietSingleContainerCode(request, node, mode, limit);
    if (code) return CodeOnly(*code);
  }
  return SearchShares(request, node, mode, gpu_policy, explain, limit);
}

bool MaySharesFit(const PodRequest& request, const NodeState& node,
                  SharingMode mode, const TenantLimit& limit) {
  if (!request.AcceptsMode(mode)) return false;
  for (size_t i = 0; i < request.containers.size(); ++i) {
    const ContainerRequest& container = request.containers[i];
    if (!container.wants_gpu()) continue;
    int32_t usable = 0;
    for (size_t pos = 0; pos < node.gpu_count() && usable < container.gpu_count;
         ++pos) {
      if (AloneCode(request, container, static_cast<int32_t>(i),
                    node.ledger(pos), mode, limit) == ReasonCode::kFits) {
        ++usable;
      }
    }
    if (usable < container.gpu_count) return false;
  }
  return true;
}

bool MaySharesFitHeadroom(const PodRequest& request, const NodeShape& shape,
                          const GpuHeadroom& headroom) {
  for (const ContainerRequest& container : request.containers) {
    if (!container.wants_gpu()) continue;
    if (headroom.cores < std::max(container.cores, 1) ||
        headroom.memory_mib < container.MemoryOn(shape.min_gpu_memory_mib)) {
      return false;
    }
    // An exclusive share needs a GPU no pod holds (DeviceLedger).
    if (container.cores >= 100 && headroom.idle_gpus < container.gpu_count) {
      return false;
    }
  }
  return true;
}

int ShareScoreUpperBound(const PlacementPolicy& node_policy,
                         const PodRequest& request, const NodeState& node) {
  auto least = [&] {
    return UtilisationWith(node, ChargeBound(request, node.min_gpu_memory_mib(),
                                             /*apps_only=*/true));
  };
  auto most = [&] {
    return UtilisationWith(node, ChargeBound(request, node.max_gpu_memory_mib(),
                                             /*apps_only=*/false));
  };
  return node_policy.ScoreBound(UtilisationRange{least, most});
}

int ShareShapeScoreBound(const PlacementPolicy& node_policy,
                         const PodRequest& request, const NodeShape& shape,
                         int utilisation_percent) {
  // Utilisation only grows with a placement. The three percents summed to
  // at most 3u + 2 before; each grows by at most the rounded-up percent of
  // its charge (floor(a + b) <= floor(a) + ceil(b)).
  auto least = [&] { return utilisation_percent; };
  auto most = [&] {
    const Usage charge =
        ChargeBound(request, shape.max_gpu_memory_mib, /*apps_only=*/false);
    const int64_t sum = 3 * int64_t{utilisation_percent} + 2 +
                        CeilPercent(charge.memory_mib, shape.memory_mib) +
                        CeilPercent(charge.cores, shape.cores) +
                        CeilPercent(charge.slots, shape.slots);
    return static_cast<int>(std::min<int64_t>(100, sum / 3));
  };
  return node_policy.ScoreBound(UtilisationRange{least, most});
}

}  // namespace deviceshare
