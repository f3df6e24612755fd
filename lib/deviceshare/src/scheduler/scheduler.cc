#include "deviceshare/scheduler/scheduler.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deviceshare/backend/container_edits.h"
#include "deviceshare/k8s/pod_annotations.h"
#include "deviceshare/model/gpu_quota.h"
#include "deviceshare/status_macros.h"
#include "filter_walk.h"
#include "twin_classes.h"
#include "verdict_memory.h"

namespace deviceshare {
namespace {

using internal::FilterForShape;
using internal::Found;
using internal::RememberedFit;
using internal::ScoresVersion;
using internal::VerdictMemory;
using internal::WithoutAllocation;

NodeFit QuotaUnfit(const std::string& why) {
  NodeFit fit;
  fit.code = ReasonCode::kQuotaExceeded;
  fit.message = why;
  return fit;
}

// One verdict per named node (every node, by name, when none are named)
// from `verdict_of`; a name the state does not know says so instead.
// `Name`: std::string or absl::string_view.
template <typename Name, typename VerdictOf>
std::vector<NodeVerdict> VerdictsOfNodes(const ClusterState& state,
                                         absl::Span<const Name> names,
                                         VerdictOf verdict_of) {
  std::vector<NodeVerdict> verdicts;
  if (names.empty()) {
    verdicts.reserve(state.nodes_by_name().size());
    for (const NodeState* node : state.nodes_by_name()) {
      verdicts.push_back(verdict_of(*node));
    }
    return verdicts;
  }
  verdicts.reserve(names.size());
  for (const Name& name : names) {
    const NodeState* node = state.FindNode(name);
    verdicts.push_back(node == nullptr ? DecisionPath::UnknownNode(name)
                                       : verdict_of(*node));
  }
  return verdicts;
}

// Every named node (every node when none is named) refuses the pod: its
// namespace's GPU quota would be exceeded (`why`).
template <typename Name>
std::vector<NodeVerdict> QuotaRefusedVerdicts(const ClusterState& state,
                                              absl::Span<const Name> names,
                                              const std::string& why) {
  return VerdictsOfNodes(state, names, [&why](const NodeState& node) {
    NodeVerdict verdict;
    verdict.node = node.name();
    verdict.fit = QuotaUnfit(why);
    return verdict;
  });
}

// What a host that holds the names keeps of `verdict`.
Scheduler::BriefVerdict BriefOf(const NodeVerdict& verdict) {
  Scheduler::BriefVerdict brief;
  brief.code = verdict.fit.code;
  if (verdict.fit.fits()) {
    brief.score = verdict.score;
    brief.stranded_percent = verdict.stranded_percent;
    brief.mode = verdict.mode;
  } else {
    brief.reason = verdict.fit.message.empty() ? verdict.fit.Reason()
                                               : verdict.fit.message;
  }
  return brief;
}

// The filter step for one pod and node, from memory when the node is
// unchanged: the pod's own verdict, else FilterForShape's, remembered for
// the pod too.
NodeVerdict FilterRemembered(const DecisionPath& path, const PodCycle& cycle,
                             const ClusterState& state, const NodeState& node,
                             VerdictMemory::PodVerdicts& pod,
                             VerdictMemory::ShapeVerdicts& shape,
                             internal::TwinFits& twins) {
  const uint64_t version = state.NodeVersion(node);
  VerdictMemory::PodEntry& mine = pod[&node];
  if (mine.version != version) {
    VerdictMemory::ShapeEntry fit;
    NodeVerdict fresh;
    mine.verdict =
        FilterForShape(path, cycle, node, version, shape, twins, fit, fresh)
            ? RememberedFit(node, fit)
            : std::move(fresh);
    mine.version = version;
  }
  return mine.verdict;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(
    const Config& config, const BackendRegistry& backends) {
  return Create(config, backends, BuiltinPolicies());
}

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(
    const Config& config, const BackendRegistry& backends,
    const PolicyRegistry& policies, const Clock* clock,
    std::function<std::string()> new_share_id) {
  DS_ASSIGN_OR_RETURN(BackendSet backend_set,
                      BackendSet::Create(backends, config));
  DS_ASSIGN_OR_RETURN(PolicySet policy_set,
                      PolicySet::Create(policies, config));
  return std::unique_ptr<Scheduler>(new Scheduler(
      config, std::move(backend_set), std::move(policy_set),
      clock != nullptr ? clock : &RealClock(), std::move(new_share_id)));
}

Scheduler::Scheduler(Config config, BackendSet backends, PolicySet policies,
                     const Clock* clock,
                     std::function<std::string()> new_share_id)
    : config_(std::move(config)),
      backends_(std::move(backends)),
      policies_(std::move(policies)),
      clock_(clock),
      path_(&config_, &backends_, &policies_),
      state_(&backends_, std::move(new_share_id)),
      memory_(std::make_unique<VerdictMemory>()),
      twin_classes_(std::make_unique<internal::TwinClasses>()) {}

Scheduler::~Scheduler() = default;

absl::StatusOr<Decision> Scheduler::Schedule(const PodRequest& request,
                                             const ScheduleOptions& options) {
  absl::MutexLock lock(&mu_);
  if (const PodRecord* existing = state_.FindPod(request.uid)) {
    return absl::AlreadyExistsError(absl::StrFormat(
        "pod %s (uid %s) is already placed on node %s", request.Key(),
        request.uid, existing->allocation.node_name));
  }
  DS_ASSIGN_OR_RETURN(const PodCycle cycle, path_.PreFilter(request, &state_));
  if (auto why = QuotaRefusal(request, LeastQuotaUseOf(request))) {
    return QuotaRefused(*why, options);
  }
  std::optional<NodeVerdict> best;
  // Over every node by the index: the GPU shape's bucket tallies rule out
  // the buckets where its GPUs fit nowhere, and explain a failure from
  // them. Without any tallies a decision needs no key.
  BucketTallies* tallies = nullptr;
  bool searched_index = false;
  if (!options.candidates.empty()) {
    best = BestOf(cycle, options.candidates);
  } else if (request.HasClaims()) {
    best = SearchClaims(cycle);
  } else {
    if (!tallies_.empty()) {
      tallies = FindTallies(TallyKeyOf(cycle), ScoresVersion(policies_, cycle));
    }
    best = path_.Search(cycle, state_, tallies);
    searched_index = true;
  }
  if (!best) {
    Decision decision;
    // A GPU shape's tallies are kept from its second failure: most shapes
    // that fail once never fail again, and keeping theirs would only churn
    // memory.
    if (searched_index && options.count_reasons && tallies == nullptr) {
      std::string key = TallyKeyOf(cycle);
      if (failed_once_.erase(key) > 0) {
        tallies = &KeepTallies(std::move(key), ScoresVersion(policies_, cycle));
      } else {
        if (failed_once_.size() >= kMaxFailedOnceShapes) failed_once_.clear();
        failed_once_.insert(std::move(key));
      }
    }
    // Over every node: bucket by bucket, from the index.
    if (searched_index) {
      path_.ExplainAll(cycle, state_, options, tallies, decision);
      return decision;
    }
    if (options.candidates.empty()) {
      path_.Explain(cycle, state_.nodes_by_name(), options, decision);
      return decision;
    }
    std::vector<const NodeState*> known;
    for (const std::string& name : options.candidates) {
      const NodeState* node = state_.FindNode(name);
      if (node != nullptr) {
        known.push_back(node);
      } else {
        decision.reasons[name] = DecisionPath::UnknownNode(name).fit.message;
        ++decision.reason_counts[std::string(
            ReasonCodeName(ReasonCode::kNodeUnknown))];
      }
    }
    std::sort(known.begin(), known.end(),
              [](const NodeState* a, const NodeState* b) {
                return a->name() < b->name();
              });
    path_.Explain(cycle, known, options, decision);
    return decision;
  }
  if (auto why = QuotaRefusal(request, QuotaUseOf(best->fit.allocation))) {
    return QuotaRefused(*why, options);
  }
  DS_RETURN_IF_ERROR(
      state_.AddPod(request, best->fit.allocation, &best->claims));
  std::vector<ClaimDecision> claims = ClaimsOf(request, *best);
  return DecisionFor(request, *std::move(best), std::move(claims),
                     options.annotations);
}

std::string Scheduler::TallyKeyOf(const PodCycle& cycle) {
  std::string key = internal::GpuShapeKey(cycle.pod());
  // The backends that filter it: a mode first used anywhere changes them.
  for (const SharingBackend* backend : cycle.backends) {
    absl::StrAppend(&key, "\x1f", SharingModeName(backend->mode()));
  }
  return key;
}

BucketTallies* Scheduler::FindTallies(const std::string& key,
                                      uint64_t scores_version) {
  auto it = tallies_.find(key);
  if (it == tallies_.end()) return nullptr;
  ShapeTallies& kept = it->second;
  // Which GPUs a policy that learns picks for one container may decide
  // whether the next fits: its codes hold for the version they were
  // taken at.
  if (kept.scores_version != scores_version) {
    kept.tallies = BucketTallies();
    kept.scores_version = scores_version;
  }
  kept.last_used = ++tally_uses_;
  return &kept.tallies;
}

BucketTallies& Scheduler::KeepTallies(std::string key,
                                      uint64_t scores_version) {
  if (tallies_.size() >= kMaxTalliedShapes) {
    auto least_recent = std::min_element(
        tallies_.begin(), tallies_.end(), [](const auto& a, const auto& b) {
          return a.second.last_used < b.second.last_used;
        });
    tallies_.erase(least_recent);
  }
  ShapeTallies& kept = tallies_[std::move(key)];
  kept.scores_version = scores_version;
  kept.last_used = ++tally_uses_;
  return kept.tallies;
}

std::vector<Scheduler::RankedNode> Scheduler::RankClaimCandidates(
    const PodCycle& cycle) const {
  const dra::DraCluster& dra = state_.dra();
  // The bounds describe the claims alone: a pod that also asks for
  // annotated GPUs, or whose claims cannot be read, is ranked by name.
  const bool bounded =
      cycle.claims_unready.empty() && !cycle.pod().HasGpuRequest();
  std::vector<const dra::ResourceClaim*> pending;
  for (const std::string& key : cycle.claim_keys) {
    const dra::ClaimEntry* entry = dra.FindClaim(key);
    if (entry != nullptr && !entry->allocation)
      pending.push_back(&entry->claim);
  }
  std::vector<RankedNode> ranked;
  dra::BoundMemo memo;
  for (const NodeState* node : DecisionPath::ClaimCandidates(cycle, state_)) {
    int bound = 100;
    if (bounded) {
      const dra::ClaimsBound claims = dra.Bound(pending, node->name(), memo);
      if (!claims.may_fit) continue;
      auto least = [&claims] { return claims.utilisation_now; };
      auto most = [&claims] { return claims.utilisation_most; };
      bound = std::min(100, cycle.placement.node_policy->ScoreBound(
                                UtilisationRange{least, most}));
    }
    ranked.push_back(RankedNode{bound, node});
  }
  // Candidates come by name: the stable sort keeps names ascending within
  // a bound, the order BetterVerdict breaks ties in.
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const RankedNode& a, const RankedNode& b) {
                     return a.bound > b.bound;
                   });
  return ranked;
}

std::optional<NodeVerdict> Scheduler::SearchClaims(const PodCycle& cycle) {
  const std::string shape = ShapeOf(cycle.pod());
  const NodeState* best = nullptr;
  NodeVerdict best_key;  // what BetterVerdict compares of the best so far
  std::optional<NodeVerdict> best_fresh;
  {
    absl::MutexLock memory_lock(&memory_mu_);
    VerdictMemory::ShapeVerdicts& shared =
        memory_->ForShape(shape, ScoresVersion(policies_, cycle));
    for (const RankedNode& candidate : RankClaimCandidates(cycle)) {
      const NodeState& node = *candidate.node;
      // Bounds descend: a node bounded below the best score cannot win,
      // nor one bounded at it with a larger name (names ascend).
      if (best != nullptr && best_key.stranded_percent == 0 &&
          (candidate.bound < best_key.score ||
           (candidate.bound == best_key.score && node.name() > best->name()))) {
        break;
      }
      const uint64_t version = state_.NodeVersion(node);
      VerdictMemory::ShapeEntry& entry = shared[&node];
      std::optional<NodeVerdict> fresh;
      if (entry.version != version) {
        fresh = path_.Filter(cycle, node, /*explain=*/false);
        entry =
            VerdictMemory::ShapeEntry{version, fresh->fit.code, fresh->score,
                                      fresh->stranded_percent, fresh->mode};
      }
      if (entry.code != ReasonCode::kFits) continue;
      NodeVerdict key;
      key.node = node.name();
      key.score = entry.score;
      key.stranded_percent = entry.stranded_percent;
      if (best == nullptr || BetterVerdict(key, best_key)) {
        best = &node;
        best_key = std::move(key);
        best_fresh = std::move(fresh);
      }
    }
  }
  if (best == nullptr) return std::nullopt;
  // The allocations are the pod's own (share ids): filter the winner for
  // them unless it was just filtered.
  if (!best_fresh) best_fresh = path_.Filter(cycle, *best, /*explain=*/true);
  if (!best_fresh->fit.fits()) return std::nullopt;
  return best_fresh;
}

std::string Scheduler::ShapeOf(const PodRequest& request) const {
  std::string shape = internal::ShapeKey(request);
  for (const PodClaim& claim : request.claims) {
    shape += '\x1e';
    if (claim.claim_name.empty()) {
      absl::StrAppend(&shape, "template:", claim.template_name);
    } else {
      shape += state_.dra().FilterShape(
          dra::ClaimKey(request.namespace_name, claim.claim_name));
    }
  }
  return shape;
}

std::vector<ClaimDecision> Scheduler::ClaimsOf(
    const PodRequest& request, const NodeVerdict& placed) const {
  std::vector<ClaimDecision> claims;
  for (const PodClaim& claim : request.claims) {
    ClaimDecision decision;
    decision.pod_claim = claim.name;
    decision.claim_key =
        dra::ClaimKey(request.namespace_name, claim.claim_name);
    decision.newly_allocated = placed.claims.contains(decision.claim_key);
    // The committed allocation: Reserve gave its shares their ids.
    if (const dra::ClaimEntry* entry =
            state_.dra().FindClaim(decision.claim_key);
        entry != nullptr && entry->allocation) {
      decision.allocation = *entry->allocation;
    }
    claims.push_back(std::move(decision));
  }
  return claims;
}

std::optional<NodeVerdict> Scheduler::BestOf(
    const PodCycle& cycle, absl::Span<const std::string> candidates) const {
  std::optional<NodeVerdict> best;
  for (const std::string& name : candidates) {
    const NodeState* node = state_.FindNode(name);
    if (node == nullptr) continue;
    NodeVerdict verdict = path_.Filter(cycle, *node, /*explain=*/true);
    if (verdict.fit.fits() && (!best || BetterVerdict(verdict, *best))) {
      best = std::move(verdict);
    }
  }
  return best;
}

Decision Scheduler::DecisionFor(const PodRequest& request, NodeVerdict placed,
                                std::vector<ClaimDecision> claims,
                                bool annotations) const {
  Decision decision;
  decision.claims = std::move(claims);
  decision.score = placed.score;
  decision.mode = placed.mode;
  decision.mode_choice = std::move(placed.mode_choice);
  if (annotations) {
    decision.annotations =
        AllocationAnnotations(placed.fit.allocation, request.dialect,
                              clock_->Now(), config_.device.memory_factor);
  }
  decision.allocation = std::move(placed.fit.allocation);
  return decision;
}

absl::StatusOr<std::vector<NodeVerdict>> Scheduler::Filter(
    const PodRequest& request, absl::Span<const std::string> node_names) const {
  absl::ReaderMutexLock lock(&mu_);
  DS_ASSIGN_OR_RETURN(const PodCycle cycle, path_.PreFilter(request, &state_));
  if (auto why = QuotaRefusal(request, LeastQuotaUseOf(request))) {
    return QuotaRefusedVerdicts(state_, node_names, *why);
  }
  const std::string shape = ShapeOf(request);
  absl::MutexLock memory_lock(&memory_mu_);
  const uint64_t scores = ScoresVersion(policies_, cycle);
  VerdictMemory::PodVerdicts& pod = memory_->ForPod(request.uid, shape, scores);
  VerdictMemory::ShapeVerdicts& shared = memory_->ForShape(shape, scores);
  internal::TwinFits twins(state_, request, *twin_classes_);
  return VerdictsOfNodes(state_, node_names, [&](const NodeState& node) {
    return WithoutAllocation(
        FilterRemembered(path_, cycle, state_, node, pod, shared, twins));
  });
}

template <typename Emit>
void Scheduler::WalkRemembered(const PodCycle& cycle,
                               absl::Span<const absl::string_view> node_names,
                               Emit emit) const {
  const PodRequest& request = cycle.pod();
  const std::string shape = ShapeOf(request);
  absl::MutexLock memory_lock(&memory_mu_);
  const uint64_t scores = ScoresVersion(policies_, cycle);
  internal::TwinFits twins(state_, request, *twin_classes_);
  internal::WalkForReserve(path_, cycle, state_, node_names,
                           memory_->ForPod(request.uid, shape, scores),
                           memory_->ForShape(shape, scores), twins, emit);
}

absl::StatusOr<std::vector<NodeVerdict>> Scheduler::FilterForReserve(
    const PodRequest& request,
    absl::Span<const absl::string_view> node_names) const {
  absl::ReaderMutexLock lock(&mu_);
  DS_ASSIGN_OR_RETURN(const PodCycle cycle, path_.PreFilter(request, &state_));
  if (auto why = QuotaRefusal(request, LeastQuotaUseOf(request))) {
    return QuotaRefusedVerdicts(state_, node_names, *why);
  }
  std::vector<NodeVerdict> verdicts;
  verdicts.reserve(node_names.empty() ? state_.nodes_by_name().size()
                                      : node_names.size());
  WalkRemembered(cycle, node_names,
                 [&verdicts](absl::string_view name, const NodeState* node,
                             const Found* found) {
                   if (node == nullptr) {
                     verdicts.push_back(DecisionPath::UnknownNode(name));
                   } else if (found->full != nullptr) {
                     verdicts.push_back(WithoutAllocation(*found->full));
                   } else {
                     verdicts.push_back(RememberedFit(*node, found->fit));
                   }
                 });
  return verdicts;
}

absl::StatusOr<std::vector<Scheduler::BriefVerdict>> Scheduler::FilterBriefly(
    const PodRequest& request,
    absl::Span<const absl::string_view> node_names) const {
  absl::ReaderMutexLock lock(&mu_);
  DS_ASSIGN_OR_RETURN(const PodCycle cycle, path_.PreFilter(request, &state_));
  std::vector<BriefVerdict> verdicts;
  if (node_names.empty()) return verdicts;
  if (auto why = QuotaRefusal(request, LeastQuotaUseOf(request))) {
    for (const NodeVerdict& verdict :
         QuotaRefusedVerdicts(state_, node_names, *why)) {
      verdicts.push_back(BriefOf(verdict));
    }
    return verdicts;
  }
  verdicts.reserve(node_names.size());
  WalkRemembered(
      cycle, node_names,
      [&verdicts](absl::string_view name, const NodeState* node,
                  const Found* found) {
        if (node == nullptr) {
          verdicts.push_back(BriefOf(DecisionPath::UnknownNode(name)));
        } else if (found->full != nullptr) {
          verdicts.push_back(BriefOf(*found->full));
        } else {
          BriefVerdict& brief = verdicts.emplace_back();
          brief.score = found->fit.score;
          brief.stranded_percent = found->fit.stranded_percent;
          brief.mode = found->fit.mode;
        }
      });
  return verdicts;
}

absl::StatusOr<NodeVerdict> Scheduler::FilterNode(
    const PodRequest& request, const std::string& node) const {
  DS_ASSIGN_OR_RETURN(std::vector<NodeVerdict> verdicts,
                      Filter(request, absl::MakeConstSpan(&node, 1)));
  return std::move(verdicts.front());
}

absl::StatusOr<NodeVerdict> Scheduler::FilterNodeWithout(
    const PodRequest& request, const std::string& node,
    absl::Span<const std::string> released) const {
  if (released.empty()) return FilterNode(request, node);
  absl::ReaderMutexLock lock(&mu_);
  DS_ASSIGN_OR_RETURN(const PodCycle cycle, path_.PreFilter(request, &state_));
  if (auto why = QuotaRefusal(request, LeastQuotaUseOf(request))) {
    return QuotaRefusedVerdicts(state_, absl::MakeConstSpan(&node, 1), *why)
        .front();
  }
  const NodeState* found = state_.FindNode(node);
  if (found == nullptr) return DecisionPath::UnknownNode(node);
  NodeState copy = *found;
  for (const std::string& uid : released) {
    const PodRecord* record = state_.FindPod(uid);
    if (record == nullptr || !record->on_ledger ||
        record->allocation.node_name != node) {
      continue;
    }
    for (const auto& backend : backends_.all()) backend->Release(uid, copy);
    copy.SubtractHostUsage(record->request.cpu_milli,
                           record->request.memory_mib);
  }
  return WithoutAllocation(path_.Filter(cycle, copy, /*explain=*/true));
}

absl::StatusOr<int> Scheduler::ScoreNode(const PodRequest& request,
                                         const std::string& node) const {
  DS_ASSIGN_OR_RETURN(NodeVerdict verdict, FilterNode(request, node));
  if (!verdict.fit.fits()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("pod %s does not fit node %s: %s", request.Key(), node,
                        verdict.fit.Reason()));
  }
  return verdict.score;
}

