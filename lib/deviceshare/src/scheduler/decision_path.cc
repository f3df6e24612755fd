#include "deviceshare/scheduler/decision_path.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/types/span.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/dra/dra_reasons.h"
#include "deviceshare/policy/builtin_policies.h"
#include "deviceshare/policy/policy_chain.h"
#include "deviceshare/policy/scoring_weights.h"
#include "deviceshare/policy/stranded_capacity.h"
#include "deviceshare/status_macros.h"

namespace deviceshare {
namespace {

NodeFit Unfit(ReasonCode code, std::string message) {
  NodeFit fit;
  fit.code = code;
  fit.message = std::move(message);
  return fit;
}

// Formats only when the caller wants the text.
template <typename... Args>
std::string MaybeFormat(bool explain, const absl::FormatSpec<Args...>& format,
                        const Args&... args) {
  return explain ? absl::StrFormat(format, args...) : std::string();
}

// The host's verdict for a node whose CPU or memory is short.
NodeFit HostUnfit(ReasonCode code, const PodRequest& request,
                  const NodeState& node, bool explain) {
  const NodeInventory& inventory = node.inventory();
  if (code == ReasonCode::kInsufficientCpu) {
    return Unfit(code, MaybeFormat(explain, "InsufficientCpu free=%dm want=%dm",
                                   inventory.cpu_milli - node.used_cpu_milli(),
                                   request.cpu_milli));
  }
  return Unfit(
      code, MaybeFormat(explain, "InsufficientNodeMemory free=%dMiB want=%dMiB",
                        inventory.memory_mib - node.used_memory_mib(),
                        request.memory_mib));
}

// The GPU count resource the pod asks by that `node` does not advertise,
// or nullptr (also when the node advertises none: not known).
const std::string* UnservedResource(const PodRequest& request,
                                    const NodeInventory& node) {
  if (node.gpu_resources.empty()) return nullptr;
  for (const ContainerRequest& container : request.containers) {
    if (!container.wants_gpu() || container.count_resource.empty()) continue;
    if (!std::binary_search(node.gpu_resources.begin(),
                            node.gpu_resources.end(),
                            container.count_resource)) {
      return &container.count_resource;
    }
  }
  return nullptr;
}

// The allocation of a pod that asks for no annotated GPU: its containers,
// none with a device.
PodAllocation WithoutGpus(const PodRequest& request, const NodeState& node) {
  PodAllocation allocation;
  allocation.pod_uid = request.uid;
  allocation.pod_key = request.Key();
  allocation.node_name = node.name();
  for (size_t i = 0; i < request.containers.size(); ++i) {
    ContainerAllocation container;
    container.container_index = static_cast<int32_t>(i);
    container.name = request.containers[i].name;
    container.is_init = request.containers[i].is_init;
    allocation.containers.push_back(std::move(container));
  }
  return allocation;
}

// The device order a GPU policy asks of the DRA allocator: fuller devices
// first when it scores fuller higher (binpack), emptier first when lower
// (spread), the first that fits when it does not care.
dra::DeviceOrder DeviceOrderOf(const PlacementPolicy& policy) {
  const int full = policy.UtilisationScore(100);
  const int empty = policy.UtilisationScore(0);
  if (full > empty) return dra::DeviceOrder::kBestFit;
  if (full < empty) return dra::DeviceOrder::kSpread;
  return dra::DeviceOrder::kFirstFit;
}

ReasonCode ClaimsCode(dra::ClaimsOnNode::Outcome outcome) {
  using Outcome = dra::ClaimsOnNode::Outcome;
  switch (outcome) {
    case Outcome::kFits:
      return ReasonCode::kFits;
    case Outcome::kClaimNotReady:
      return dra::kClaimNotReady;
    case Outcome::kClaimElsewhere:
      return dra::kClaimElsewhere;
    case Outcome::kNoDevices:
      return dra::kNoDraDevices;
    case Outcome::kDevicesUnavailable:
      return dra::kDevicesUnavailable;
  }
  return dra::kDevicesUnavailable;
}

// kAsAsked when every backend that may serve the pod says its grants charge
// as asked; a pod none may serve has no grants to bound.
GrantCharges GrantChargesOf(absl::Span<const SharingBackend* const> backends) {
  const bool as_asked =
      !backends.empty() &&
      std::all_of(backends.begin(), backends.end(),
                  [](const SharingBackend* backend) {
                    return backend->grant_charges() == GrantCharges::kAsAsked;
                  });
  return as_asked ? GrantCharges::kAsAsked : GrantCharges::kUpToWholeGpu;
}

}  // namespace

// The reason counts of a failed pod over several buckets: each code's
// count and its first node by name.
class DecisionPath::ReasonTally {
 public:
  // `count` nodes more, of which `node` is the first by name.
  void Add(ReasonCode code, int64_t count, const NodeState* node) {
    CodeCount* known = Find(code);
    if (known == nullptr) {
      codes_.push_back(CodeCount{code, count, node});
      return;
    }
    known->count += count;
    if (node->name() < known->first->name()) known->first = node;
  }
  // One node more, met after every node added so far by name.
  void AddNext(ReasonCode code, const NodeState* node) {
    CodeCount* known = Find(code);
    if (known == nullptr) {
      codes_.push_back(CodeCount{code, 1, node});
    } else {
      ++known->count;
    }
  }
  const absl::InlinedVector<CodeCount, 8>& codes() const { return codes_; }

