#include "deviceshare/scheduler/scheduler.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "deviceshare/policy/policy_kind.h"
#include "deviceshare/policy/stranded_capacity.h"
#include "deviceshare/status_macros.h"

namespace deviceshare {
namespace {

NodeFit HostUnfit(ReasonCode code, std::string message) {
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

// Everything of a request that a verdict depends on; identity (uid, name,
// namespace, dialect) is left out, so a workload's replicas share it.
std::string ShapeKey(const PodRequest& request) {
  std::string key;
  for (const ContainerRequest& c : request.containers) {
    absl::StrAppend(&key, c.is_init ? "i" : "a", c.gpu_count, ",", c.memory_mib,
                    ",", c.memory_percent, ",", c.cores, ",", c.mig_profile,
                    ";");
  }
  absl::StrAppend(
      &key, "|", request.mode ? SharingModeName(*request.mode) : "", "|",
      absl::StrJoin(request.use_models, ","), "|",
      absl::StrJoin(request.avoid_models, ","), "|",
      absl::StrJoin(request.use_uuids, ","), "|",
      absl::StrJoin(request.avoid_uuids, ","), "|", request.numa_bind, "|",
      request.node_policy ? PolicyKindName(*request.node_policy) : "", "|",
      request.gpu_policy ? PolicyKindName(*request.gpu_policy) : "", "|",
      request.cpu_milli, "|", request.memory_mib);
  return key;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(
    const Config& config, const BackendRegistry& registry) {
  DS_ASSIGN_OR_RETURN(BackendSet backends,
                      BackendSet::Create(registry, config));
  return std::unique_ptr<Scheduler>(new Scheduler(config, std::move(backends)));
}

Scheduler::Scheduler(Config config, BackendSet backends)
    : config_(std::move(config)),
      backends_(std::move(backends)),
      state_(&backends_) {}

PlacementOptions Scheduler::OptionsFor(const PodRequest& request) const {
  PlacementOptions options;
  options.node_policy =
      request.node_policy.value_or(config_.scheduler.node_policy);
  options.gpu_policy =
      request.gpu_policy.value_or(config_.scheduler.gpu_policy);
  return options;
}

NodeVerdict Scheduler::Evaluate(const PodRequest& request,
                                const NodeState& node,
                                const PlacementOptions& options) const {
  NodeVerdict verdict;
  verdict.node = node.name();
  const NodeInventory& inventory = node.inventory();
  switch (HostCode(request, node)) {
    case ReasonCode::kInsufficientCpu:
      verdict.fit = HostUnfit(
          ReasonCode::kInsufficientCpu,
          MaybeFormat(options.explain, "InsufficientCpu free=%dm want=%dm",
                      inventory.cpu_milli - node.used_cpu_milli(),
                      request.cpu_milli));
      return verdict;
    case ReasonCode::kInsufficientNodeMemory:
      verdict.fit =
          HostUnfit(ReasonCode::kInsufficientNodeMemory,
                    MaybeFormat(options.explain,
                                "InsufficientNodeMemory free=%dMiB want=%dMiB",
                                inventory.memory_mib - node.used_memory_mib(),
                                request.memory_mib));
      return verdict;
    default:
      break;
  }
  // The pod's own mode picks one backend. Without one, every enabled
  // backend is asked and the fit that strands the least capacity wins
  // (then the higher score, then config order); the first backend's
  // verdict explains a node where none fits.
  const bool explain_choice =
      options.explain && !request.mode && backends_.all().size() > 1;
  int asked = 0;
  bool found = false;
  NodeFit unfit;
  std::vector<std::string> considered;
  for (const auto& backend : backends_.all()) {
    if (!Serves(request, *backend)) continue;
    ++asked;
    NodeFit fit = backend->Filter(request, node, options);
    if (!fit.fits()) {
      if (explain_choice) {
        considered.push_back(absl::StrFormat(
            "%s: %s", SharingModeName(backend->mode()), fit.Reason()));
      }
      if (asked == 1) unfit = std::move(fit);
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
  if (found) {
    if (considered.size() > 1) {
      verdict.mode_choice = absl::StrFormat(
          "mode %s chosen (least stranded capacity) from %s",
          SharingModeName(verdict.mode), absl::StrJoin(considered, "; "));
    }
    return verdict;
  }
  verdict.fit = std::move(unfit);
  if (asked == 0) {
    verdict.fit = HostUnfit(
        ReasonCode::kModeMismatch,
        absl::StrFormat("ModeMismatch mode %s is not enabled in this scheduler",
                        SharingModeName(*request.mode)));
  }
  return verdict;
}

std::vector<NodeVerdict> Scheduler::FilterLocked(
    const PodRequest& request, absl::Span<const std::string> node_names,
    bool explain) const {
  PlacementOptions options = OptionsFor(request);
  options.explain = explain;
  std::vector<NodeVerdict> verdicts;
  if (node_names.empty()) {
    verdicts.reserve(state_.nodes().size());
    for (const auto& [name, node] : state_.nodes()) {
      verdicts.push_back(Evaluate(request, *node, options));
    }
    return verdicts;
  }
  verdicts.reserve(node_names.size());
  for (const std::string& name : node_names) {
    const NodeState* node = state_.FindNode(name);
    if (node == nullptr) {
      NodeVerdict verdict;
      verdict.node = name;
      verdict.fit = HostUnfit(
          ReasonCode::kNodeUnknown,
          absl::StrFormat("NodeUnknown node %s has not registered GPUs", name));
      verdicts.push_back(std::move(verdict));
      continue;
    }
    verdicts.push_back(Evaluate(request, *node, options));
  }
  return verdicts;
}

std::vector<NodeVerdict> Scheduler::Filter(
    const PodRequest& request, absl::Span<const std::string> node_names,
    bool explain) const {
  absl::ReaderMutexLock lock(&mu_);
  return FilterLocked(request, node_names, explain);
}

std::vector<NodeVerdict> Scheduler::Screen(
    const PodRequest& request, absl::Span<const std::string> node_names) const {
  const std::string key = ShapeKey(request);
  PlacementOptions options = OptionsFor(request);
  options.explain = false;
  absl::ReaderMutexLock lock(&mu_);
  absl::MutexLock cache_lock(&screen_mu_);
  if (screen_cache_.size() >= kMaxScreenShapes &&
      !screen_cache_.contains(key)) {
    screen_cache_.clear();
  }
  auto& entries = screen_cache_[key];
  std::vector<NodeVerdict> verdicts;
  verdicts.reserve(node_names.size());
  for (const std::string& name : node_names) {
    NodeVerdict verdict;
    verdict.node = name;
    const NodeState* node = state_.FindNode(name);
    if (node == nullptr) {
      verdict.fit.code = ReasonCode::kNodeUnknown;
      verdicts.push_back(std::move(verdict));
      continue;
    }
    const uint64_t version = state_.NodeVersion(*node);
    ScreenEntry& entry = entries[node];
    if (entry.version != version) {
      NodeVerdict fresh = Evaluate(request, *node, options);
      entry = ScreenEntry{version, fresh.fit.code, fresh.score,
                          fresh.stranded_percent, fresh.mode};
    }
    verdict.fit.code = entry.code;
    verdict.score = entry.score;
    verdict.stranded_percent = entry.stranded_percent;
    verdict.mode = entry.mode;
    verdicts.push_back(std::move(verdict));
  }
  return verdicts;
}

bool Scheduler::Better(const NodeVerdict& a, const NodeVerdict& b) {
  if (a.stranded_percent != b.stranded_percent) {
    return a.stranded_percent < b.stranded_percent;
  }
  if (a.score != b.score) return a.score > b.score;
  return a.node < b.node;
}

bool Scheduler::Serves(const PodRequest& request,
                       const SharingBackend& backend) {
  return !request.mode || *request.mode == backend.mode();
}

ReasonCode Scheduler::HostCode(const PodRequest& request,
                               const NodeState& node) {
  const NodeInventory& inventory = node.inventory();
  if (inventory.cpu_milli > 0 &&
      node.used_cpu_milli() + request.cpu_milli > inventory.cpu_milli) {
    return ReasonCode::kInsufficientCpu;
  }
  if (inventory.memory_mib > 0 &&
      node.used_memory_mib() + request.memory_mib > inventory.memory_mib) {
    return ReasonCode::kInsufficientNodeMemory;
  }
  return ReasonCode::kFits;
}

int Scheduler::UpperBound(const PodRequest& request, const NodeState& node,
                          const PlacementOptions& options) const {
  int bound = -1;
  for (const auto& backend : backends_.all()) {
    if (!Serves(request, *backend)) continue;
    bound = std::max(bound, backend->ScoreUpperBound(request, node, options));
  }
  return std::min(bound, 100);
}

bool Scheduler::MayFitHeadroom(const PodRequest& request,
                               const NodeShape& shape,
                               const GpuHeadroom& headroom) const {
  for (const auto& backend : backends_.all()) {
    if (!Serves(request, *backend)) continue;
    if (backend->MayFitHeadroom(request, shape, headroom)) return true;
  }
  return false;
}

bool Scheduler::MayFit(const PodRequest& request, const NodeState& node) const {
  if (HostCode(request, node) != ReasonCode::kFits) return false;
  for (const auto& backend : backends_.all()) {
    if (!Serves(request, *backend)) continue;
    if (backend->MayFit(request, node)) return true;
  }
  return false;
}

void Scheduler::Explain(const PodRequest& request,
                        const PlacementOptions& placement,
                        const ScheduleOptions& options,
                        ScheduleOutcome& outcome) const {
  // Codes for every node, cheaply; full text for a chosen few.
  PlacementOptions quiet = placement;
  quiet.explain = false;
  const std::vector<const NodeState*>& nodes = state_.nodes_by_name();
  std::vector<ReasonCode> codes;
  if (options.count_reasons) {
    codes.reserve(nodes.size());
    std::array<int64_t, 32> counts{};
    for (const NodeState* node : nodes) {
      codes.push_back(Evaluate(request, *node, quiet).fit.code);
      ++counts[static_cast<size_t>(codes.back())];
    }
    for (size_t code = 0; code < counts.size(); ++code) {
      if (counts[code] == 0) continue;
      outcome.reason_counts[std::string(
          ReasonCodeName(static_cast<ReasonCode>(code)))] = counts[code];
    }
  }
  std::vector<bool> chosen(nodes.size(), false);
  std::map<ReasonCode, size_t> first_of_code;
  for (size_t i = 0; i < codes.size(); ++i) first_of_code.emplace(codes[i], i);
  size_t budget = options.max_explained_nodes;
  for (const auto& [code, i] : first_of_code) {
    if (budget == 0) break;
    chosen[i] = true;
    --budget;
  }
  for (size_t i = 0; i < nodes.size() && budget > 0; ++i) {
    if (!chosen[i]) {
      chosen[i] = true;
      --budget;
    }
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!chosen[i]) continue;
    outcome.reasons.emplace(
        nodes[i]->name(), Evaluate(request, *nodes[i], placement).fit.message);
  }
}

absl::StatusOr<ScheduleOutcome> Scheduler::Schedule(
    const PodRequest& request, const ScheduleOptions& schedule_options) {
  absl::MutexLock lock(&mu_);
  if (state_.FindPod(request.uid) != nullptr) {
    return absl::AlreadyExistsError(absl::StrFormat(
        "pod %s (uid %s) is already placed", request.Key(), request.uid));
  }
  const PlacementOptions options = OptionsFor(request);
  // Every node is considered, but only the promising ones are evaluated in
  // full. The cluster state keeps nodes grouped by shape and utilisation;
  // each (shape, utilisation) bucket gets an upper bound of its nodes'
  // scores from the backends, and buckets are visited best bound first.
  // Within a bucket (names ascending) each node is first tested against the
  // GPU headroom stored beside it, then gets its own O(1) bound, then the
  // backends' cheap MayFit() test, then Filter(). A node whose
  // bound is below the best score found cannot win, and one whose bound
  // equals it can only win the tie on a smaller name, so the result is the
  // node a full scan picks (see Better()).
  struct Bucket {
    int bound;
    const NodeShape* shape;
    const std::vector<IndexedNode>* nodes;
  };
  std::vector<Bucket> buckets;
  for (const auto& [shape, group] : state_.shape_groups()) {
    for (const auto& [key, nodes] : group.buckets) {
      if (!MayFitHeadroom(request, shape, key.MaxHeadroom())) continue;
      int bound = -1;
      for (const auto& backend : backends_.all()) {
        if (!Serves(request, *backend)) continue;
        bound = std::max(bound, backend->ShapeScoreBound(
                                    request, shape, key.utilisation, options));
      }
      if (bound >= 0) {
        buckets.push_back(Bucket{std::min(bound, 100), &shape, &nodes});
      }
    }
  }
  std::stable_sort(
      buckets.begin(), buckets.end(),
      [](const Bucket& a, const Bucket& b) { return a.bound > b.bound; });
  // A placement that strands capacity can lose to any node that strands
  // less, whatever its score; the score bounds prune only once the best
  // strands nothing (always, with hami-core and mps).
  std::optional<NodeVerdict> best;
  auto cannot_win = [&](int bound, const NodeState& node) {
    return best && best->stranded_percent == 0 &&
           (bound < best->score ||
            (bound == best->score && node.name() >= best->node));
  };
  for (const Bucket& bucket : buckets) {
    if (best && best->stranded_percent == 0 && bucket.bound < best->score) {
      break;
    }
    for (const IndexedNode& entry : *bucket.nodes) {
      const NodeState* node = entry.node;
      if (cannot_win(bucket.bound, *node)) break;  // names ascending
      if (!MayFitHeadroom(request, *bucket.shape, entry.headroom)) continue;
      if (cannot_win(UpperBound(request, *node, options), *node)) continue;
      if (!MayFit(request, *node)) continue;
      NodeVerdict verdict = Evaluate(request, *node, options);
      if (!verdict.fit.fits()) continue;
      if (!best || Better(verdict, *best)) {
        best = std::move(verdict);
      }
    }
  }
  ScheduleOutcome outcome;
  if (!best) {
    Explain(request, options, schedule_options, outcome);
    return outcome;
  }
  DS_RETURN_IF_ERROR(state_.AddPod(request, best->fit.allocation));
  outcome.score = best->score;
  outcome.mode = best->mode;
  outcome.mode_choice = std::move(best->mode_choice);
  outcome.allocation = std::move(best->fit.allocation);
  return outcome;
}

absl::StatusOr<PlaceOutcome> Scheduler::Place(
    const PodRequest& request, absl::Span<const std::string> candidates,
    bool replace) {
  absl::MutexLock lock(&mu_);
  PlaceOutcome outcome;
  if (const PodRecord* existing = state_.FindPod(request.uid)) {
    if (!replace) {
      return absl::AlreadyExistsError(absl::StrFormat(
          "pod %s (uid %s) is already placed on node %s", request.Key(),
          request.uid, existing->allocation.node_name));
    }
    outcome.replaced = existing->allocation;
    PodRequest old_request = existing->request;
    state_.RemovePod(request.uid);
    PlaceOutcome placed = PlaceLocked(request, candidates);
    // Nothing else fits: put back exactly what was released. The ledger is
    // as it was a moment ago, so this cannot fail to fit.
    if (!placed.placed && !state_.AddPod(old_request, *outcome.replaced).ok()) {
      outcome.replaced.reset();
    }
    outcome.placed = std::move(placed.placed);
    outcome.rejected = std::move(placed.rejected);
    return outcome;
  }
  return PlaceLocked(request, candidates);
}

PlaceOutcome Scheduler::PlaceLocked(const PodRequest& request,
                                    absl::Span<const std::string> candidates) {
  PlaceOutcome outcome;
  for (size_t i = 0; i < candidates.size(); ++i) {
    std::vector<NodeVerdict> verdict =
        FilterLocked(request, candidates.subspan(i, 1));
    if (verdict.front().fit.fits() &&
        state_.AddPod(request, verdict.front().fit.allocation).ok()) {
      outcome.placed = std::move(verdict.front());
      return outcome;
    }
    outcome.rejected.push_back(std::move(verdict.front()));
  }
  return outcome;
}

std::optional<std::string> Scheduler::PodNode(absl::string_view pod_uid) const {
  absl::ReaderMutexLock lock(&mu_);
  const PodRecord* record = state_.FindPod(pod_uid);
  if (record == nullptr) return std::nullopt;
  return record->allocation.node_name;
}

absl::Status Scheduler::Bind(const PodRequest& request,
                             const PodAllocation& allocation) {
  absl::MutexLock lock(&mu_);
  return state_.AddPod(request, allocation);
}

void Scheduler::Release(absl::string_view pod_uid) {
  absl::MutexLock lock(&mu_);
  state_.RemovePod(pod_uid);
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

absl::StatusOr<ContainerEdits> Scheduler::Edits(
    const PodAllocation& allocation, size_t container_index,
    const EditOptions& options) const {
  if (container_index >= allocation.containers.size()) {
    return absl::OutOfRangeError(absl::StrFormat(
        "pod %s: container index %d, the allocation has %d containers",
        allocation.pod_key, container_index, allocation.containers.size()));
  }
  const ContainerAllocation& container = allocation.containers[container_index];
  SharingMode mode = container.devices.empty() ? backends_.all().front()->mode()
                                               : container.devices.front().mode;
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

}  // namespace deviceshare