absl::StatusOr<Decision> Scheduler::Allocate(const PodRequest& request,
                                             const std::string& node) {
  DS_ASSIGN_OR_RETURN(ReserveOutcome outcome,
                      Reserve(request, absl::MakeConstSpan(&node, 1)));
  if (outcome.placed) {
    return DecisionFor(request, *std::move(outcome.placed),
                       std::move(outcome.claims), /*annotations=*/true);
  }
  Decision decision;
  const NodeFit& fit = outcome.rejected.front().fit;
  decision.reasons[node] = fit.Reason();
  decision.reason_counts[std::string(ReasonCodeName(fit.code))] = 1;
  return decision;
}

absl::StatusOr<ReserveOutcome> Scheduler::Reserve(
    const PodRequest& request, absl::Span<const std::string> candidates,
    bool replace) {
  absl::MutexLock lock(&mu_);
  DS_ASSIGN_OR_RETURN(const PodCycle cycle, path_.PreFilter(request, &state_));
  const PodRecord* existing = state_.FindPod(request.uid);
  if (existing == nullptr) return ReserveLocked(cycle, candidates);
  if (!replace) {
    return absl::AlreadyExistsError(absl::StrFormat(
        "pod %s (uid %s) is already placed on node %s", request.Key(),
        request.uid, existing->allocation.node_name));
  }
  ReserveOutcome outcome;
  outcome.replaced = existing->allocation;
  const PodRequest old_request = existing->request;
  state_.RemovePod(request.uid);
  DS_ASSIGN_OR_RETURN(ReserveOutcome placed, ReserveLocked(cycle, candidates));
  // Nothing else fits: put back exactly what was released. The ledger is
  // as it was a moment ago, so this cannot fail to fit.
  if (!placed.placed && !state_.AddPod(old_request, *outcome.replaced).ok()) {
    outcome.replaced.reset();
  }
  outcome.placed = std::move(placed.placed);
  outcome.rejected = std::move(placed.rejected);
  return outcome;
}