 private:
  CodeCount* Find(ReasonCode code) {
    for (CodeCount& known : codes_) {
      if (known.code == code) return &known;
    }
    return nullptr;
  }

  absl::InlinedVector<CodeCount, 8> codes_;
};

DecisionPath::DecisionPath(const Config* config, const BackendSet* backends,
                           const PolicySet* policies)
    : config_(config),
      backends_(backends),
      policies_(policies),
      twins_(std::make_shared<BucketTwins>()) {}

const PlacementPolicy* DecisionPath::PolicyFor(
    const std::optional<std::string>& name, const PlacementPolicy& fallback,
    const PlacementPolicy& unknown) const {
  if (!name) return &fallback;
  const PlacementPolicy* policy = policies_->Find(*name);
  return policy != nullptr ? policy : &unknown;
}

absl::Status DecisionPath::ChooseGpuPolicy(const PodRequest& request,
                                           PodCycle& cycle) const {
  std::optional<DeviceScoringWeights> weights;
  if (request.scoring_weights) {
    absl::StatusOr<DeviceScoringWeights> read = ParseDeviceScoringWeights(
        *request.scoring_weights, keys::kHamiDeviceScoringWeights);
    if (!read.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "pod %s: %s", request.Key(), read.status().message()));
    }
    weights = *read;
  }
  const bool chain =
      request.gpu_policy && absl::StrContains(*request.gpu_policy, ',');
  if (!chain && !weights) {
    cycle.placement.gpu_policy =
        PolicyFor(request.gpu_policy, policies_->gpu_default(), SpreadPolicy());
    return absl::OkStatus();
  }
  // In a chain HAMi skips the words it does not know (gpuSortKeyChain);
  // a chain left with none ranks as spread.
  std::vector<const PlacementPolicy*> parts;
  if (!request.gpu_policy) parts.push_back(&policies_->gpu_default());
  if (request.gpu_policy) {
    for (absl::string_view name : absl::StrSplit(*request.gpu_policy, ',')) {
      const PlacementPolicy* part = policies_->Find(name);
      if (part != nullptr) parts.push_back(part);
    }
  }
  if (parts.empty()) parts.push_back(&SpreadPolicy());
  cycle.own_gpu_policy = MakePolicyChain(
      std::move(parts), weights.value_or(DeviceScoringWeights{}),
      request.numa_bind, /*written_as_list=*/chain);
  cycle.placement.gpu_policy = cycle.own_gpu_policy.get();
  return absl::OkStatus();
}

