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

// Whether the GPUs' briefs (model/gpu_brief.h) can stand in for their
// ledgers in AloneCode on `node`: every GPU runs `mode` and the pod names
// no model or uuid (whose lists the brief does not carry). A brief that is
// not complete still sends its GPU to the ledger.
bool BriefsAnswer(const PodRequest& request, const NodeState& node,
                  SharingMode mode) {
  return node.uniform_mode() == mode && !request.NamesGpuFilters();
}

// The GPU's health and cordon, EligibilityCode's checks a brief carries.
ReasonCode BriefHealthCode(const GpuBrief& brief) {
  if ((brief.flags & GpuBrief::kUnhealthy) != 0) {
    return ReasonCode::kGpuUnhealthy;
  }
  if ((brief.flags & GpuBrief::kCordoned) != 0) {
    return ReasonCode::kGpuCordoned;
  }
  return ReasonCode::kFits;
}

// DeviceLedger::CheckPodCode's checks of one share that is not MIG before
// its size and its own exclusivity matter: a MIG record or instances on
// the GPU, no free slot, a pod holding it alone.
ReasonCode BriefLedgerBlockCode(const GpuBrief& brief) {
  const uint32_t flags = brief.flags;
  if ((flags & GpuBrief::kHeldByMigRecord) != 0) {
    return ReasonCode::kPartitionTaken;
  }
  if ((flags & GpuBrief::kHasMigInstances) != 0) {
    return ReasonCode::kModeMismatch;
  }
  if (brief.used_slots + 1 > brief.slot_capacity) {
    return ReasonCode::kSplitExhausted;
  }
  if ((flags & GpuBrief::kHeldExclusively) != 0) {
    return ReasonCode::kExclusiveConflict;
  }
  return ReasonCode::kFits;
}

// AloneCode from the GPU's brief, for a node where BriefsAnswer: the same
// checks in the same order (EligibilityCode's health and cordon, the tenant
// limit for one slot, then DeviceLedger::CheckPodCode for one share that is
// not MIG), read from 24 bytes. GpuBriefTest holds the two equal.
ReasonCode BriefAloneCode(const GpuBrief& brief,
                          const ContainerRequest& container,
                          const TenantLimit& limit) {
  ReasonCode code = BriefHealthCode(brief);
  if (code != ReasonCode::kFits) return code;
  if (limit.max_tenants > 0 && limit.max_tenants < brief.slot_capacity &&
      brief.used_slots + 1 > limit.max_tenants) {
    return limit.code;
  }
  code = BriefLedgerBlockCode(brief);
  if (code != ReasonCode::kFits) return code;
  if (container.exclusive() &&
      (brief.flags & GpuBrief::kExclusiveByCores) != 0 &&
      (brief.flags & GpuBrief::kHasPods) != 0) {
    return ReasonCode::kExclusiveConflict;
  }
  int64_t memory = container.memory_mib > 0
                       ? container.memory_mib
                       : container.MemoryOn(brief.memory_capacity_mib);
  int32_t cores = container.cores;
  if (container.is_init) {
    memory = std::max<int64_t>(0, memory);
    cores = std::max(0, cores);
  }
  if (brief.free_memory_mib < memory) return ReasonCode::kInsufficientMemory;
  if (brief.free_cores < cores) return ReasonCode::kInsufficientCores;
  if (cores == 0 && brief.free_cores <= 0) {
    return ReasonCode::kComputeExhausted;
  }
  return ReasonCode::kFits;
}

// The code of the GPU of `brief` for any share that is not MIG, when it
// refuses it whatever its size: BriefAloneCode's checks before memory and
// cores, without the tenant limit. kFits when it may take one.
ReasonCode BlockedBriefCode(const GpuBrief& brief) {
  const ReasonCode code = BriefHealthCode(brief);
  return code != ReasonCode::kFits ? code : BriefLedgerBlockCode(brief);
}

// AloneCode of the GPU at `position`, from its brief where `briefs` says
// the node's briefs answer and this one is complete.
ReasonCode AloneCodeAt(const PodRequest& request,
                       const ContainerRequest& container, int32_t index,
                       const NodeState& node, size_t position, SharingMode mode,
                       const TenantLimit& limit, bool briefs) {
  if (briefs) {
    const GpuBrief& brief = node.briefs()[position];
    if (brief.complete()) return BriefAloneCode(brief, container, limit);
  }
  return AloneCode(request, container, index, node.ledger(position), mode,
                   limit);
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
  const bool briefs = BriefsAnswer(request, node, mode);
  for (size_t pos = 0; pos < node.gpu_count(); ++pos) {
    ReasonCode code =
        AloneCodeAt(request, *only, index, node, pos, mode, limit, briefs);
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

ReasonCode PlaceSharesCode(const PodRequest& request, const NodeState& node,
                           SharingMode mode, const PlacementPolicy& gpu_policy,
                           const TenantLimit& limit) {
  if (request.AcceptsMode(mode)) {
    std::optional<ReasonCode> code =
        QuietSingleContainerCode(request, node, mode, limit);
    if (code) return *code;
  }
  return SearchShares(request, node, mode, gpu_policy, /*explain=*/false, limit)
      .code;
}

ReasonCode SharesBlockedCode(const NodeState& node, SharingMode mode) {
  if (node.uniform_mode() != mode || node.gpu_count() == 0) {
    return ReasonCode::kFits;
  }
  CodeTally blocked;
  for (const GpuBrief& brief : node.briefs()) {
    if (!brief.complete()) return ReasonCode::kFits;
    const ReasonCode code = BlockedBriefCode(brief);
    if (code == ReasonCode::kFits) return code;
    blocked.Add(code);
  }
  return blocked.top();
}

bool SharesBlockedCodeApplies(const PodRequest& request, SharingMode mode) {
  if (!request.AcceptsMode(mode) || request.HasClaims() ||
      request.NamesGpuFilters()) {
    return false;
  }
  int gpu_containers = 0;
  for (const ContainerRequest& container : request.containers) {
    if (container.wants_gpu()) ++gpu_containers;
  }
  return gpu_containers == 1;
}

bool MaySharesFit(const PodRequest& request, const NodeState& node,
                  SharingMode mode, const TenantLimit& limit) {
  if (!request.AcceptsMode(mode)) return false;
  const bool briefs = BriefsAnswer(request, node, mode);
  for (size_t i = 0; i < request.containers.size(); ++i) {
    const ContainerRequest& container = request.containers[i];
    if (!container.wants_gpu()) continue;
    int32_t usable = 0;
    for (size_t pos = 0; pos < node.gpu_count() && usable < container.gpu_count;
         ++pos) {
      if (AloneCodeAt(request, container, static_cast<int32_t>(i), node, pos,
                      mode, limit, briefs) == ReasonCode::kFits) {
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
    // Its memory and its cores on one GPU (AloneCode asks a share of
    // no cores for one free percent); MemoryWithCores is at most the
    // headroom's largest free memory, so that bound is checked too.
    const int32_t cores = std::max(container.cores, 1);
    const int64_t memory = container.MemoryOn(shape.min_gpu_memory_mib);
    if (headroom.cores < cores || headroom.MemoryWithCores(cores) < memory) {
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