absl::StatusOr<ReserveOutcome> Scheduler::ReserveLocked(
    const PodCycle& cycle, absl::Span<const std::string> candidates) {
  const PodRequest& request = cycle.pod();
  absl::MutexLock memory_lock(&memory_mu_);
  VerdictMemory::PodVerdicts* remembered =
      memory_->FindPod(request.uid, ScoresVersion(policies_, cycle));
  ReserveOutcome outcome;
  for (const std::string& name : candidates) {
    const NodeState* node = state_.FindNode(name);
    if (node == nullptr) {
      outcome.rejected.push_back(DecisionPath::UnknownNode(name));
      continue;
    }
    // The filter step's allocation, while the node is as it was then.
    const VerdictMemory::PodEntry* entry = nullptr;
    if (remembered != nullptr) {
      auto it = remembered->find(node);
      if (it != remembered->end()) entry = &it->second;
    }
    NodeVerdict verdict;
    if (entry != nullptr && entry->version == state_.NodeVersion(*node) &&
        (!entry->verdict.fit.fits() ||
         !entry->verdict.fit.allocation.node_name.empty())) {
      verdict = entry->verdict;
    } else {
      verdict = path_.Filter(cycle, *node, /*explain=*/true);
    }
    if (verdict.fit.fits()) {
      if (auto why =
              QuotaRefusal(request, QuotaUseOf(verdict.fit.allocation))) {
        verdict.fit = QuotaUnfit(*why);
      }
    }
    if (verdict.fit.fits() &&
        state_.AddPod(request, verdict.fit.allocation, &verdict.claims).ok()) {
      memory_->ForgetPod(request.uid);
      outcome.claims = ClaimsOf(request, verdict);
      outcome.placed = std::move(verdict);
      return outcome;
    }
    outcome.rejected.push_back(std::move(verdict));
  }
  return outcome;
}