absl::StatusOr<PodCycle> DecisionPath::PreFilter(
    const PodRequest& request, const ClusterState* state) const {
  PodCycle cycle;
  cycle.request = &request;
  if (request.mode && !backends_->Knows(*request.mode)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "pod %s: sharing mode \"%s\" (its vgpu-mode annotation) is not one "
        "any backend serves (registered: %s)",
        request.Key(), request.mode->name(), backends_->KnownNames()));
  }
  cycle.placement.pod = &request;
  policies_->ObservePod(request);
  cycle.placement.node_policy = PolicyFor(
      request.node_policy, policies_->node_default(), BinpackPolicy());
  DS_RETURN_IF_ERROR(ChooseGpuPolicy(request, cycle));
  for (const auto& backend : backends_->all()) {
    if (request.AcceptsMode(backend->mode())) {
      cycle.backends.push_back(backend.get());
    }
  }
  // Of those, the backends of modes some registered GPU runs, if any: the
  // others can grant no GPU anywhere (every mode is enabled unless
  // scheduler.modes narrows them) and would only widen the search.
  auto unused = [state](const SharingBackend* backend) {
    return !state->HasGpusInMode(backend->mode());
  };
  if (state != nullptr &&
      !std::all_of(cycle.backends.begin(), cycle.backends.end(), unused)) {
    cycle.backends.erase(
        std::remove_if(cycle.backends.begin(), cycle.backends.end(), unused),
        cycle.backends.end());
  }
  cycle.grant_charges = GrantChargesOf(cycle.backends);
  if (request.HasClaims()) {
    cycle.dra = state != nullptr ? &state->dra() : nullptr;
    cycle.device_order = DeviceOrderOf(*cycle.placement.gpu_policy);
    cycle.claim_keys = ClaimKeysOf(request);
    for (const PodClaim& claim : request.claims) {
      if (claim.claim_name.empty()) {
        cycle.claims_unready = absl::StrFormat(
            "claim %s of pod %s (template %s) is not created yet", claim.name,
            request.Key(), claim.template_name);
        break;
      }
    }
    if (cycle.dra == nullptr && cycle.claims_unready.empty()) {
      cycle.claims_unready = "no DRA objects are known here";
    }
  }
  return cycle;
}

std::vector<const NodeState*> DecisionPath::ClaimCandidates(
    const PodCycle& cycle, const ClusterState& state) {
  if (cycle.pod().HasGpuRequest() || cycle.dra == nullptr) {
    return state.nodes_by_name();
  }
  std::vector<const NodeState*> nodes;
  for (const std::string& key : cycle.claim_keys) {
    const dra::ClaimEntry* entry = cycle.dra->FindClaim(key);
    if (entry != nullptr && entry->allocation &&
        !entry->allocation->node_name.empty()) {
      const NodeState* node = state.FindNode(entry->allocation->node_name);
      if (node != nullptr) nodes.push_back(node);
      return nodes;
    }
  }
  for (const std::string& name : cycle.dra->Nodes()) {
    const NodeState* node = state.FindNode(name);
    if (node != nullptr) nodes.push_back(node);
  }
  return nodes;
}

NodeVerdict DecisionPath::UnknownNode(absl::string_view name) {
  NodeVerdict verdict;
  verdict.node = std::string(name);
  verdict.fit = Unfit(
      ReasonCode::kNodeUnknown,
      absl::StrFormat("NodeUnknown node %s has not registered GPUs", name));
  return verdict;
}

NodeVerdict DecisionPath::Filter(const PodCycle& cycle, const NodeState& node,
                                 bool explain) const {
  const PodRequest& request = cycle.pod();
  NodeVerdict verdict;
  verdict.node = node.name();
  const ReasonCode host = HostCode(request, node);
  if (host != ReasonCode::kFits) {
    verdict.fit = HostUnfit(host, request, node, explain);
    return verdict;
  }
  if (const std::string* resource =
          UnservedResource(request, node.inventory())) {
    verdict.fit = Unfit(
        ReasonCode::kResourceNotServed,
        MaybeFormat(explain, "ResourceNotServed node=%s advertises %s, not %s",
                    node.name(),
                    absl::StrJoin(node.inventory().gpu_resources, ","),
                    *resource));
    return verdict;
  }
  if (request.HasGpuRequest() || !request.HasClaims()) {
    FilterGpus(cycle, node, explain, verdict);
  } else {
    verdict.fit.allocation = WithoutGpus(request, node);
  }
  if (request.HasClaims() && verdict.fit.fits()) {
    FilterClaims(cycle, node, verdict);
  }
  return verdict;
}

