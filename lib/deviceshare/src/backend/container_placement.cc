#include "deviceshare/backend/container_placement.h"

#include <algorithm>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "code_tally.h"
#include "deviceshare/model/model_match.h"

namespace deviceshare {
namespace {

using internal::CodeTally;

bool AnyEquals(const std::vector<std::string>& values, absl::string_view v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

struct Candidate {
  size_t position;
  GpuRank rank;  // the GPU policy's, of this GPU's offer
  const Gpu* gpu;
};

// `pending`: the pod's shares on that GPU before this offer.
Candidate CandidateOf(const PodRequest& request, const NodeState& node,
                      size_t position, const GpuOffer& offer,
                      const PendingShares& pending,
                      const PlacementPolicy& gpu_policy) {
  const Gpu& gpu = node.inventory().gpus[position];
  if (!gpu_policy.ranks_on_node()) {
    return Candidate{position, gpu_policy.RankGpu(offer.score, gpu), &gpu};
  }
  PendingShares shares = pending;
  shares.push_back(offer.share);
  return Candidate{position,
                   gpu_policy.RankGpuOnNode(request, node, position,
                                            ChargeOf(shares), offer.score),
                   &gpu};
}

// Best first, by the policy's rank.
bool Better(const Candidate& a, const Candidate& b) { return a.rank > b.rank; }

// Per GPU of a node, inline for nodes of up to 8 GPUs: a filter allocates
// nothing to rank or pick them.
using Candidates = absl::InlinedVector<Candidate, 8>;

// "3/4 InsufficientMemory, 1/4 GpuUnhealthy", most frequent first.
std::string Summary(const std::vector<GpuVerdict>& verdicts, size_t gpus) {
  std::map<ReasonCode, int> counts;
  for (const GpuVerdict& v : verdicts) ++counts[v.code];
  std::vector<std::pair<ReasonCode, int>> sorted(counts.begin(), counts.end());
  std::stable_sort(
      sorted.begin(), sorted.end(),
      [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> parts;
  for (const auto& [code, count] : sorted) {
    parts.push_back(
        absl::StrFormat("%d/%d %s", count, gpus, ReasonCodeName(code)));
  }
  return absl::StrJoin(parts, ", ");
}

ReasonCode MostFrequent(const std::vector<GpuVerdict>& verdicts) {
  CodeTally tally;
  for (const GpuVerdict& v : verdicts) tally.Add(v.code);
  return tally.top();
}

// The verdict to headline: the most frequent code, first GPU with it.
const GpuVerdict& Headline(const std::vector<GpuVerdict>& verdicts) {
  const ReasonCode top = MostFrequent(verdicts);
  for (const GpuVerdict& v : verdicts) {
    if (v.code == top) return v;
  }
  return verdicts.front();
}

absl::string_view UuidOf(const NodeState& node, int32_t gpu_index) {
  std::optional<size_t> position = node.FindGpuIndex(gpu_index);
  return position ? absl::string_view(node.inventory().gpus[*position].uuid)
                  : absl::string_view("?");
}

NodeFit Unfit(ReasonCode code, std::string message,
              std::vector<GpuVerdict> verdicts) {
  NodeFit fit;
  fit.code = code;
  fit.message = std::move(message);
  fit.gpu_verdicts = std::move(verdicts);
  return fit;
}

// The `want` of `ranked` (best first) the policy takes.
Candidates Pick(absl::Span<const Candidate> ranked, int32_t want,
                const PlacementPolicy& gpu_policy) {
  if (static_cast<int32_t>(ranked.size()) < want) return {};
  if (static_cast<int32_t>(ranked.size()) == want || !gpu_policy.picks_gpus()) {
    return Candidates(ranked.begin(), ranked.begin() + want);
  }
  std::vector<GpuCandidate> offered;
  offered.reserve(ranked.size());
  for (const Candidate& c : ranked) offered.push_back({c.gpu, c.rank});
  Candidates picked;
  for (size_t at : gpu_policy.PickGpus(offered, want)) {
    if (at < ranked.size()) picked.push_back(ranked[at]);
  }
  return static_cast<int32_t>(picked.size()) == want ? picked : Candidates{};
}

// Picks `want` candidates: the policy's pick of them, or with numa-bind its
// pick of the NUMA node whose best `want` rank highest by the first key
// (their summed score; a policy that ranks NUMA first thus takes the
// highest NUMA node that can serve). Empty if impossible. Sorts
// `candidates` best first.
Candidates Choose(Candidates& candidates, int32_t want, bool numa_bind,
                  const PlacementPolicy& gpu_policy) {
  std::sort(candidates.begin(), candidates.end(), Better);
  if (!numa_bind) return Pick(candidates, want, gpu_policy);
  std::map<int32_t, std::vector<Candidate>> by_numa;
  for (const Candidate& c : candidates) by_numa[c.gpu->numa_node].push_back(c);
  Candidates best;
  int64_t best_sum = 0;
  for (auto& [numa, group] : by_numa) {  // ascending NUMA: stable ties
    if (static_cast<int32_t>(group.size()) < want) continue;
    int64_t sum = 0;
    for (int32_t i = 0; i < want; ++i) sum += group[i].rank[0];
    if (best.empty() || sum > best_sum) {
      Candidates picked = Pick(group, want, gpu_policy);
      if (picked.empty()) continue;
      best_sum = sum;
      best = std::move(picked);
    }
  }
  return best;
}

}  // namespace

ReasonCode FilterListCode(const PodRequest& request, const Gpu& gpu) {
  if ((!request.use_models.empty() &&
       !ModelNamesAny(gpu.model, request.use_models)) ||
      (!request.avoid_models.empty() &&
       ModelNamesAny(gpu.model, request.avoid_models))) {
    return ReasonCode::kTypeMismatch;
  }
  if ((!request.avoid_uuids.empty() &&
       AnyEquals(request.avoid_uuids, gpu.uuid)) ||
      (!request.use_uuids.empty() && !AnyEquals(request.use_uuids, gpu.uuid))) {
    return ReasonCode::kUuidMismatch;
  }
  return ReasonCode::kFits;
}

GpuVerdict CheckGpuEligible(const PodRequest& request, const Gpu& gpu,
                            SharingMode mode) {
  const ReasonCode code = EligibilityCode(request, gpu, mode);
  std::string detail;
  if (code == ReasonCode::kGpuUnhealthy) {
    detail = "unhealthy";
  } else if (code == ReasonCode::kGpuCordoned) {
    detail = "listed in hami.io/device-cordon";
  } else if (code == ReasonCode::kModeMismatch) {
    detail = absl::StrFormat("gpu mode=%s want=%s", SharingModeName(gpu.mode),
                             SharingModeName(mode));
  } else if (code == ReasonCode::kTypeMismatch) {
    detail =
        !request.use_models.empty() &&
                !ModelNamesAny(gpu.model, request.use_models)
            ? absl::StrFormat("type=\"%s\" not in use-gputype=%s", gpu.model,
                              absl::StrJoin(request.use_models, ","))
            : absl::StrFormat("type=\"%s\" in nouse-gputype=%s", gpu.model,
                              absl::StrJoin(request.avoid_models, ","));
  } else if (code == ReasonCode::kUuidMismatch) {
    detail = AnyEquals(request.avoid_uuids, gpu.uuid)
                 ? "uuid in nouse-gpuuuid"
                 : "uuid not in use-gpuuuid";
  }
  return GpuVerdict{code, gpu.index, std::move(detail)};
}

namespace {

// Appends to `out` the grant for the share `taken` offers on `gpu`, built in
// place (no copy of the grant).
void AddGrant(const Gpu& gpu, SharingMode mode, const GpuOffer& taken,
              ContainerAllocation& out) {
  DeviceGrant& grant = out.devices.emplace_back();
  grant.uuid = gpu.uuid;
  grant.gpu_index = gpu.index;
  grant.mode = mode;
  grant.memory_mib = taken.share.memory_mib;
  grant.cores = taken.share.cores;
  grant.mig = taken.share.mig;
  grant.mig_action = taken.mig_action;
}

// Asks the GPU policy first (mutex, say): the offer of a GPU it refuses is
// that refusal; otherwise the backend's.
GpuOffer OfferIfAdmitted(const ContainerRequest& container, int32_t index,
                         size_t position, const NodeState& node,
                         const PlacementPolicy& gpu_policy, bool explain,
                         GpuOfferFn offer, PendingShares& pending) {
  const DeviceLedger& ledger = node.ledger(position);
  const ReasonCode admitted = gpu_policy.GpuAdmits(ledger, pending);
  if (admitted == ReasonCode::kFits) {
    return offer(container, index, position, pending);
  }
  GpuOffer refused;
  refused.verdict = GpuVerdict{
      admitted, ledger.gpu().index,
      explain ? absl::StrCat("gpu-scheduler-policy ", gpu_policy.name()) : ""};
  return refused;
}

// PlaceContainers' several_per_gpu path: `container` takes its gpu_count
// shares one at a time, each the best offer of any eligible GPU given the
// shares already taken. False (nothing kept) when a round finds none.
bool TakeOneAtATime(const PodRequest& request,
                    const ContainerRequest& container, int32_t index,
                    const NodeState& node, SharingMode mode,
                    const PlacementPolicy& gpu_policy, bool explain,
                    absl::Span<const GpuVerdict> eligible, GpuOfferFn offer,
                    absl::InlinedVector<PendingShares, 8>& pending,
                    ContainerAllocation& out) {
  // Positions whose pending this call grew.
  absl::InlinedVector<size_t, 8> taken_at;
  for (int32_t taken = 0; taken < container.gpu_count; ++taken) {
    std::optional<Candidate> best;
    GpuOffer best_offer;
    for (size_t pos = 0; pos < eligible.size(); ++pos) {
      if (!eligible[pos].fits()) continue;
      GpuOffer made = OfferIfAdmitted(container, index, pos, node, gpu_policy,
                                      explain, offer, pending[pos]);
      if (!made.verdict.fits()) continue;
      Candidate candidate =
          CandidateOf(request, node, pos, made, pending[pos], gpu_policy);
      if (!best || Better(candidate, *best)) {
        best = candidate;
        best_offer = std::move(made);
      }
    }
    if (!best) {
      for (size_t pos : taken_at) pending[pos].pop_back();
      out.devices.clear();
      return false;
    }
    taken_at.push_back(best->position);
    pending[best->position].push_back(best_offer.share);
    AddGrant(node.inventory().gpus[best->position], mode, best_offer, out);
  }
  return true;
}

}  // namespace

NodeFit PlaceContainers(const PodRequest& request, const NodeState& node,
                        SharingMode mode, const PlacementPolicy& gpu_policy,
                        GpuOfferFn offer, bool explain, bool several_per_gpu) {
  const size_t gpus = node.gpu_count();
  if (!request.AcceptsMode(mode)) {
    return Unfit(
        ReasonCode::kModeMismatch,
        absl::StrFormat("ModeMismatch pod wants %s, backend is %s",
                        request.mode ? SharingModeName(*request.mode)
                                     : absl::string_view(request.modes_text),
                        SharingModeName(mode)),
        {});
  }
  if (gpus == 0 && request.HasGpuRequest()) {
    return Unfit(ReasonCode::kNoGpus,
                 absl::StrFormat("NoGpus node=%s", node.name()), {});
  }
  // Per GPU, inline for nodes of up to 8 GPUs: no allocation per filter.
  absl::InlinedVector<GpuVerdict, 8> eligible(gpus);
  for (size_t pos = 0; pos < gpus; ++pos) {
    const Gpu& gpu = node.inventory().gpus[pos];
    if (explain) {
      eligible[pos] = CheckGpuEligible(request, gpu, mode);
    } else {  // no text: the code alone, the detail left empty
      eligible[pos].code = EligibilityCode(request, gpu, mode);
      eligible[pos].gpu_index = gpu.index;
    }
    if (eligible[pos].fits() && request.spread_group &&
        node.ledger(pos).UsedByGroup(request.group_key)) {
      eligible[pos] =
          GpuVerdict{ReasonCode::kGroupOnGpu, gpu.index,
                     explain ? absl::StrCat("group=", request.group_key) : ""};
    }
  }

  NodeFit fit;
  fit.allocation.containers.reserve(request.containers.size());
  // This pod's shares so far, per GPU position.
  absl::InlinedVector<PendingShares, 8> pending(gpus);
  Candidates candidates;
  // The refusals: their codes always, the verdicts (with text) only to
  // explain.
  CodeTally rejected_codes;
  std::vector<GpuVerdict> rejected;
  absl::InlinedVector<GpuOffer, 8> offers(gpus);

  for (size_t ci = 0; ci < request.containers.size(); ++ci) {
    const ContainerRequest& container = request.containers[ci];
    ContainerAllocation& out = fit.allocation.containers.emplace_back();
    out.container_index = static_cast<int32_t>(ci);
    out.name = container.name;
    out.is_init = container.is_init;
    if (!container.wants_gpu()) continue;

    if (static_cast<size_t>(container.gpu_count) > gpus && !several_per_gpu) {
      return Unfit(
          ReasonCode::kInsufficientGpus,
          absl::StrFormat("InsufficientGpus container=%s want=%d gpus=%d",
                          container.name, container.gpu_count, gpus),
          {});
    }
    candidates.clear();
    rejected.clear();
    rejected_codes = CodeTally();
    for (size_t pos = 0; pos < gpus; ++pos) {
      if (!eligible[pos].fits()) {
        rejected_codes.Add(eligible[pos].code);
        if (explain) rejected.push_back(eligible[pos]);
        continue;
      }
      GpuOffer made =
          OfferIfAdmitted(container, static_cast<int32_t>(ci), pos, node,
                          gpu_policy, explain, offer, pending[pos]);
      if (made.verdict.fits()) {
        offers[pos] = std::move(made);
        candidates.push_back(CandidateOf(request, node, pos, offers[pos],
                                         pending[pos], gpu_policy));
      } else {
        rejected_codes.Add(made.verdict.code);
        if (explain) rejected.push_back(std::move(made.verdict));
      }
    }

    const Candidates chosen =
        Choose(candidates, container.gpu_count, request.numa_bind, gpu_policy);
    if (chosen.empty() && several_per_gpu && !request.numa_bind &&
        !candidates.empty()) {
      if (TakeOneAtATime(request, container, static_cast<int32_t>(ci), node,
                         mode, gpu_policy, explain, eligible, offer, pending,
                         out)) {
        continue;
      }
    }
    if (chosen.empty() && !explain) {
      ReasonCode code =
          candidates.empty()
              ? rejected_codes.top()
              : (request.numa_bind && static_cast<int32_t>(candidates.size()) >=
                                          container.gpu_count
                     ? ReasonCode::kNumaNotFit
                     : ReasonCode::kInsufficientGpus);
      return Unfit(code, "", {});
    }
    if (chosen.empty()) {
      std::string summary = Summary(rejected, gpus);
      if (candidates.empty()) {
        const GpuVerdict& head = Headline(rejected);
        return Unfit(head.code,
                     absl::StrFormat("%s gpu=%s %s container=%s; %s",
                                     ReasonCodeName(head.code),
                                     UuidOf(node, head.gpu_index), head.detail,
                                     container.name, summary),
                     std::move(rejected));
      }
      if (request.numa_bind &&
          static_cast<int32_t>(candidates.size()) >= container.gpu_count) {
        return Unfit(
            ReasonCode::kNumaNotFit,
            absl::StrFormat("NumaNotFit container=%s want=%d usable=%d "
                            "but no NUMA node has %d",
                            container.name, container.gpu_count,
                            candidates.size(), container.gpu_count),
            std::move(rejected));
      }
      return Unfit(ReasonCode::kInsufficientGpus,
                   absl::StrFormat("InsufficientGpus container=%s want=%d "
                                   "usable=%d; %s",
                                   container.name, container.gpu_count,
                                   candidates.size(), summary),
                   std::move(rejected));
    }
    out.devices.reserve(chosen.size());
    for (const Candidate& c : chosen) {
      const GpuOffer& taken = offers[c.position];
      pending[c.position].push_back(taken.share);
      AddGrant(node.inventory().gpus[c.position], mode, taken, out);
    }
  }
  // Named only once it fits: a node that does not copies no names.
  fit.allocation.pod_uid = request.uid;
  fit.allocation.pod_key = request.Key();
  fit.allocation.node_name = node.name();
  return fit;
}

absl::Status CommitShares(const PodRequest& request,
                          const PodAllocation& allocation, SharingMode mode,
                          NodeState& node) {
  for (const ContainerAllocation& container : allocation.containers) {
    for (const DeviceGrant& grant : container.devices) {
      std::optional<size_t> position = node.FindGpu(grant.uuid);
      SharingMode gpu_mode =
          position ? node.inventory().gpus[*position].mode : mode;
      if (grant.mode != mode || gpu_mode != mode) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "pod %s container %d gpu %s: grant mode %s on a %s gpu, backend "
            "is %s",
            allocation.pod_key, container.container_index, grant.uuid,
            SharingModeName(grant.mode), SharingModeName(gpu_mode),
            SharingModeName(mode)));
      }
    }
  }
  auto by_gpu = node.SharesByGpu(allocation);
  if (!by_gpu.ok()) return by_gpu.status();
  std::vector<size_t> done;
  for (auto& [position, shares] : *by_gpu) {
    absl::Status status = node.AddPodToGpu(position, allocation.pod_uid, shares,
                                           request.group_key);
    if (!status.ok()) {
      for (size_t undo : done) {
        node.RemovePodFromGpu(undo, allocation.pod_uid);
      }
      return status;
    }
    done.push_back(position);
  }
  return absl::OkStatus();
}

void ReleaseShares(absl::string_view pod_uid, SharingMode mode,
                   NodeState& node) {
  for (size_t pos = 0; pos < node.gpu_count(); ++pos) {
    if (node.inventory().gpus[pos].mode != mode) continue;
    node.RemovePodFromGpu(pos, pod_uid);
  }
}

}  // namespace deviceshare