void Scheduler::Release(absl::string_view pod_uid) {
  // The pod's remembered verdicts stay: only its own node changes, and its
  // version with it, so the others still hold (a host that releases a pod
  // to filter it again, as the extender does, keeps them).
  absl::MutexLock lock(&mu_);
  state_.RemovePod(pod_uid);
}

absl::Status Scheduler::Bind(const PodRequest& request,
                             const PodAllocation& allocation) {
  absl::MutexLock lock(&mu_);
  return state_.AddPod(request, allocation);
}

absl::StatusOr<bool> Scheduler::AddBoundPod(
    const PodRequest& request,
    const std::map<std::string, std::string>& annotations,
    const std::string& node, std::vector<absl::Status>* unread) {
  std::vector<absl::Status> ignored;
  DS_ASSIGN_OR_RETURN(
      std::optional<PodAllocation> allocation,
      AllocationFromAnnotations(request, annotations, node,
                                config_.device.memory_factor,
                                unread != nullptr ? unread : &ignored));
  if (!allocation) return false;
  DS_RETURN_IF_ERROR(Bind(request, *allocation));
  return true;
}

absl::StatusOr<std::vector<std::string>> Scheduler::UpsertNode(
    NodeInventory inventory) {
  absl::MutexLock lock(&mu_);
  return state_.UpsertNode(std::move(inventory));
}