ReasonCode DecisionPath::FilterCode(const PodCycle& cycle,
                                    const NodeState& node) const {
  const ReasonCode host = HostCode(cycle.pod(), node);
  if (host != ReasonCode::kFits) return host;
  return GpuFilterCode(cycle, node);
}

ReasonCode DecisionPath::GpuFilterCode(const PodCycle& cycle,
                                       const NodeState& node) const {
  const PodRequest& request = cycle.pod();
  // Claims are filtered after the GPUs fit: the whole verdict decides.
  if (request.HasClaims()) {
    return Filter(cycle, node, /*explain=*/false).fit.code;
  }
  if (UnservedResource(request, node.inventory()) != nullptr) {
    return ReasonCode::kResourceNotServed;
  }
  if (cycle.backends.empty()) return ReasonCode::kModeMismatch;
  // FilterGpus: the node fits when any backend fits; else the first
  // backend's code explains it.
  ReasonCode first = ReasonCode::kFits;
  for (const SharingBackend* backend : cycle.backends) {
    const ReasonCode code = backend->FilterCode(request, node, cycle.placement);
    if (code == ReasonCode::kFits) return code;
    if (backend == cycle.backends.front()) first = code;
  }
  return first;
}

void DecisionPath::FilterGpus(const PodCycle& cycle, const NodeState& node,
                              bool explain, NodeVerdict& verdict) const {
  const PodRequest& request = cycle.pod();
  if (cycle.backends.empty()) {
    verdict.fit = Unfit(
        ReasonCode::kModeMismatch,
        absl::StrFormat("ModeMismatch mode %s is not enabled in this scheduler",
                        request.mode ? SharingModeName(*request.mode)
                                     : absl::string_view(request.modes_text)));
    return;
  }
  PlacementOptions options = cycle.placement;
  options.explain = explain;
  // The fit that strands the least capacity wins, then the higher score,
  // then config order; the first backend's verdict explains a node where
  // none fits.
  const bool explain_choice =
      explain && !request.NamesMode() && backends_->all().size() > 1;
  bool found = false;
  NodeFit unfit;
  std::vector<std::string> considered;
  for (const SharingBackend* backend : cycle.backends) {
    NodeFit fit = backend->Filter(request, node, options);
    if (!fit.fits()) {
      if (explain_choice) {
        considered.push_back(absl::StrFormat(
            "%s: %s", SharingModeName(backend->mode()), fit.Reason()));
      }
      if (backend == cycle.backends.front()) unfit = std::move(fit);
      continue;
    }
    const int stranded = StrandedPercent(request, fit.allocation, node);
    const int score = backend->Score(node, fit.allocation, options);
    if (explain_choice) {
      considered.push_back(absl::StrFormat("%s: fits, strands %d%%, score %d",
                                           SharingModeName(backend->mode()),
                                           stranded, score));
    }
    if (!found || stranded < verdict.stranded_percent ||
        (stranded == verdict.stranded_percent && score > verdict.score)) {
      found = true;
      verdict.fit = std::move(fit);
      verdict.mode = backend->mode();
      verdict.stranded_percent = stranded;
      verdict.score = score;
    }
  }
  if (!found) {
    verdict.fit = std::move(unfit);
  } else if (considered.size() > 1) {
    verdict.mode_choice = absl::StrFormat(
        "mode %s chosen (least stranded capacity) from %s",
        SharingModeName(verdict.mode), absl::StrJoin(considered, "; "));
  }
}