void Scheduler::RemoveNode(absl::string_view name) {
  absl::MutexLock lock(&mu_);
  state_.RemoveNode(name);
}

void Scheduler::UpsertDeviceClass(dra::DeviceClass device_class) {
  absl::MutexLock lock(&mu_);
  state_.UpsertDeviceClass(std::move(device_class));
}

void Scheduler::RemoveDeviceClass(const std::string& name) {
  absl::MutexLock lock(&mu_);
  state_.RemoveDeviceClass(name);
}

absl::Status Scheduler::UpsertResourceSlice(dra::ResourceSlice slice) {
  absl::MutexLock lock(&mu_);
  return state_.UpsertResourceSlice(std::move(slice));
}

void Scheduler::RemoveResourceSlice(const std::string& name) {
  absl::MutexLock lock(&mu_);
  state_.RemoveResourceSlice(name);
}

absl::Status Scheduler::UpsertResourceClaim(dra::ResourceClaim claim) {
  absl::MutexLock lock(&mu_);
  return state_.UpsertResourceClaim(std::move(claim));
}

void Scheduler::RemoveResourceClaim(const std::string& key) {
  absl::MutexLock lock(&mu_);
  state_.RemoveResourceClaim(key);
}

void Scheduler::UpsertQuota(GpuQuota quota) {
  absl::MutexLock lock(&mu_);
  state_.UpsertQuota(std::move(quota));
}

void Scheduler::RemoveQuota(absl::string_view namespace_name,
                            absl::string_view name) {
  absl::MutexLock lock(&mu_);
  state_.RemoveQuota(namespace_name, name);
}

std::optional<std::string> Scheduler::QuotaRefusal(
    const PodRequest& request, const GpuQuotaUse& want) const {
  const GpuQuotaLimits limits = state_.QuotaLimits(request.namespace_name);
  if (!limits.memory_mib && !limits.cores) return std::nullopt;
  GpuQuotaUse used = state_.QuotaUse(request.namespace_name);
  if (const PodRecord* own = state_.FindPod(request.uid)) {
    used -= QuotaUseOf(own->allocation);
  }
  return QuotaExcess(request.namespace_name, limits, used, want);
}

Decision Scheduler::QuotaRefused(const std::string& why,
                                 const ScheduleOptions& options) const {
  std::vector<std::string> nodes = options.candidates;
  if (nodes.empty()) {
    for (const NodeState* node : state_.nodes_by_name()) {
      nodes.push_back(node->name());
    }
  }
  std::sort(nodes.begin(), nodes.end());
  Decision decision;
  for (size_t i = 0; i < nodes.size() && i < options.max_explained_nodes; ++i) {
    decision.reasons[nodes[i]] = why;
  }
  if (options.count_reasons && !nodes.empty()) {
    decision.reason_counts[std::string(ReasonCodeName(
        ReasonCode::kQuotaExceeded))] = static_cast<int64_t>(nodes.size());
  }
  return decision;
}