void DecisionPath::FilterClaims(const PodCycle& cycle, const NodeState& node,
                                NodeVerdict& verdict) const {
  const PodRequest& request = cycle.pod();
  if (!cycle.claims_unready.empty()) {
    verdict.fit = Unfit(dra::kClaimNotReady,
                        absl::StrCat("ClaimNotReady ", cycle.claims_unready));
    return;
  }
  dra::ClaimsOnNode claims = cycle.dra->Filter(request.uid, cycle.claim_keys,
                                               node.name(), cycle.device_order);
  if (claims.outcome != dra::ClaimsOnNode::Outcome::kFits) {
    const ReasonCode code = ClaimsCode(claims.outcome);
    verdict.fit = Unfit(code, absl::StrFormat("%s node %s: %s", code.name(),
                                              node.name(), claims.reason));
    return;
  }
  const int score =
      cycle.placement.node_policy->UtilisationScore(claims.utilisation_after);
  verdict.score = request.HasGpuRequest() ? (verdict.score + score) / 2 : score;
  verdict.claims = std::move(claims.allocations);
}

ReasonCode DecisionPath::HostCode(const PodRequest& request,
                                  const NodeState& node) {
  const int64_t cpu_milli = node.cpu_capacity_milli();
  if (cpu_milli > 0 && node.used_cpu_milli() + request.cpu_milli > cpu_milli) {
    return ReasonCode::kInsufficientCpu;
  }
  const int64_t memory_mib = node.memory_capacity_mib();
  if (memory_mib > 0 &&
      node.used_memory_mib() + request.memory_mib > memory_mib) {
    return ReasonCode::kInsufficientNodeMemory;
  }
  return ReasonCode::kFits;
}

int DecisionPath::UpperBound(const PodCycle& cycle,
                             const NodeState& node) const {
  int bound = -1;
  for (const SharingBackend* backend : cycle.backends) {
    bound = std::max(
        bound, backend->ScoreUpperBound(cycle.pod(), node, cycle.placement));
  }
  return std::min(bound, 100);
}

bool DecisionPath::MayFitHeadroom(const PodCycle& cycle, const NodeShape& shape,
                                  const GpuHeadroom& headroom) const {
  for (const SharingBackend* backend : cycle.backends) {
    if (backend->MayFitHeadroom(cycle.pod(), shape, headroom)) return true;
  }
  return false;
}

bool DecisionPath::MayFit(const PodCycle& cycle, const NodeState& node) const {
  if (HostCode(cycle.pod(), node) != ReasonCode::kFits) return false;
  for (const SharingBackend* backend : cycle.backends) {
    if (backend->MayFit(cycle.pod(), node)) return true;
  }
  return false;
}

std::optional<NodeVerdict> DecisionPath::SearchClaims(
    const PodCycle& cycle, const ClusterState& state) const {
  std::optional<NodeVerdict> best;
  for (const NodeState* node : ClaimCandidates(cycle, state)) {
    NodeVerdict verdict = Filter(cycle, *node, /*explain=*/true);
    if (verdict.fit.fits() && (!best || BetterVerdict(verdict, *best))) {
      best = std::move(verdict);
    }
  }
  return best;
}

// The buckets of one shape and utilisation of the cluster's node index
// (adjacent in it: headroom classes and name ranges), which share a score
// bound.
struct DecisionPath::BucketRun {
  int bound;
  int utilisation;
  size_t position;  // in the index's order
  const NodeShape* shape;
  std::map<BucketKey, IndexBucket>::const_iterator begin;
  std::map<BucketKey, IndexBucket>::const_iterator end;
};

void DecisionPath::RunsFor(const PodCycle& cycle, const ClusterState& state,
                           std::vector<BucketRun>& runs) const {
  runs.clear();
  for (const auto& [shape, group] : state.shape_groups()) {
    auto at = group.buckets.begin();
    while (at != group.buckets.end()) {
      const int utilisation = at->first.utilisation;
      // The first bucket of a higher utilisation: keys order by it first.
      const auto end = group.buckets.lower_bound(
          BucketKey{utilisation + 1, std::numeric_limits<int>::min(),
                    std::numeric_limits<int>::min(), std::string()});
      int bound = -1;
      for (const SharingBackend* backend : cycle.backends) {
        bound = std::max(
            bound, backend->ShapeScoreBound(cycle.pod(), shape, utilisation,
                                            cycle.placement));
      }
      if (bound >= 0) {
        runs.push_back(BucketRun{std::min(bound, 100), utilisation, runs.size(),
                                 &shape, at, end});
      }
      at = end;
    }
  }
  // Equal bounds: the fuller run first, then index order (std::sort with
  // the position as the last key: a stable sort would allocate). The order
  // does not change the result of a full search, only how soon the bounds
  // prune it; a search with a node budget scores the fullest nodes that
  // fit.
  std::sort(runs.begin(), runs.end(),
            [](const BucketRun& a, const BucketRun& b) {
              if (a.bound != b.bound) return a.bound > b.bound;
              if (a.utilisation != b.utilisation)
                return a.utilisation > b.utilisation;
              return a.position < b.position;
            });
}