std::optional<std::string> Scheduler::PodNode(absl::string_view pod_uid) const {
  absl::ReaderMutexLock lock(&mu_);
  const PodRecord* record = state_.FindPod(pod_uid);
  if (record == nullptr) return std::nullopt;
  return record->allocation.node_name;
}

absl::StatusOr<ContainerEdits> Scheduler::Edits(
    const PodAllocation& allocation, size_t container_index,
    const EditOptions& options) const {
  if (container_index >= allocation.containers.size()) {
    return absl::OutOfRangeError(absl::StrFormat(
        "pod %s: container index %d, the allocation has %d containers",
        allocation.pod_key, container_index, allocation.containers.size()));
  }
  const ContainerAllocation& container = allocation.containers[container_index];
  // No backend serves a container that was granted no GPU.
  if (container.devices.empty()) {
    return GpulessContainerEdits(config_.device.overwrite_env);
  }
  const SharingMode mode = container.devices.front().mode;
  const SharingBackend* backend = backends_.ForMode(mode);
  if (backend == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrFormat("pod %s: sharing mode %s is not enabled",
                        allocation.pod_key, SharingModeName(mode)));
  }
  return backend->Edits(container, options);
}

void Scheduler::Inspect(
    const std::function<void(const ClusterState&)>& reader) const {
  absl::ReaderMutexLock lock(&mu_);
  reader(state_);
}

std::vector<NodeVerdict> Scheduler::FilterFreshForTest(
    const PodRequest& request, absl::Span<const std::string> node_names) const {
  absl::ReaderMutexLock lock(&mu_);
  absl::StatusOr<PodCycle> cycle = path_.PreFilter(request, &state_);
  if (!cycle.ok()) return {};
  std::vector<NodeVerdict> verdicts;
  if (node_names.empty()) {
    for (const NodeState* node : state_.nodes_by_name()) {
      verdicts.push_back(path_.Filter(*cycle, *node, /*explain=*/true));
    }
    return verdicts;
  }
  for (const std::string& name : node_names) {
    const NodeState* node = state_.FindNode(name);
    verdicts.push_back(node == nullptr
                           ? DecisionPath::UnknownNode(name)
                           : path_.Filter(*cycle, *node, /*explain=*/true));
  }
  return verdicts;
}

}  // namespace deviceshare