bool DecisionPath::BucketMayHold(const PodCycle& cycle, const NodeShape& shape,
                                 const IndexBucket& bucket,
                                 const BucketTallies* tallies) const {
  if (!bucket.max_host.Holds(cycle.pod().cpu_milli, cycle.pod().memory_mib) ||
      !MayFitHeadroom(cycle, shape, bucket.max_headroom)) {
    return false;
  }
  if (tallies != nullptr && tallies->size() > 0) {
    const BucketTally* tally = tallies->Find(bucket);
    if (tally != nullptr && !tally->AnyFits()) return false;
  }
  return true;
}

std::optional<NodeVerdict> DecisionPath::Search(
    const PodCycle& cycle, const ClusterState& state,
    const BucketTallies* tallies) const {
  // Pods with claims: the index below is of annotated GPUs only.
  if (cycle.pod().HasClaims()) return SearchClaims(cycle, state);
  // The cluster state keeps nodes grouped by shape and utilisation; each
  // (shape, utilisation) run of buckets gets an upper bound of its nodes'
  // scores from the backends (through the node policy's ScoreBound), and
  // runs are visited best bound first (RunsFor); a bucket whose largest
  // host room or GPU headroom cannot hold the pod is skipped whole
  // (BucketMayHold). Within a bucket (names ascending) each node is first
  // tested against the host room and GPU headroom stored beside it, then,
  // once there is a best to beat, gets its own O(1) bound, then the
  // backends' cheap MayFit() test, then Filter(). A node whose bound is
  // below the best score found cannot win, and one whose bound equals it
  // can only win the tie on a smaller name, so the result is the node a
  // full scan picks (see BetterVerdict()). Nor can a node whose twin
  // (bucket_twins.h: untouched, the same inventory) comes before it, in its
  // bucket or an earlier one of its class: only the first is visited. A
  // bucket whose current tally (bucket_tally.h) says no node fits is
  // skipped.
  const PodRequest& pod = cycle.pod();
  const int64_t budget = cycle.placement.node_policy->feasible_nodes_to_score();
  // A budget counts the nodes scored, which skipping twins would change;
  // a pod that names GPUs by uuid tells twins apart.
  const bool skip_twins =
      budget == 0 && pod.use_uuids.empty() && pod.avoid_uuids.empty();
  int64_t feasible = 0;
  // A placement that strands capacity can lose to any node that strands
  // less, whatever its score; the score bounds prune only once the best
  // strands nothing (always, with hami-core and mps).
  std::optional<NodeVerdict> best;
  auto cannot_win = [&](int bound, const NodeState& node) {
    return best && best->stranded_percent == 0 &&
           (bound < best->score ||
            (bound == best->score && node.name() >= best->node));
  };
  // Kept between searches on this thread: a list of the index's runs per
  // decision would otherwise be allocated and freed each time.
  thread_local std::vector<BucketRun> runs;
  TwinsMet met;
  RunsFor(cycle, state, runs);
  for (const BucketRun& run : runs) {
    if (best && best->stranded_percent == 0 && run.bound < best->score) {
      break;
    }
    for (auto bucket = run.begin; bucket != run.end; ++bucket) {
      // Its nodes' names start at first_name: none of them can win a tie.
      if (best && best->stranded_percent == 0 && run.bound == best->score &&
          bucket->first.first_name >= best->node) {
        continue;
      }
      if (!BucketMayHold(cycle, *run.shape, bucket->second, tallies)) continue;
      const std::vector<IndexedNode>& nodes = bucket->second.nodes;
      std::shared_ptr<const BucketTwins::Visits> visit;
      if (skip_twins) visit = twins_->Visit(state, bucket->second);
      const size_t count =
          visit != nullptr ? visit->positions.size() : nodes.size();
      for (size_t i = 0; i < count; ++i) {
        const IndexedNode& entry =
            nodes[visit != nullptr ? visit->positions[i] : i];
        const NodeState& node = *entry.node;
        if (cannot_win(run.bound, node)) break;  // names ascending
        if (visit != nullptr && met.MetBefore(*visit, i)) continue;
        if (!entry.host.Holds(pod.cpu_milli, pod.memory_mib) ||
            !MayFitHeadroom(cycle, *run.shape, entry.headroom)) {
          continue;
        }
        // The node's own bound matters only once there is a best to beat.
        if (best && cannot_win(UpperBound(cycle, node), node)) continue;
        // The node policy's bound with the node in view (fragmentation); not
        // under a budget, which counts the nodes scored and would count
        // fewer.
        if (best && budget == 0 &&
            cannot_win(cycle.placement.node_policy->NodeScoreBoundFor(
                           pod, node, cycle.grant_charges),
                       node)) {
          continue;
        }
        if (!MayFit(cycle, node)) continue;
        NodeVerdict verdict = Filter(cycle, node, /*explain=*/true);
        if (!verdict.fit.fits()) continue;
        if (!best || BetterVerdict(verdict, *best)) best = std::move(verdict);
        if (budget > 0 && ++feasible >= budget) return best;
      }
    }
  }
  return best;
}

void DecisionPath::Explain(const PodCycle& cycle,
                           const std::vector<const NodeState*>& nodes,
                           const ScheduleOptions& options,
                           Decision& decision) const {
  // Codes for every node, cheaply; full text for a chosen few. A failed pod
  // is classified on every node: the tally is a short list, not a map.
  ReasonTally reasons;
  if (options.count_reasons) {
    for (const NodeState* node : nodes) {
      reasons.AddNext(FilterCode(cycle, *node), node);
    }
  }
  ExplainCounted(cycle, nodes, reasons, options, decision);
}

void DecisionPath::TallyOf(const PodCycle& cycle, const IndexBucket& bucket,
                           const BucketTally* before,
                           BucketTally& tally) const {
  tally.Clear();
  tally.version = bucket.version;
  // The blocked code kept beside each node is the one the first backend's
  // FilterCode (which explains a node where none fits) would give, for a
  // pod it applies to.
  const PodRequest& pod = cycle.pod();
  const SharingBackend* first =
      cycle.backends.empty() ? nullptr : cycle.backends.front();
  const bool blocked_applies =
      first != nullptr && first->BlockedCodeApplies(pod);
  int32_t gpus = 0;  // of the pod's one GPU container, when it applies
  for (const ContainerRequest& container : pod.containers) {
    if (container.wants_gpu()) gpus = container.gpu_count;
  }
  tally.code_at.reserve(bucket.nodes.size());
  tally.node_versions.reserve(bucket.nodes.size());
  size_t next = 0;  // in `before`
  for (const IndexedNode& entry : bucket.nodes) {
    std::optional<ReasonCode> code;
    if (before != nullptr) code = before->CodeAt(entry.version, &next);
    if (!code && blocked_applies && entry.blocked_by == first &&
        gpus <= entry.gpu_count) {
      code = entry.blocked;
    }
    if (!code) code = GpuFilterCode(cycle, *entry.node);
    tally.Add(*code, entry);
  }
}

void DecisionPath::CountBucket(const PodRequest& pod, const IndexBucket& bucket,
                               const BucketTally& tally, ReasonTally& reasons) {
  // HostCode from the host room kept beside each node (the same
  // comparisons: HostRoom::Of): CPU first, then memory.
  if (tally.min_host.Holds(pod.cpu_milli, pod.memory_mib)) {
    for (const CodeCount& entry : tally.codes) {
      reasons.Add(entry.code, entry.count, entry.first);
    }
    return;
  }
  // Nodes by name: within the bucket a code's first node is met first.
  ReasonTally here;
  for (size_t i = 0; i < bucket.nodes.size(); ++i) {
    const IndexedNode& entry = bucket.nodes[i];
    ReasonCode code = tally.codes[tally.code_at[i]].code;
    if (pod.cpu_milli > entry.host.cpu_milli) {
      code = ReasonCode::kInsufficientCpu;
    } else if (pod.memory_mib > entry.host.memory_mib) {
      code = ReasonCode::kInsufficientNodeMemory;
    }
    here.AddNext(code, entry.node);
  }
  for (const CodeCount& entry : here.codes()) {
    reasons.Add(entry.code, entry.count, entry.first);
  }
}

void DecisionPath::ExplainAll(const PodCycle& cycle, const ClusterState& state,
                              const ScheduleOptions& options,
                              BucketTallies* tallies,
                              Decision& decision) const {
  if (!options.count_reasons) {
    Explain(cycle, state.nodes_by_name(), options, decision);
    return;
  }
  const PodRequest& pod = cycle.pod();
  ReasonTally reasons;
  size_t buckets = 0;
  thread_local BucketTally scratch;  // its vectors are reused
  for (const auto& [shape, group] : state.shape_groups()) {
    for (const auto& [key, bucket] : group.buckets) {
      ++buckets;
      // Filter checks the node's CPU first: short on every node.
      if (pod.cpu_milli > bucket.max_host.cpu_milli) {
        reasons.Add(ReasonCode::kInsufficientCpu,
                    static_cast<int64_t>(bucket.nodes.size()),
                    bucket.nodes.front().node);
        continue;
      }
      if (tallies == nullptr) {
        TallyOf(cycle, bucket, nullptr, scratch);
        CountBucket(pod, bucket, scratch, reasons);
        continue;
      }
      // Kept for the next pod of the shape; a stale one lends the codes
      // of its nodes that did not change, then its room to the next.
      BucketTally& kept = tallies->For(bucket);
      if (kept.version != bucket.version) {
        TallyOf(cycle, bucket, &kept, scratch);
        std::swap(kept, scratch);
      }
      CountBucket(pod, bucket, kept, reasons);
    }
  }
  if (tallies != nullptr) tallies->Trim(buckets);
  ExplainCounted(cycle, state.nodes_by_name(), reasons, options, decision);
}

void DecisionPath::ExplainCounted(const PodCycle& cycle,
                                  const std::vector<const NodeState*>& nodes,
                                  const ReasonTally& reasons,
                                  const ScheduleOptions& options,
                                  Decision& decision) const {
  std::map<ReasonCode, const NodeState*> first;
  for (const CodeCount& entry : reasons.codes()) {
    decision.reason_counts[std::string(ReasonCodeName(entry.code))] =
        entry.count;
    first.emplace(entry.code, entry.first);
  }
  ExplainChosen(cycle, nodes, first, options, decision);
}

void DecisionPath::ExplainChosen(
    const PodCycle& cycle, const std::vector<const NodeState*>& nodes,
    const std::map<ReasonCode, const NodeState*>& first,
    const ScheduleOptions& options, Decision& decision) const {
  size_t budget = options.max_explained_nodes;
  absl::flat_hash_set<const NodeState*> chosen;
  auto explain = [&](const NodeState* node) {
    if (budget == 0 || !chosen.insert(node).second) return;
    --budget;
    decision.reasons.emplace(
        node->name(), Filter(cycle, *node, /*explain=*/true).fit.message);
  };
  for (const auto& [code, node] : first) explain(node);
  for (size_t i = 0; i < nodes.size() && budget > 0; ++i) explain(nodes[i]);
}

bool BetterVerdict(const NodeVerdict& a, const NodeVerdict& b) {
  if (a.stranded_percent != b.stranded_percent) {
    return a.stranded_percent < b.stranded_percent;
  }
  if (a.score != b.score) return a.score > b.score;
  return a.node < b.node;
}

}  // namespace deviceshare
